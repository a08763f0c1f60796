"""One BPE directory (`R/bpe/<setting>/<pair>/` or `R/bpe/mono/<lang>/`) from tokenised text."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from xling.bpe.anchors import write_anchors
from xling.bpe.apply import apply_file, load_codes
from xling.bpe.learn import count_words, learn_codes_from_counts
from xling.bpe.manifest import (
    MODES,
    SPLITS,
    bpe_name,
    check_prefixes_unambiguous,
    codes_name,
    read_manifest,
    write_manifest,
)
from xling.bpe.sample import JointSample, joint_sample_counts
from xling.errors import InputError


def build_bpe(
    out_dir: Path,
    mode: str,
    merges: int,
    texts: dict[str, dict[str, Path]],
    workers: int = 1,
    min_frequency: int = 2,
    sample: JointSample | None = None,
) -> dict:
    """Learn codes, segment every split of every language, write `bpe.json` (+ `anchors.json`
    for two languages).

    texts: lang -> split ("train", "valid", "test") -> tokenised text file. Codes are learnt on
    the train files only (for Extra anchors those are the code-switched ones).
    joint: one set of `merges` merges on all languages' train text together; with `sample`, on
    `sample.lines` lines of each language drawn with replacement instead (XLM's recipe,
    xling.bpe.sample).
    per_language: `merges` merges per language, each language segmented with its own codes.
    per_language_prefixed: as per_language, then every subword written `<lang>_<subword>`.
    """
    if mode not in MODES:
        raise ValueError(f"unknown BPE mode {mode!r}; expected one of {MODES}")
    out_dir = Path(out_dir)
    languages = list(texts)
    for lang in languages:
        missing = [s for s in SPLITS if s not in texts[lang]]
        if missing:
            raise ValueError(f"no {missing} text given for {lang}")
    if mode == "per_language_prefixed":
        check_prefixes_unambiguous(languages)
    if sample is not None and mode != "joint":
        raise ValueError(f"a sample of each language's lines is for joint codes; {mode} codes are learnt on "
                         "each language's whole train split")

    learnt = {}
    if mode == "joint":
        if sample is None:
            counts = count_words([texts[lang]["train"] for lang in languages], workers)
        else:
            counts = joint_sample_counts({lang: texts[lang]["train"] for lang in languages}, sample)
        n = learn_codes_from_counts(counts, out_dir / "codes.joint", merges, min_frequency)
        learnt = {lang: n for lang in languages}
    else:
        for lang in languages:
            counts = count_words([texts[lang]["train"]], workers)
            learnt[lang] = learn_codes_from_counts(counts, out_dir / codes_name(mode, lang), merges, min_frequency)

    for lang in languages:
        bpe = load_codes(out_dir / codes_name(mode, lang))
        prefix = lang if mode == "per_language_prefixed" else None
        for split in SPLITS:
            apply_file(bpe, texts[lang][split], out_dir / bpe_name(lang, split), prefix, workers)

    extra = {"sample": asdict(sample)} if sample is not None else {}
    manifest = write_manifest(out_dir, mode, merges, languages, merges_learnt=learnt,
                              min_frequency=min_frequency, **extra)
    if len(languages) == 2:
        manifest["anchors"] = write_anchors(out_dir, languages)
    return manifest


def apply_bpe(manifest: Path, lang: str, src: Path, dst: Path, workers: int = 1) -> None:
    """Segment another tokenised text of ``lang`` with a BPE directory's learnt codes (its
    ``bpe.json``), as its own files were (a code-switched copy of the training text: the codes come
    from the first)."""
    m = read_manifest(Path(manifest))
    if lang not in m["languages"]:
        raise InputError(manifest, None, f"language {lang!r} among the manifest's languages", ", ".join(m["languages"]))
    bpe = load_codes(Path(manifest).parent / m["codes"][lang])
    prefix = lang if m["mode"] == "per_language_prefixed" else None
    apply_file(bpe, src, dst, prefix, workers)
