"""MLM pretraining with fairseq (paper 3.1, 4.3).

* ``command``: the ``fairseq-train`` command line of one job from the config;
* ``fairseq_plugin``: the ``--user-dir`` plugin (task ``xling_multilingual_mlm``, model
  ``xling_mlm`` with per-language embeddings/bottom layers, optimizer ``xling_adam``);
* ``run``: runs/resumes a job and writes ``done.json`` (workflow/scripts/pretrain.py), with
  ``checkpoints``, ``save_dir``, ``fairseq_log`` and ``processes`` (what each of its steps uses);
* ``encoder``: the model's modules in plain torch, shared by the plugin and
  :mod:`xling.model.checkpoint`, which reads a finished model for fine-tuning and analysis without
  importing fairseq (``dictionary`` reads its ``dict.txt``);
* ``sampling``, ``vocab``: the pure maths (language sampling, per-language vocabularies).

The code that builds fairseq's objects inside the process and writes tiny binarised corpora,
which only the tests and the benchmark use, lives in ``tests/support/`` (``inprocess``,
``toy_data``).
"""
