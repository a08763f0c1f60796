"""Snakemake script for rule `testbed`: generate the synthetic testbed (the demo's offline mirror).

output[0] = the mirror directory; params.testbed = config["testbed"] (scale and size overrides;
its `seed` key is passed separately as params.seed)."""

import sys
from pathlib import Path

try:
    import _setup  # noqa: F401
except ImportError:
    pass

from xling.testbed import generate

sm = snakemake  # noqa: F821
params = {k: v for k, v in dict(sm.params.testbed).items() if k != "seed"}
manifest = generate(Path(sm.output[0]), params, int(sm.params.seed))
msg = f"testbed: {len(manifest)} resources under {sm.output[0]} (seed {sm.params.seed})\n"
if sm.log:
    Path(sm.log[0]).parent.mkdir(parents=True, exist_ok=True)
    Path(sm.log[0]).write_text(msg)
print(msg, end="", file=sys.stderr)
