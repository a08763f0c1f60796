# The report stage, Section 5: Figures 4-8 (all of them, and each alone as target
# wu2020_figure<N>) and the shared-space curve, from the analysis stages' result files.

SECTION5 = "3. Section 5: monolingual models"


def figure_files(name, number, folder=None):
    """A figure's PNG, PDF and CSV of its plotted points (keys ``<name>_png``, ``<name>_pdf``,
    ``<name>_csv``; ``png``, ``pdf``, ``csv`` without a name). In R/report/ the PNG and the CSV are
    shown in the Snakemake report; a folder's copies are not."""
    key = f"{name}_" if name else ""
    base = f"{R}/report/{folder}" if folder else f"{R}/report"
    png, pdf, csv = (f"{base}/figure{number}.{ext}" for ext in ("png", "pdf", "csv"))
    if not folder:
        png, csv = (report(f, category=SECTION5, caption=caption(f"wu2020_figure{number}.rst")) for f in (png, csv))
    return {f"{key}png": png, f"{key}pdf": pdf, f"{key}csv": csv}


def section5_figures():
    """Figure number -> (the results it shows, its files under R/report/figures/ by output name)."""
    r = section5_results()
    figs = {
        "4": (
            r["words"],
            {
                **figure_files("fig4a", "4a", "figures"),
                **figure_files("fig4b", "4b", "figures"),
                "csv": f"{R}/report/figures/figure4.csv",
            },
        ),
        "6": (r["retrieval"], figure_files("", 6, "figures")),
        "7": (r["cka"], figure_files("", 7, "figures")),
    }
    if FIG5_PAIRS:
        figs["5"] = (r["transfer"], figure_files("", 5, "figures"))
        figs["8"] = (r["transfer"], figure_files("", 8, "figures"))
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
            note=REPORT_NOTE,
        script:
            "../scripts/section5_figure.py"


rule analysis_report:
    input:
        **section5_results(),
    output:
        **figure_files("fig4a", "4a"),
        **figure_files("fig4b", "4b"),
        **({**figure_files("fig5", 5), **figure_files("fig8", 8)} if FIG5_PAIRS else {}),
        **figure_files("fig6", 6),
        **figure_files("fig7", 7),
        # both directions of 4a and 4b, as analysis.md's tables
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
        note=REPORT_NOTE,
    script:
        "../scripts/analysis_report.py"


rule shared_space_report:
    input:
        [f"{R}/analysis/shared_space/{s}/{p}/seed{seed}.json" for s, p, seed in SHARED_MODELS],
    output:
        shared_png=report(f"{R}/report/shared_space.png", category=SECTION5, caption=caption("wu2020_shared_space.rst")),
        shared_pdf=f"{R}/report/shared_space.pdf",
        shared_csv=report(f"{R}/report/shared_space.csv", category=SECTION5, caption=caption("wu2020_shared_space.rst")),
    log:
        f"{LOGS}/report/shared_space.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        labels={s: config["settings"][s]["label"] for s in SHARED_SPACE["settings"]},
        note=REPORT_NOTE,
    script:
        "../scripts/shared_space_report.py"


def analysis_report_targets():
    """Figures 4-8 and the shared-space curve, where the config has them (rule all)."""
    return [
        *(rules.analysis_report.output if AN_TARGETS else ()),
        *(rules.shared_space_report.output if SHARED_MODELS else ()),
    ]
