"""fairseq's ``dict.txt`` read without importing fairseq (whose import costs seconds in every
short fine-tuning or analysis job). Same indices as ``fairseq.data.Dictionary.load``: the four
specials ``<s> <pad> </s> <unk>`` first, then the file's symbols in order (a ``#fairseq:overwrite``
row replaces an earlier one)."""

from __future__ import annotations

from pathlib import Path

from xling.errors import InputError

SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")


class TokenDictionary:
    """The symbol <-> index mapping of a fairseq dictionary (the subset of its interface that
    fine-tuning, analysis and the export use)."""

    def __init__(self) -> None:
        self.symbols: list[str] = []
        self.count: list[int] = []
        self.indices: dict[str, int] = {}
        for sym in SPECIALS:
            self.add_symbol(sym)
        self.nspecial = len(SPECIALS)

    @classmethod
    def load(cls, path: str | Path) -> TokenDictionary:
        path = Path(path)
        d = cls()
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                word, sep, field = line.rstrip().rpartition(" ")
                overwrite = field == "#fairseq:overwrite"
                if overwrite:
                    word, sep, field = word.rpartition(" ")
                if not sep or not word or not field.isdigit():
                    raise InputError(path, n, "'<token> <count> [#fairseq:overwrite]'", line.rstrip()[:80])
                if word in d.indices and not overwrite:
                    raise InputError(path, n, "a symbol not already listed (or #fairseq:overwrite)", word)
                d.add_symbol(word, int(field), overwrite)
        return d

    def add_symbol(self, word: str, n: int = 1, overwrite: bool = False) -> int:
        if word in self.indices and not overwrite:
            idx = self.indices[word]
            self.count[idx] += n
            return idx
        idx = len(self.symbols)
        self.indices[word] = idx
        self.symbols.append(word)
        self.count.append(n)
        return idx

    def __len__(self) -> int:
        return len(self.symbols)

    def __contains__(self, word: str) -> bool:
        return word in self.indices

    def __getitem__(self, idx: int) -> str:
        return self.symbols[idx] if 0 <= idx < len(self.symbols) else SPECIALS[3]

    def index(self, word: str) -> int:
        return self.indices.get(word, self.unk())

    def bos(self) -> int:
        return 0

    def pad(self) -> int:
        return 1

    def eos(self) -> int:
        return 2

    def unk(self) -> int:
        return 3
