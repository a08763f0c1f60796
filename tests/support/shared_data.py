"""The real public data beside the project (``../shared/data``, read-only: its README.md), as
tests/test_taskdata.py finds it, and a skip for the tests that read a folder of it."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data"
ELTEC = SHARED / "eltec"
FREEDICT = SHARED / "freedict"
UD = SHARED / "ud-2.3"
TATOEBA = SHARED / "tatoeba-v1"
# the UD PUD treebanks: the same 1,000 sentences in each language
PUD = {lang: UD / f"UD_{name}-PUD" / f"{lang}_pud-ud-test.conllu"
       for lang, name in (("en", "English"), ("fr", "French"), ("de", "German"), ("ru", "Russian"))}


def needs(*folders: Path):
    """Skip unless every folder of ``../shared/data`` the test reads is there."""
    missing = [str(f.relative_to(SHARED.parent)) for f in folders if not f.is_dir()]
    return pytest.mark.skipif(bool(missing), reason=f"../shared/data not present: {', '.join(missing)}")
