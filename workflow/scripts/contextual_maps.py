"""Snakemake script of rule contextual_maps (Figure 5): per layer, the normalisations and the
orthogonal map W_i (target -> English) learnt on a pair's linked words
(xling.analysis.transfer.run_maps).

input:  links; mono: <lang>_checkpoint/_dictionary/_bpe of both monolingual models; bilingual:
        bi_checkpoint/_dictionary/_bpe
params: kind (mono | bilingual), pair, norm_steps, max_seq_len, batch_size
output: the maps (npz)
"""

from pathlib import Path

from _setup import log_line, model_spec, run_logged, torch_device

from xling.analysis.transfer import run_maps


def main(sm) -> dict:
    p = sm.params
    src, tgt = p.pair.split("-")
    specs = ({"source": model_spec(sm, src, src), "target": model_spec(sm, tgt, tgt)} if p.kind == "mono"
             else {"source": model_spec(sm, "bi", src), "target": model_spec(sm, "bi", tgt)})
    device, loaded, sides = torch_device(sm), {}, {}
    for side, lang in (("source", src), ("target", tgt)):
        spec = specs[side]
        if spec.model not in loaded:
            loaded[spec.model] = spec.model.load(device)
        sides[side] = (loaded[spec.model], lang, spec.model.subwords(lang))
    return run_maps(Path(sm.input.links), sides, int(p.norm_steps), Path(sm.output[0]), max_seq_len=int(p.max_seq_len),
                    batch_size=int(p.batch_size), device=device, log=log_line)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
