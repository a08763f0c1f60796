"""`SubwordTokenizer`: segment words the way a BPE directory's pretraining text was segmented."""

from __future__ import annotations

from pathlib import Path

from xling.bpe.apply import load_codes, segment_words
from xling.bpe.manifest import read_manifest
from xling.errors import InputError


class SubwordTokenizer:
    """Built from `R/bpe/<setting>/<pair>/` (or `R/bpe/mono/<lang>/`) and one of its languages."""

    def __init__(self, bpe_dir: Path, lang: str):
        self.bpe_dir = Path(bpe_dir)
        self.lang = lang
        self.manifest = read_manifest(self.bpe_dir)
        if lang not in self.manifest["languages"]:
            raise InputError(self.bpe_dir / "bpe.json", None,
                             f"language {lang!r} among the manifest's languages",
                             ", ".join(self.manifest["languages"]))
        self.mode = self.manifest["mode"]
        self._bpe = load_codes(self.bpe_dir / self.manifest["codes"][lang])
        self._prefix = lang if self.mode == "per_language_prefixed" else None

    def words_to_subwords(self, words: list[str]) -> list[list[str]]:
        """One list of subwords per word; non-final pieces end in '@@', and in the No-anchors
        setting every piece carries the `<lang>_` prefix."""
        return segment_words(self._bpe, list(words), self._prefix)
