"""Snakemake script: CC-100 .txt.xz -> non-empty text lines."""

try:
    import _setup  # noqa: F401  (puts src/ on sys.path)
except ImportError:
    pass

from xling.preprocess.extract import extract_cc
from xling.preprocess.logs import log_result

n = extract_cc(snakemake.input.cc, snakemake.output.txt)  # noqa: F821
log_result(snakemake, {"lines": n})  # noqa: F821
