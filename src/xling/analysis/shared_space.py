"""Does a bilingual model put its two languages in one space? Parallel sentences of both languages
are mean-pooled under the *same* model (each with its language's parts), and each sentence of the
second language retrieves its translation by cosine similarity, per layer, with no map in between.

Each language is first centred by its own iterative normalisation, which needs no parallel data:
a constant offset between the languages would otherwise hide a shared structure. Chance is
1 / sentences. The diagnostic needs no fine-tuning, so a sweep over pretraining length, width or
data can score every checkpoint in seconds (fine-tuning three tasks takes minutes): rule
``shared_space`` scores every interval checkpoint a pretraining job kept (:func:`run_curve`).

    python -m xling.analysis.shared_space --checkpoint R/pretrain/default/en-ru/seed1/checkpoint_best.pt \\
        --dictionary R/bin/default/en-ru/dict.txt --bpe R/bpe/default/en-ru/bpe.json --langs en ru \\
        --way15 R/downloads/xnli_15way/extracted --config config/config.yaml config/demo.yaml
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from xling.analysis.align import iterative_normalize, sentence_retrieval_p1
from xling.analysis.run import Encoders, fifteen_way
from xling.config import data_language, fill_defaults, load
from xling.errors import InputError
from xling.io import write_result
from xling.model import ModelSpec, PretrainedModel
from xling.preprocess.tokenize import TokenizeSettings

INTERVAL_CHECKPOINT = re.compile(r"^checkpoint_(\d+)_(\d+)\.pt$")  # fairseq's checkpoint_<epoch>_<updates>.pt


def shared_space_retrieval(checkpoint: Path, dictionary: Path, bpe: Path, langs: tuple[str, str],
                           sentences: tuple[list[str], list[str]], settings: dict[str, TokenizeSettings],
                           norm_steps: int = 5, max_seq_len: int = 128, batch_size: int = 64,
                           device: str = "cpu") -> dict:
    """P@1 (%) per layer of retrieving ``sentences[0][i]`` for ``sentences[1][i]`` under one model:
    ``raw`` (plain cosine) and ``centred`` (each language iteratively normalised on its own).
    ``langs``: the model's language ids of the two sides (the second may read the first's text,
    e.g. en_prime)."""
    if len(sentences[0]) != len(sentences[1]):
        raise ValueError(f"parallel sentences needed, got {len(sentences[0])} and {len(sentences[1])}")
    enc = Encoders(settings, max_seq_len, batch_size, device)
    reads = [data_language(lang) for lang in langs]
    model = PretrainedModel.xling(checkpoint, dictionary, bpe)
    a = enc(ModelSpec(model, langs[0], text_lang=reads[0]), sentences[0])
    b = enc(ModelSpec(model, langs[1], text_lang=reads[1]), sentences[1])
    layers = range(a.shape[0])
    raw = [sentence_retrieval_p1(b[l], a[l]) for l in layers]
    centred = [sentence_retrieval_p1(iterative_normalize(b[l], norm_steps), iterative_normalize(a[l], norm_steps))
               for l in layers]
    return {"checkpoint": str(checkpoint), "langs": list(langs), "n": len(sentences[0]),
            "chance": 100.0 / len(sentences[0]), "layers": list(layers), "raw": raw, "centred": centred}


def interval_checkpoints(fairseq_dir: Path) -> list[tuple[int, Path]]:
    """(updates, path) of the interval checkpoints fairseq kept in ``fairseq_dir``, by updates
    (``pretrain.keep_interval_updates`` sets how many are kept)."""
    found = []
    for path in Path(fairseq_dir).glob("checkpoint_*_*.pt"):
        m = INTERVAL_CHECKPOINT.match(path.name)
        if m:
            found.append((int(m.group(2)), path))
    return sorted(found)


def run_curve(model_dir: Path, dictionary: Path, bpe: Path, langs: tuple[str, str],
              sentences: tuple[list[str], list[str]], settings: dict[str, TokenizeSettings], out: Path,
              meta: dict, norm_steps: int = 5, max_seq_len: int = 128, batch_size: int = 64, device: str = "cpu",
              log=None) -> dict:
    """:func:`shared_space_retrieval` at every interval checkpoint of the pretraining job in
    ``model_dir`` (its ``fairseq/`` folder), written as one JSON: ``meta`` (setting, pair, seed)
    and, per checkpoint, its updates and P@1 per layer."""
    log = log or (lambda _m: None)
    found = interval_checkpoints(Path(model_dir) / "fairseq")
    if not found:
        raise InputError(Path(model_dir) / "fairseq", None, "interval checkpoints checkpoint_<epoch>_<updates>.pt "
                         "(pretrain.keep_interval_updates >= 1)", "none")
    points = []
    for updates, path in found:
        r = shared_space_retrieval(path, dictionary, bpe, langs, sentences, settings, norm_steps, max_seq_len,
                                   batch_size, device)
        log(f"{updates} updates: best layer {max(r['centred']):.1f}% (chance {r['chance']:.1f}%)")
        points.append({"updates": updates, "raw": r["raw"], "centred": r["centred"]})
    # langs, n, chance and layers are the same at every checkpoint: the last one's
    return write_result(out, {**meta, **{k: r[k] for k in ("langs", "n", "chance", "layers")}, "checkpoints": points})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", required=True, type=Path)
    ap.add_argument("--dictionary", required=True, type=Path, help="the dict.txt of pretraining")
    ap.add_argument("--bpe", required=True, type=Path, help="the bpe.json of the model's BPE directory")
    ap.add_argument("--langs", required=True, nargs=2, help="the model's two language ids (source first)")
    ap.add_argument("--way15", required=True, type=Path, help="the extracted XNLI-15way directory")
    ap.add_argument("--rows", type=int, default=1000, help="15-way rows to retrieve among")
    ap.add_argument("--config", nargs="+", default=["config/config.yaml"],
                    help="config files, merged in order: how each language was tokenised")
    ap.add_argument("--out", type=Path, help="write the JSON here as well")
    args = ap.parse_args(argv)
    cfg = fill_defaults(load(*args.config))
    texts = [data_language(lang) for lang in args.langs]
    rows = fifteen_way(args.way15, sorted(set(texts)), args.rows)
    settings = {lang: TokenizeSettings.from_config(cfg, lang) for lang in set(texts)}
    res = shared_space_retrieval(args.checkpoint, args.dictionary, args.bpe, tuple(args.langs),
                                 (rows[texts[0]], rows[texts[1]]), settings)
    text = json.dumps(res)
    if args.out:
        from xling.io import atomic_write

        with atomic_write(args.out) as fh:
            fh.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
