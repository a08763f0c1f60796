"""The report's CSV files of result rows: one header, ``\\n`` line ends, floats rounded, None empty,
written atomically."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Sequence

from xling.io import atomic_write


def write_rows_csv(rows: Sequence[dict], fields: Sequence[str], path: Path, digits: int = 4) -> None:
    with atomic_write(path) as fh:
        w = csv.DictWriter(fh, fieldnames=list(fields), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: "" if r[k] is None else round(r[k], digits) if isinstance(r[k], float) else r[k]
                        for k in fields})
