"""Snakemake script: Wikipedia dump -> plain text lines (WikiExtractor)."""

try:
    import _setup  # noqa: F401  (puts src/ on sys.path)
except ImportError:
    pass

from xling.preprocess.extract import extract_wiki
from xling.preprocess.logs import log_result

n = extract_wiki(snakemake.input.dump, snakemake.output.txt, processes=snakemake.threads)  # noqa: F821
log_result(snakemake, {"lines": n})  # noqa: F821
