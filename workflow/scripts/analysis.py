"""Snakemake script of rules analysis_retrieval (Figure 6) and analysis_cka (Figure 7): one pair
of the Section 5 analyses -> a result JSON (xling.analysis.run)."""

from _setup import run_logged  # also puts src/ on sys.path for per-rule conda envs

import sys
from pathlib import Path

import torch

from xling.analysis.run import ModelSpec, fifteen_way, read_lines, run_cka, run_retrieval
from xling.config import data_language, is_prime
from xling.preprocess.tokenize import TokenizeSettings

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive


def mono_spec(sm, model: str, lang: str, seed: int | None = None) -> ModelSpec:
    """Model ``model``'s files from the rule's named inputs (<model>_checkpoint, ...)."""
    return ModelSpec(Path(sm.input[f"{model}_checkpoint"]), Path(sm.input[f"{model}_dictionary"]).parent,
                     Path(sm.input[f"{model}_bpe"]).parent, lang, seed)


def main(sm) -> None:
    p, a = sm.params, sm.params.analysis
    torch.set_num_threads(max(1, int(sm.threads)))
    device = "cuda" if int(sm.resources.get("gpu", 0) or 0) > 0 and torch.cuda.is_available() else "cpu"
    src, target = p.source, p.target
    tgt_lang = data_language(target)  # en' is read by an English model
    # raw sentences are tokenised exactly as the pretraining corpus was
    settings = {lang: TokenizeSettings.from_config(sm.config, lang, stanford_home=p.get("stanford_home"))
                for lang in {src, tgt_lang}}
    common = dict(max_seq_len=int(a["max_seq_len"]), batch_size=int(a["batch_size"]), device=device,
                  log=lambda msg: print(msg, file=sys.stderr, flush=True))
    en, x = mono_spec(sm, src, src), mono_spec(sm, target, tgt_lang)
    out = Path(sm.output.result)
    if p.kind == "retrieval":
        run_retrieval(en, x, Path(sm.input.way15), (Path(sm.input.tatoeba_x), Path(sm.input.tatoeba_en)),
                      settings, int(a["align_sentences"]), int(a["iterative_norm_steps"]), out, **common)
        return
    n = int(a["cka_sentences"])
    if is_prime(target):
        en_rows = fifteen_way(Path(sm.input.way15), [src], n)[src]
        x_rows = read_lines(Path(sm.input.paraphrase[0]), n)
    else:
        rows = fifteen_way(Path(sm.input.way15), [src, target], n)
        en_rows, x_rows = rows[src], rows[target]
    bi = None
    if p.bilingual_pair is not None:
        bi_ckpt, bi_dict, bi_bpe = (Path(sm.input[k]) for k in ("bi_checkpoint", "bi_dictionary", "bi_bpe"))
        # the bilingual en-en' model reads en' under its second language id, with English BPE
        bi = (ModelSpec(bi_ckpt, bi_dict.parent, bi_bpe.parent, src),
              ModelSpec(bi_ckpt, bi_dict.parent, bi_bpe.parent, target, text_lang=tgt_lang))
    models = {
        "monolingual": (en, x),
        "bilingual": bi,
        # the paper uses a random encoder for the non-English side only
        "random": (en, mono_spec(sm, target, tgt_lang, seed=int(a["random_seed"]))),
    }
    run_cka(f"{src}-{target}", (en_rows, x_rows), models, settings, out, **common)


run_logged(snakemake, main)
