"""Figure 4's train and test dictionaries from FreeDict (``analysis.words.dictionary: freedict``,
rule ``freedict_split``), where MUSE's are not at hand: a seeded split of a dictd dictionary's
one-word headwords into MUSE's two files (``xling.codeswitch.dictd.write_muse_split``), no
headword in both. Lowercased first, as MUSE's dictionaries are: Figure 4 reads every vocabulary
lowercased (``xling.analysis.words.vocabulary``), so "Paris" would match no word."""

from __future__ import annotations

from pathlib import Path

from xling.codeswitch.dictd import find_dictd, read_dictd, write_muse_split
from xling.codeswitch.dictionary import Pairs
from xling.errors import InputError


def lowercased(pairs: Pairs) -> Pairs:
    """Both sides of every pair lowercased; pairs that become one add their weights (as
    ``read_muse`` adds a repeated line)."""
    out: Pairs = {}
    for (a, b), w in pairs.items():
        key = (a.lower(), b.lower())
        out[key] = out.get(key, 0) + w
    return out


def write_freedict_split(root: str | Path, train: str | Path, test: str | Path, train_words: int, test_words: int,
                         seed: int) -> dict:
    """The dictd dictionary under the extracted download ``root`` (``find_dictd``), lowercased, split
    into ``train_words`` training and ``test_words`` test headwords written as MUSE's ``train`` and
    ``test`` files (both or neither). Too few one-word headwords is an error naming the index.
    Returns the index read and the words and pairs of each file."""
    index, dictionary = find_dictd(root)
    pairs = lowercased(read_dictd(index, dictionary))
    try:
        counts = write_muse_split(pairs, train, test, train_words, test_words, seed)
    except ValueError as err:  # too few headwords: the sizes are the config's
        raise InputError(index, None, f"{train_words} + {test_words} one-word headwords "
                         "(analysis.words.freedict_train + freedict_test)", str(err)) from None
    return {"index": str(index), **counts}
