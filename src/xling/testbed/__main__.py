"""``python -m xling.testbed --out DIR [--seed N] [--scale small|tiny] [--workers N]``"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .generate import SCALES, generate


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m xling.testbed", description=__doc__)
    ap.add_argument("--out", type=Path, required=True, help="output directory (replaced)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", choices=sorted(SCALES), default="small")
    ap.add_argument("--workers", type=int, default=1, help="processes (the same bytes with any number)")
    args = ap.parse_args(argv)
    t0 = time.time()
    manifest = generate(args.out, {"scale": args.scale}, args.seed, workers=args.workers)
    print(f"wrote {len(manifest)} resources to {args.out} in {time.time() - t0:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
