"""Snakemake script: tokenised shards -> filtered, deduplicated train/valid/test split.

With input ``match_train`` (Wiki-CC), the train split is a random subset holding as many tokens as
that file (the same language's Wikipedia train split)."""

try:
    import _setup  # noqa: F401  (puts src/ on sys.path)
except ImportError:
    pass

from xling.preprocess.logs import log_result
from xling.preprocess.split import SplitSettings, count_tokens, merge_and_split

sm = snakemake  # noqa: F821
match = sm.input.get("match_train")
if match and not isinstance(match, str):  # given as a one-element list
    match = match[0]
counts = merge_and_split(
    list(sm.input.shards), sm.output.train, sm.output.valid, sm.output.test,
    SplitSettings.from_config(sm.config["preprocess"]),
    train_tokens=count_tokens(match) if match else None,
)
log_result(sm, counts)
