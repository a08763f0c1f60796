"""Snakemake script: tokenise one shard (Moses chain or Chinese segmenter), one line per line."""

try:
    import _setup  # noqa: F401  (puts src/ on sys.path)
except ImportError:
    pass

from xling.preprocess.logs import log_result
from xling.preprocess.shards import tokenize_shard
from xling.preprocess.tokenize import TokenizeSettings

sm = snakemake  # noqa: F821
settings = TokenizeSettings.from_config(sm.config, sm.wildcards.lang,
                                        stanford_home=sm.params.get("stanford_home"))
n = tokenize_shard(sm.input.shard, sm.output.tok, settings, threads=sm.threads)
log_result(sm, {"lines": n, "settings": repr(settings)})
