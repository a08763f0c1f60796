"""fairseq ``--user-dir`` plugin: the xling multilingual MLM task, model and optimizer.

fairseq imports this directory as a top-level module named ``fairseq_plugin`` (and would
re-import any ``tasks/`` or ``models/`` subfolder, hence the flat layout); the absolute
imports below make the registering modules load once, under ``xling.pretrain...``, whether
the plugin is reached through ``--user-dir`` or a normal ``import``."""

from xling.pretrain.fairseq_plugin import mlm_model, mlm_task, optim  # noqa: F401
from xling.pretrain.lifecycle import install_rank
from xling.pretrain.names import USER_DIR  # noqa: F401 - where fairseq is told to find this

# in a fairseq-train started by the launcher: stop signals end it with its data-loader workers
install_rank()
