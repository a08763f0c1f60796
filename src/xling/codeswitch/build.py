"""Stage entry points: the weighted dictionaries `R/dict/<src>-<tgt>.tsv` and the code-switched
training text `R/codeswitch/<pair>/<lang>.train.txt` + `report.json`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from xling.codeswitch.dictd import find_dictd, read_dictd
from xling.codeswitch.dictionary import (
    BatchTokenizer,
    PairsIn,
    PhraseDictionary,
    read_dict,
    read_muse,
    tokenize_pairs,
    write_dict,
)
from xling.codeswitch.panlex import DEFAULT_UIDS, read_panlex
from xling.codeswitch.switch import codeswitch_file, write_report


def build_dictionary(kind: str, source: Path, src_lang: str, tgt_lang: str, out_fwd: Path, out_rev: Path,
                     uids: dict[str, str] | None = None, reverse: Path | None = None,
                     src_tok: BatchTokenizer | None = None,
                     tgt_tok: BatchTokenizer | None = None) -> dict:
    """Write both directions of one bilingual dictionary.

    kind "panlex": `source` is the unpacked snapshot (or a folder above it);
    kind "muse": `source` is a MUSE `src tgt` file for src_lang -> tgt_lang;
    kind "freedict": `source` holds FreeDict's src_lang -> tgt_lang dictionary (dictd, as Debian's
    package extracts), `reverse` (optional) its tgt_lang -> src_lang one: both merged, the reverse
    read backwards (a pair both list adds up its senses).
    Entries are tokenised with `src_tok`/`tgt_tok` (lists of texts -> tokenised texts) so that
    they match the tokenised corpus."""
    pairs: PairsIn
    if kind == "panlex":
        uids = {**DEFAULT_UIDS, **(uids or {})}
        pairs = read_panlex(source, uids[src_lang], uids[tgt_lang])
    elif kind == "muse":
        pairs = read_muse(source)
    elif kind == "freedict":
        merged = read_dictd(*find_dictd(source))
        for (a, b), w in (read_dictd(*find_dictd(reverse)) if reverse is not None else {}).items():
            merged[(b, a)] = merged.get((b, a), 0) + w
        pairs = merged
    else:
        raise ValueError(f"unknown dictionary kind {kind!r}; expected 'panlex', 'muse' or 'freedict'")
    pairs = tokenize_pairs(pairs, src_tok, tgt_tok)
    n = write_dict(pairs, out_fwd)
    write_dict(pairs, out_rev, reverse=True)
    return {"pairs": n, "source_entries": len({a for a, _ in pairs}), "target_entries": len({b for _, b in pairs})}


def variant_seed(seed: int, lang: str, variant: int) -> str:
    """The random stream of one language's switched copy: each variant switches independently."""
    return f"{seed}:{lang}" if variant == 0 else f"{seed}:{lang}:{variant}"


def codeswitch_pair(train: dict[str, Path], dicts: dict[str, Path], out_texts: dict[str, Path], report_path: Path,
                    seed: int, replace_prob: float = 0.3, max_fraction: float = 0.15, batch_words: int = 4096,
                    max_phrase_words: int = 4, lowercase_fallback: bool = True, variant: int = 0) -> dict:
    """Code-switch each language's training text with its dictionary towards the other language.

    train: lang -> tokenised train text; dicts: lang -> TSV whose source side is that language;
    out_texts: lang -> the switched text to write; report_path: the realised rates (JSON).
    Each language gets its own random stream (seeded by seed, language and ``variant``: the
    copies pretraining cycles through by epoch). With `lowercase_fallback`, capitalised
    (sentence-initial) words also match lowercase entries."""
    report: dict[str, Any] = {
        "seed": seed, "variant": variant, "replace_prob": replace_prob, "max_fraction": max_fraction,
        "batch_words": batch_words, "max_phrase_words": max_phrase_words,
        "lowercase_fallback": lowercase_fallback, "languages": {}}
    for lang, path in train.items():
        dictionary = PhraseDictionary(read_dict(dicts[lang]), max_phrase_words, lowercase_fallback)
        stats = codeswitch_file(path, Path(out_texts[lang]), dictionary, variant_seed(seed, lang, variant),
                                replace_prob, max_fraction, batch_words)
        stats["dictionary_entries"] = len(dictionary)
        report["languages"][lang] = stats
    write_report(report, Path(report_path))
    return report
