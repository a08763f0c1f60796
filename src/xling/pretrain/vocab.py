"""Per-language vocabularies over the shared dictionary (``dict.<lang>.txt``).

They give the language-specific softmax its vocabulary mask and the in-language random
replacement words of the separate-embedding settings."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from xling.errors import InputError


def read_language_vocab(path: str | Path, dictionary) -> np.ndarray:
    """Boolean mask over ``dictionary`` of the tokens listed in a fairseq-format dict file
    (``token count`` per line). The special symbols are always included."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, None, "the per-language dictionary dict.<lang>.txt of the binarize stage")
    mask = np.zeros(len(dictionary), dtype=bool)
    mask[: dictionary.nspecial] = True
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            fields = line.rstrip("\n").split(" ")
            if len(fields) < 2 or not fields[0]:
                raise InputError(path, lineno, "'<token> <count>'", line.rstrip("\n"))
            idx = dictionary.indices.get(fields[0])
            if idx is None:
                raise InputError(path, lineno, "a token of the shared dict.txt", fields[0])
            mask[idx] = True
    return mask


def maskable_tokens(dictionary, mask_idx: int) -> np.ndarray:
    """Tokens a random replacement may produce: real words only, not the specials,
    ``<mask>`` nor fairseq's ``madeupword`` padding entries."""
    ok = np.ones(len(dictionary), dtype=bool)
    ok[: dictionary.nspecial] = False
    ok[mask_idx] = False
    for i, sym in enumerate(dictionary.symbols):
        if sym.startswith("madeupword"):
            ok[i] = False
    return ok


def replacement_weights(dictionary, mask_idx: int, language_vocab: np.ndarray | None) -> np.ndarray:
    """Uniform distribution over the replacement candidates, restricted to one language's
    tokens when ``language_vocab`` is given."""
    ok = maskable_tokens(dictionary, mask_idx)
    if language_vocab is not None:
        if len(language_vocab) != len(ok):
            raise ValueError(f"language vocabulary has {len(language_vocab)} entries, dictionary {len(ok)}")
        ok &= language_vocab
    if not ok.any():
        raise ValueError("no token left to draw random replacements from")
    return ok / ok.sum()


def out_of_language_remap(language_vocab: np.ndarray, unk: int) -> np.ndarray:
    """Index map sending tokens outside the language's vocabulary to ``<unk>``: with a
    language-specific softmax such a token could never be predicted (valid/test data may
    contain subwords only the other language used in training)."""
    remap = np.arange(len(language_vocab), dtype=np.int64)
    remap[~language_vocab] = unk
    return remap
