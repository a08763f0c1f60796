"""`SubwordTokenizer`: segment words the way a BPE directory's pretraining text was segmented."""

from __future__ import annotations

from pathlib import Path

from xling.bpe.apply import load_codes, segment_words
from xling.bpe.manifest import read_manifest
from xling.errors import InputError


class SubwordTokenizer:
    """Built from a BPE directory's manifest (`R/bpe/<setting>/<pair>/bpe.json`, or
    `R/bpe/mono/<lang>/bpe.json`) and one of its languages."""

    def __init__(self, manifest: Path, lang: str):
        self.manifest_path = Path(manifest)
        self.lang = lang
        self.manifest = read_manifest(self.manifest_path)
        if lang not in self.manifest["languages"]:
            raise InputError(self.manifest_path, None, f"language {lang!r} among the manifest's languages",
                             ", ".join(self.manifest["languages"]))
        self.mode = self.manifest["mode"]
        self._bpe = load_codes(self.manifest_path.parent / self.manifest["codes"][lang])
        self._prefix = lang if self.mode == "per_language_prefixed" else None

    def words_to_subwords(self, words: list[str]) -> list[list[str]]:
        """One list of subwords per word; non-final pieces end in '@@', and in the No-anchors
        setting every piece carries the `<lang>_` prefix."""
        return segment_words(self._bpe, list(words), self._prefix)
