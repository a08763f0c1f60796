"""Snakemake script: raw text -> a fixed number of round-robin shards."""

try:
    import _setup  # noqa: F401  (puts src/ on sys.path)
except ImportError:
    pass

from xling.preprocess.logs import log_result
from xling.preprocess.shards import split_shards

counts = split_shards(snakemake.input.txt, list(snakemake.output.shards))  # noqa: F821
log_result(snakemake, {"lines_per_shard": counts})  # noqa: F821
