"""What a fairseq-train command line names: the plugin's directory and the names it registers.
Importable without torch or fairseq, so the job that only builds and launches the command does
not pay their imports (seconds per job) on top of the fairseq-train process that needs them."""

from pathlib import Path

USER_DIR = str(Path(__file__).resolve().parent / "fairseq_plugin")
TASK_NAME = "xling_multilingual_mlm"
MODEL_NAME = "xling_mlm"  # its fairseq model name (checkpoints record it)
OPTIMIZER_NAME = "xling_adam"
