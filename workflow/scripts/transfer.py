"""Snakemake script of rule transfer (Figure 5, Appendix Figure 8): MLM align, biMLM and
biMLM + W for one (task, pair, layer) (xling.analysis.transfer.run_figure5).

input:  <src>_/<tgt>_checkpoint/_dictionary/_bpe = the monolingual models; bi_* = the bilingual
        model; maps_mono, maps_bilingual; train, en_dev, tgt_test; stanford (optional)
params: spec = {job: FinetuneJob fields, grid: the cells}, layer, top_k, top (the new layers' sizes)
output: the job's JSON
"""

from pathlib import Path

from _setup import log_line, model_spec, run_logged, torch_device

from xling.analysis.transfer import run_figure5
from xling.finetune import FinetuneJob, TaskFiles


def main(sm) -> dict:
    p, i = sm.params, sm.input
    job = FinetuneJob.from_tracked(p.spec["job"])
    specs = {"source": model_spec(sm, job.src_lang, job.src_lang), "target": model_spec(sm, job.tgt_lang, job.tgt_lang),
             "bilingual": model_spec(sm, "bi", job.src_lang)}
    files = TaskFiles(train=Path(i.train), en_dev=Path(i.en_dev), tgt_test=Path(i.tgt_test))
    res = run_figure5(job, list(p.spec["grid"]), int(p.layer), specs,
                      {"mono": Path(i.maps_mono), "bilingual": Path(i.maps_bilingual)}, files, Path(i.tgt_test),
                      int(p.top_k), dict(p.top), Path(sm.output[0]), device=torch_device(sm), log=log_line,
                      stanford_home=i.get("stanford"))
    return {"tgt_test": res["tgt_test"]}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
