# Section 5.1.2, Figure 5 (and Appendix Figure 8): zero-shot NER and parsing through the frozen
# layers 0..i of two monolingual models aligned word by word, against the bilingual model.
# fast_align (built here from its source) links the words of XNLI-15way rows; W_i per layer is
# Procrustes on the linked words' vectors; one job per (task, pair, layer) trains the three models.
# Results: R/analysis/transfer/<task>/<pair>/L<i>.json; figures by report.smk.

from types import SimpleNamespace

FIG5 = AN["transfer"]
FIG5_PAIRS = xcfg.figure5_pairs(config)
FAST_ALIGN = {tool: f"{R}/tools/fast_align/{tool}" for tool in ("fast_align", "atools")}


def figure5_cells():
    """(task, pair, layer) of every Figure 5 job; NER pairs whose licensed corpus is missing are left out."""
    return [(t, p, i) for t in FIG5["tasks"] for p in FIG5_PAIRS if finetune_runs(t, p) for i in FIG5["layers"]]


def figure5_results():
    return [f"{R}/analysis/transfer/{t}/{p}/L{i}.json" for t, p, i in figure5_cells()]


def figure5_job(w):
    """The xling.finetune.FinetuneJob fields of a Figure 5 job (Table 1's recipe for the task; its
    hp is each grid cell in turn), and the grid itself."""
    cell = SimpleNamespace(task=w.task, pair=w.pair, hp_id=finetune_hp_ids(w.task)[0], fseed=FSEED0)
    grid = [cell_hp(config["finetune"], w.task, h).tracked() for h in finetune_hp_ids(w.task)]
    return {"job": finetune_job(cell).tracked(), "grid": grid}


def figure5_inputs(w):
    """Both monolingual models, the bilingual model, both maps and the task files of one job."""
    target = pair_langs(w.pair)[1]
    files = finetune_task_files(w)
    return {
        **mono_model_files(SRC),
        **mono_model_files(target),
        **bilingual_files(target),
        "maps_mono": f"{R}/analysis/transfer/maps/mono/{w.pair}.npz",
        "maps_bilingual": f"{R}/analysis/transfer/maps/bilingual/{w.pair}.npz",
        "train": files["train"],
        "en_dev": files["en_dev"],
        "tgt_test": files["tgt_test"],
        **segmenter_inputs(*pair_langs(w.pair)),
    }


def maps_inputs(w):
    """The links of a pair and the model(s) its maps are learnt with."""
    target = pair_langs(w.pair)[1]
    models = {**mono_model_files(SRC), **mono_model_files(target)} if w.kind == "mono" else bilingual_files(target)
    return {"links": f"{R}/analysis/transfer/links/{w.pair}.tsv", **models}


rule build_fast_align:
    """fast_align and atools compiled from the source release (cmake and a C++ compiler)."""
    input:
        downloaded("fast_align_src"),
    output:
        **FAST_ALIGN,
    log:
        f"{LOGS}/analysis/transfer/build_fast_align.log",
    conda:
        "../../envs/corpus.yaml"
    threads: threads_of("preprocess")
    resources:
        **res("preprocess"),
    script:
        "../scripts/build_fast_align.py"


rule word_links:
    """One-to-one links (fast_align or eflomal forward and reverse, atools grow-diag-final-and) of
    the 15-way rows, tokenised as the pretraining corpora were."""
    input:
        unpack(lambda w: segmenter_inputs(*pair_langs(w.pair))),
        **FAST_ALIGN,
        way15=downloaded("xnli_15way"),
    output:
        f"{R}/analysis/transfer/links/{{pair}}.tsv",
    log:
        f"{LOGS}/analysis/transfer/links/{{pair}}.log",
    wildcard_constraints:
        pair="|".join(FIG5_PAIRS) or "NONE",
    conda:
        "../../envs/corpus.yaml"
    threads: threads_of("preprocess")
    resources:
        **res("preprocess"),
    params:
        pair=lambda w: w.pair,
        rows=FIG5["rows"],
        aligner=FIG5["aligner"],
        tokenize=lambda w: tokenize_params(*pair_langs(w.pair)),
    script:
        "../scripts/word_links.py"


rule contextual_maps:
    """W_i for every layer, from the linked words of a pair: the two monolingual models (mono) or
    the bilingual model read as either language (bilingual, Figure 8)."""
    input:
        unpack(maps_inputs),
    output:
        f"{R}/analysis/transfer/maps/{{kind}}/{{pair}}.npz",
    log:
        f"{LOGS}/analysis/transfer/maps/{{kind}}/{{pair}}.log",
    wildcard_constraints:
        kind="mono|bilingual",
        pair="|".join(FIG5_PAIRS) or "NONE",
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    params:
        kind=lambda w: w.kind,
        pair=lambda w: w.pair,
        norm_steps=AN["iterative_norm_steps"],
        max_seq_len=AN["max_seq_len"],
        batch_size=AN["batch_size"],
    script:
        "../scripts/contextual_maps.py"


rule transfer:
    """MLM align, biMLM and biMLM + W of one (task, pair, layer): new layers and head trained on
    English above the frozen layers 0..i, tested on the target (Table 1's recipe and grid)."""
    input:
        unpack(figure5_inputs),
    output:
        f"{R}/analysis/transfer/{{task}}/{{pair}}/L{{layer}}.json",
    log:
        f"{LOGS}/analysis/transfer/{{task}}/{{pair}}/L{{layer}}.log",
    wildcard_constraints:
        task="ner|parsing",
        pair="|".join(FIG5_PAIRS) or "NONE",
        layer=r"\d+",
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("finetune")
    resources:
        **res("finetune"),
    params:
        spec=figure5_job,
        layer=lambda w: int(w.layer),
        top_k=config["finetune"]["top_k"],
        top={
            "dim": config["model"]["dim"],
            "heads": config["model"]["heads"],
            "ffn": config["model"]["ffn_dim"],
            "layers": FIG5["new_layers"],
            "dropout": FIG5["dropout"],
        },
    script:
        "../scripts/transfer.py"
