# Liu et al. 2020, Section 4.2: token translation by the mean difference shift (every direction,
# layer and alpha) for each MLM, and for m-BERT where configured; Table 2, Figures 7-8.
# Outputs: R/liu/translation/, R/report/liu2020/table2.*, figure7_8.*

# What every token translation job is given, our MLMs' and m-BERT's alike
LIU_TRANSLATION = {
    "directions": [list(d) for d in LIU_DIRECTIONS],
    **{k: LIU["translation"][k] for k in ("alphas", "rows", "sentences", "token_sets", "max_seq_len", "batch_size")},
}


def liu_translation_inputs(w):
    """The MLM's files, the translated languages' training texts (and vocabularies when the convert
    rate's token sets are the training text's), XNLI-15way."""
    d = {**liu_mlm_files(w.size, w.window), "way15": downloaded("xnli_15way")}
    for l in LIU_TR_LANGS:
        d[f"text_{l}"] = f"{R}/liu/bpe/n{w.size}/{l}.train.bpe"
        if LIU["translation"]["token_sets"] == "training":
            d[f"vocab_{l}"] = f"{R}/liu/bin/n{w.size}/dict.{l}.txt"
    d.update(segmenter_inputs(*LIU_TR_LANGS))  # 15-way sentences are segmented as the corpus was
    return d


def liu_translation_mbert_inputs(w):
    """m-BERT's files, the translated languages' sample lines (the smallest size), XNLI-15way."""
    d = {"model": [downloaded(rid) for rid in LIU_MBERT["model_files"]], "way15": downloaded("xnli_15way")}
    for l in LIU_TR_LANGS:
        d[f"text_{l}"] = f"{R}/liu/corpus/n{min(LIU_SIZES)}/{l}.train.txt"
    return d


def liu_translation_results():
    """The token translation results the report reads: each MLM's, then m-BERT's when configured."""
    ours = [f"{R}/liu/translation/n{n}/{w}.json" for n in LIU_SIZES for w in LIU_WINDOWS]
    return ours + ([LIU_MBERT_RESULT] if LIU_MBERT else [])


rule liu_translation:
    """Token translation by the mean difference shift: every direction, layer and alpha."""
    input:
        unpack(liu_translation_inputs),
    output:
        result=f"{R}/liu/translation/n{{size}}/{{window}}.json",
    log:
        f"{LOGS}/liu/translation/n{{size}}/{{window}}.log",
    wildcard_constraints:
        size=r"\d+",
        window="|".join(LIU_WINDOWS),
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    params:
        **LIU_TRANSLATION,
        meta=lambda w: {"model": f"mlm_{w.window}", "size": int(w.size)},
        layers=liu2020.translation_layers(config),
        tokenize=tokenize_params(*LIU_TR_LANGS),
    script:
        "../scripts/liu_translation.py"


if LIU_MBERT:

    rule liu_translation_mbert:
        """Token translation by the mean difference shift on m-BERT itself: every direction, layer and alpha."""
        input:
            unpack(liu_translation_mbert_inputs),
        output:
            result=LIU_MBERT_RESULT,
        log:
            f"{LOGS}/liu/translation/mbert.log",
        conda:
            "../../envs/fairseq.yaml"
        threads: threads_of("analysis")
        resources:
            **res("analysis"),
        params:
            **LIU_TRANSLATION,
            meta={"model": "mbert", "size": None},
        script:
            "../scripts/liu_translation_mbert.py"


rule liu_translation_report:
    input:
        liu_translation_results(),
    output:
        table_md=f"{R}/report/liu2020/table2.md",
        table_csv=report(f"{R}/report/liu2020/table2.csv", category=LIU_CATEGORY, caption=caption("liu2020_table2.rst")),
        fig_png=report(
            f"{R}/report/liu2020/figure7_8.png", category=LIU_CATEGORY, caption=caption("liu2020_figure7_8.rst")
        ),
        fig_pdf=f"{R}/report/liu2020/figure7_8.pdf",
        fig_csv=report(
            f"{R}/report/liu2020/figure7_8.csv", category=LIU_CATEGORY, caption=caption("liu2020_figure7_8.rst")
        ),
    log:
        f"{LOGS}/report/liu2020_translation.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        labels=liu_model_labels(),
        layers=liu2020.model_section(config)["layers"],
        figure_direction=LIU["translation"]["figure_direction"],
        note=REPORT_NOTE,
    script:
        "../scripts/liu_translation_report.py"
