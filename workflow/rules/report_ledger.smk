# The report stage, the compute ledger: what the pretraining, fine-tuning and BPE jobs cost
# (xling.report.ledger), beside the pretraining hours the budget planned (xling.cluster.budget).

from xling.cluster.budget import planned_rate, pretrain_device, pretrain_estimates


def ledger_job(output, rule, family, model=(None, None), label=None, **wildcards):
    """A job the ledger counts: its declared output (the ledger's input, so that the ledger runs
    after it), the model it belongs to (setting, pair) and where its rule's benchmark file is;
    ``label``: the rule's name in the ledger (every task's grid rule counts as finetune_grid)."""
    gpus = int(config["rule_resources"][family]["gpus"])
    bench = str(getattr(rules, rule).benchmark).format(**wildcards)
    return output, {"rule": label or rule, "setting": model[0], "pair": model[1], "gpus": gpus, "benchmark": bench}


def ledger_jobs():
    """Pretraining (bilingual, monolingual), fine-tuning (cells and grids) and BPE jobs, as ledger_job pairs."""
    jobs = [
        ledger_job(
            f"{R}/pretrain/{s}/{p}/seed{ps}/done.json", "pretrain", "pretrain", (s, p), setting=s, pair=p, pseed=ps
        )
        for s, p, ps in BILINGUAL
    ]
    jobs += [
        ledger_job(f"{R}/pretrain/mono/{m}/done.json", "pretrain_mono", "pretrain", ("mono", m), mono=m) for m in MONO
    ]
    jobs += [
        ledger_job(
            finetune_result(s, p, t, grid_hp_ids(t, bs)[0], ps, fs),
            f"finetune_grid_{t}",
            "finetune",
            (s, p),
            label="finetune_grid",
            setting=s,
            pair=p,
            bs=bs,
            pseed=ps,
            fseed=fs,
        )
        for s, p, t, bs, ps, fs in grid_jobs()
    ]
    bpe_dirs = dict.fromkeys((canonical(s), p) for s, p, _ in BILINGUAL if not xcfg.is_prime(p))
    jobs += [
        ledger_job(f"{R}/bpe/{s}/{p}/bpe.json", "bpe", "bpe", setting=s, src=pair_langs(p)[0], tgt=pair_langs(p)[1])
        for s, p in bpe_dirs
    ]
    jobs += [
        ledger_job(f"{R}/bpe/mono/{l}/bpe.json", "bpe_mono", "bpe", lang=l)
        for l in dict.fromkeys(xcfg.data_language(m) for m in MONO)
    ]
    return jobs


def planned_pretrain_hours():
    """The budget's hours per pretrained model, all its seeds together (no margin), and the
    throughput they assume."""
    rate = planned_rate(config, pretrain_device(config))
    hours = {}
    for e in pretrain_estimates(config, rate, margin=1.0):
        hours[e.job.model] = hours.get(e.job.model, 0.0) + e.hours
    return {k: round(v, 4) for k, v in hours.items()}, rate.basis


LEDGER_JOBS = ledger_jobs()
PLANNED_PRETRAIN_HOURS, PLANNING_BASIS = planned_pretrain_hours()


rule compute_ledger:
    """What the run cost per rule and per model, beside the pretraining hours the budget planned.
    The benchmark files are read beside the declared outputs (see xling.report.ledger for why
    they are not inputs)."""
    input:
        [out for out, _ in LEDGER_JOBS],
    output:
        ledger_md=report(f"{R}/report/compute.md", category="4. Compute", caption=caption("wu2020_compute.rst")),
        ledger_csv=f"{R}/report/compute.csv",
    log:
        f"{LOGS}/report/compute.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        entries=[entry for _, entry in LEDGER_JOBS],
        planned=PLANNED_PRETRAIN_HOURS,
        planning_basis=PLANNING_BASIS,
        labels={"mono": "Monolingual", **{s: config["settings"][s]["label"] for s in SETTINGS}},
        note=REPORT_NOTE,
    script:
        "../scripts/report_ledger.py"
