# The report stage, Section 5: Figures 4-8 (all of them, and each alone as target
# wu2020_figure<N>) and the shared-space curve, from the analysis stages' result files.

SECTION5 = "3. Section 5: monolingual models"


def figure_pair(name, number, folder=None):
    """A figure's PNG and PDF (keys ``<name>_png``, ``<name>_pdf``; ``png``, ``pdf`` without a
    name). In R/report/ the PNG is shown in the Snakemake report; a folder's copy is not."""
    key = f"{name}_" if name else ""
    base = f"{R}/report/{folder}" if folder else f"{R}/report"
    png, pdf = f"{base}/figure{number}.png", f"{base}/figure{number}.pdf"
    if not folder:
        png = report(png, category=SECTION5, caption=caption(f"wu2020_figure{number}.rst"))
    return {f"{key}png": png, f"{key}pdf": pdf}


def section5_figures():
    """Figure number -> (the results it shows, its files under R/report/figures/ by output name)."""
    r = section5_results()
    figs = {
        "4": (
            r["words"],
            {
                **figure_pair("fig4a", "4a", "figures"),
                **figure_pair("fig4b", "4b", "figures"),
                "csv": f"{R}/report/figures/figure4.csv",
            },
        ),
        "6": (r["retrieval"], figure_pair("", 6, "figures")),
        "7": (r["cka"], figure_pair("", 7, "figures")),
    }
    if FIG5_PAIRS:
        figs["5"] = (r["transfer"], {**figure_pair("", 5, "figures"), "csv": f"{R}/report/figures/figure5.csv"})
        figs["8"] = (r["transfer"], figure_pair("", 8, "figures"))
    return figs if AN_TARGETS else {}


for _n, (_results, _files) in section5_figures().items():

    rule:
        name:
            f"wu2020_figure{_n}"
        input:
            results=_results,
        output:
            **_files,
        log:
            f"{LOGS}/report/figures/figure{_n}.log",
        conda:
            "../../envs/report.yaml"
        threads: 1
        resources:
            **res_single("report"),
        params:
            figure=_n,
            note=DEMO_NOTE,
        script:
            "../scripts/section5_figure.py"


rule analysis_report:
    input:
        **section5_results(),
    output:
        **figure_pair("fig4a", "4a"),
        **figure_pair("fig4b", "4b"),
        **(
            {**figure_pair("fig5", 5), **figure_pair("fig8", 8), "fig5_csv": f"{R}/report/figure5.csv"}
            if FIG5_PAIRS
            else {}
        ),
        **figure_pair("fig6", 6),
        **figure_pair("fig7", 7),
        fig4_csv=f"{R}/report/figure4.csv",
        tables_md=report(f"{R}/report/analysis.md", category=SECTION5, caption=caption("wu2020_analysis.rst")),
    log:
        f"{LOGS}/report/analysis.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        note=DEMO_NOTE,
    script:
        "../scripts/analysis_report.py"


rule shared_space_report:
    input:
        [f"{R}/analysis/shared_space/{s}/{p}/seed{seed}.json" for s, p, seed in SHARED_MODELS],
    output:
        shared_png=report(f"{R}/report/shared_space.png", category=SECTION5, caption=caption("wu2020_shared_space.rst")),
        shared_pdf=f"{R}/report/shared_space.pdf",
        shared_csv=f"{R}/report/shared_space.csv",
    log:
        f"{LOGS}/report/shared_space.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        labels={s: config["settings"][s]["label"] for s in SHARED_SPACE["settings"]},
        note=DEMO_NOTE,
    script:
        "../scripts/shared_space_report.py"


def analysis_report_targets():
    """Figures 4-8 and the shared-space curve, where the config has them (rule all)."""
    return [
        *(rules.analysis_report.output if AN_TARGETS else ()),
        *(rules.shared_space_report.output if SHARED_MODELS else ()),
    ]
