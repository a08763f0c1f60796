"""Check a finished run's transformers exports: each tokenizer's ids on the run's raw dev sentences
against xling's own tokenisation (xling.export.Pretokenizer, the dictionary's ids, <s> ... </s>).

    python scripts/check_export_tokenizers.py results/demo

Sentences: XNLI dev (tasks/xnli/<lang>/dev.tsv), XNLI-15way and Tatoeba, where the run downloaded
them. A segmented language's text goes to the tokenizer as its segmenter returns it. Prints, per
export and language, the lines compared and how many differ, with trust_remote_code (the export's
XlingTokenizer) and without (transformers' XLMTokenizer); exit status 1 when any differ with it.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

TATOEBA = {"fr": "fra", "de": "deu", "ru": "rus", "zh": "cmn"}


def _tsv(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def dev_sentences(run: Path, lang: str) -> list[str]:
    out = []
    xnli = run / "tasks" / "xnli" / lang / "dev.tsv"
    if xnli.is_file():
        out += [x for row in _tsv(xnli)[1:] for x in row[:2]]
    way15 = run / "downloads" / "xnli_15way" / "extracted" / "XNLI-15way" / "xnli.15way.orig.tsv"
    if way15.is_file():
        rows = _tsv(way15)
        if lang in rows[0]:
            i = rows[0].index(lang)
            out += [row[i] for row in rows[1:]]
    codes = list(TATOEBA.values()) if lang == "en" else [TATOEBA[lang]] if lang in TATOEBA else []
    for code in codes:
        folder, ext = (f"tatoeba_{code}_eng", "eng") if lang == "en" else (f"tatoeba_{code}", code)
        f = run / "downloads" / folder / f"tatoeba.{code}-eng.{ext}"
        if f.is_file():
            out += f.read_text(encoding="utf-8").splitlines()
    return [s for s in out if s.strip()]


def main(argv: list[str] | None = None) -> int:
    from fairseq.data import Dictionary
    from transformers import AutoTokenizer

    from xling.export import Pretokenizer
    from xling.preprocess.tokenize import LineTokenizer, TokenizeSettings

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="a finished run's directory, results/<run>")
    args = ap.parse_args(argv)
    bad = 0
    for info_path in sorted(args.run.glob("hf/*/*/xling_export.json")):
        export = info_path.parent
        info = json.loads(info_path.read_text(encoding="utf-8"))
        tok = info.get("tokenizer", {})
        if tok.get("input") != "raw text":
            print(f"{export}: {tok.get('input', 'an export from before the raw-text tokenizer')}: not checked")
            continue
        d = Dictionary.load(info["dictionary"])
        remote = AutoTokenizer.from_pretrained(export, trust_remote_code=True)
        stock = AutoTokenizer.from_pretrained(export)
        for lang in info["languages"]:
            lines = dev_sentences(args.run, lang)
            ours = [[d.bos(), *(d.index(p) for p in line.split()), d.eos()]
                    for line in Pretokenizer(export, lang)(lines)]
            settings = info["tokenize"][lang]
            given = lines
            if settings["segmenter"] != "none":
                seg = LineTokenizer(TokenizeSettings(**{**settings, "stanford_home": None}))
                given = [" ".join(seg.seg(line)) for line in lines]
            differ = sum(a != b for a, b in zip(ours, remote(given, lang=lang)["input_ids"]))
            differ_stock = sum(a != b for a, b in zip(ours, stock(given)["input_ids"]))
            bad += differ
            print(f"{export} {lang}: {len(lines)} lines, differ {differ} (trust_remote_code), "
                  f"{differ_stock} (XLMTokenizer)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
