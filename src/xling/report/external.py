"""The report of Section 5 on ``transformers`` checkpoints (``analysis.external_models``): Figure 6's
and Figure 7's points of every external row, each row marked with its role and its models (their
directories and the sha256 of their weights), their tables, and the paper's Section 5 claims
checked on each row with the same statistics as for the pipeline's own models
(:mod:`xling.report.findings`)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from xling.io import atomic_write
from xling.metrics.intervals import Interval, wilson_interval
from xling.report.analysis_figures import FIGURE7_FIELDS, check_figure6, figure7_rows, layer_average
from xling.report.csvout import write_rows_csv
from xling.report.findings import (
    EVERY_LAYER,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_RUN,
    RETRIEVAL_CLAIM,
    Finding,
    findings_csv,
    findings_markdown,
    layerwise_claim,
    retrieval_finding,
)

ROW_FIELDS = ["row", "label", "role", "source_model", "source_sha256", "target_model", "target_sha256"]
FIGURE6_FIELDS = ["pair", "source", "target", "kind", "layer", "p_at_1", "p_at_1_unaligned", "p_at_1_raw",
                  "p_at_1_shifted", "n_train", "n_test"]


def by_row(results: Sequence[dict]) -> dict[str, list[dict]]:
    """Results grouped by their external row, rows in the order first seen."""
    out: dict[str, list[dict]] = {}
    for r in results:
        if "external" not in r:
            raise ValueError(f"result of pair {r.get('pair')!r} is not an external row's (no 'external' record)")
        out.setdefault(r["external"]["row"], []).append(r)
    return out


def _row_fields(r: dict) -> dict:
    """The row's marks on each point: its key, label, role, and the pair's two models: the source's
    (English, the pair's first language, as every result and the rules name it) and the target's."""
    ext, (src, tgt) = r["external"], r["pair"].split("-")
    models = ext["models"]
    return {"row": ext["row"], "label": ext["label"], "role": ext["role"],
            "source_model": models[src]["path"], "source_sha256": models[src]["sha256"],
            "target_model": models[tgt]["path"], "target_sha256": models[tgt]["sha256"]}


def _trained_kind(r: dict) -> str:
    """Figure 7's name of a row's trained reading: a monolingual pair, or one multilingual model."""
    return "bilingual" if r["external"]["role"] == "multilingual" else "monolingual"


def figure6_points(results: Sequence[dict]) -> list[dict]:
    """One row per (external row, pair, kind, layer): P@1 after the map, and without one (after the
    iterative normalisation; for a multilingual model also raw and after the mean-difference
    shift, empty otherwise); ``kind`` the trained models' (monolingual, or bilingual for one
    multilingual model) or ``random`` (the same models untrained)."""
    out = []
    for rows in by_row(results).values():
        for r in check_figure6(rows):
            n = len(r["layers"])
            kinds = [(_trained_kind(r), r)] + ([("random", r["random"])] if r["random"] else [])
            for kind, values in kinds:
                extra = {k: values.get(k) or [None] * n for k in ("p_at_1_unaligned", "p_at_1_raw", "p_at_1_shifted")}
                out += [{**_row_fields(r), "pair": r["pair"], "source": r["source"], "target": r["target"],
                         "kind": kind, "layer": layer, "p_at_1": values["p_at_1"][i],
                         **{k: v[i] for k, v in extra.items()}, "n_train": r["n_train"], "n_test": r["n_test"]}
                        for i, layer in enumerate(r["layers"])]
    return out


def figure7_points(results: Sequence[dict]) -> list[dict]:
    """Figure 7's cells (:func:`xling.report.analysis_figures.figure7_rows`) of every external row,
    marked with the row and its models."""
    out = []
    for rows in by_row(results).values():
        marks = {r["pair"]: _row_fields(r) for r in rows}
        out += [{**marks[c["pair"]], **c} for c in figure7_rows(rows)]
    return out


def _best(values: Sequence[float | None]) -> str:
    present = [(v, i) for i, v in enumerate(values) if v is not None]
    if not present:
        return "–"
    v, i = max(present)
    return f"{v:.1f} (L{i})"


def section5_markdown(retrieval: Sequence[dict], cka: Sequence[dict]) -> str:
    """Per row: its models, then Figure 6's best layers and Figure 7's layer averages per pair."""
    out = ["# Section 5 on external checkpoints", ""]
    fig6, fig7 = by_row(retrieval), by_row(cka)
    for row in dict.fromkeys([*fig6, *fig7]):
        first = (fig6.get(row) or fig7[row])[0]["external"]
        out += [f"## {first['label']} ({first['role']})", ""]
        models = {lang: m for r in fig6.get(row, []) + fig7.get(row, []) for lang, m in r["external"]["models"].items()}
        out += [f"- {lang}: `{m['path']}` (sha256 {m['sha256'][:12]})" for lang, m in models.items()] + [""]
        if fig6.get(row):
            out += ["| Pair | P@1 after the map, best layer | random encoder, best layer | without (normalised) | raw |"
                    " mean-difference shift | Tatoeba pairs |", "|---|---|---|---|---|---|---|"]
            for r in check_figure6(fig6[row]):
                out.append(f"| {r['pair']} | {_best(r['p_at_1'])} | {_best((r['random'] or {}).get('p_at_1') or [])} | "
                           f"{_best(r['p_at_1_unaligned'])} | {_best(r.get('p_at_1_raw') or [])} | "
                           f"{_best(r.get('p_at_1_shifted') or [])} | {r['n_test']} |")
            out.append("")
        if fig7.get(row):
            out += ["| Pair | Kind | CKA, mean over layers | length-controlled | random encoder |",
                    "|---|---|---|---|---|"]
            for r in fig7[row]:
                kind = "bilingual" if r["cka"].get("bilingual") is not None else "monolingual"
                lc = (r.get("length_controlled") or {}).get("cka") or {}

                def avg(v):
                    a = layer_average(v)
                    return "–" if a is None else f"{a:.3f}"
                out.append(f"| {r['pair']} | {kind} | {avg(r['cka'][kind])} | {avg(lc.get(kind))} | "
                           f"{avg(r['cka']['random'])} |")
            out.append("")
    out.append("Best layer: the highest P@1 over the layers (L0: the embeddings). The random encoder reads the "
               "target side with the target model's architecture, untrained (Figure 6: mapped onto the source "
               "model as the trained one is; Figure 7: beside the source model).")
    return "\n".join(out) + "\n"


def external_findings(retrieval: Sequence[dict], cka: Sequence[dict]) -> list[Finding]:
    """Per row: Figure 6's claim (the best layer's P@1 after the map above the random encoder's,
    Newcombe's paired interval),
    Figure 7's (the trained model's CKA above the random encoder's at every layer, bootstrap
    intervals), and for a multilingual row Liu et al.'s (the mean-difference shift improves
    retrieval without a map: :func:`_shift_finding`)."""
    out = []
    fig6, fig7 = by_row(retrieval), by_row(cka)
    for row in dict.fromkeys([*fig6, *fig7]):
        label = (fig6.get(row) or fig7[row])[0]["external"]["label"]
        if fig6.get(row):
            claim = RETRIEVAL_CLAIM if fig6[row][0]["external"]["role"] == "monolingual" else \
                ("6. One orthogonal map aligns the model's languages better than the same architecture untrained "
                 "(Fig. 6)")
            f = retrieval_finding({r["pair"]: r for r in fig6[row]}, claim=f"{label}: {claim}")
            out.append(f)
            shifted = [r for r in fig6[row] if r.get("p_at_1_shifted")]
            if shifted:
                out.append(_shift_finding(label, shifted))
        if fig7.get(row):
            by_pair = {r["pair"]: r for r in fig7[row]}
            kind = "bilingual" if all(r["cka"].get("bilingual") is not None for r in fig7[row]) else "monolingual"
            status, iv, detail = layerwise_claim(by_pair, list(by_pair), kind, "random")
            out.append(Finding(f"{label}: 7. CKA: the trained model above a random encoder at every layer (Fig. 7)",
                               f"{kind} - random CKA at the weakest (pair, layer), 95% bootstrap interval", iv,
                               status, detail, number="{:+.3f}", holds_when=EVERY_LAYER))
    return out


def _shift_finding(label: str, results: Sequence[dict]) -> Finding:
    """Liu et al. 2020: shifting one language's representations by the difference of the two
    languages' means makes a multilingual model's sentences retrieve their translations better
    without any map. Per pair at the layer where the shift scores best: holds when its Wilson
    interval lies above the raw one's, does not hold when below."""
    parts, verdicts, weakest = [], [], None
    for r in results:
        n = int(r["n_test"])
        layer = max(range(len(r["p_at_1_shifted"])), key=r["p_at_1_shifted"].__getitem__)
        a = wilson_interval(round(r["p_at_1_shifted"][layer] * n / 100), n)
        b = wilson_interval(round(r["p_at_1_raw"][layer] * n / 100), n)
        diff = Interval(a.estimate - b.estimate, None, None, n)
        above = a.low is not None and b.high is not None and a.low > b.high
        below = a.high is not None and b.low is not None and a.high < b.low
        verdicts.append(HOLDS if above else FAILS if below else INCONCLUSIVE)
        parts.append(f"{r['pair']} L{layer}: {a.estimate:.1f} vs {b.estimate:.1f}")
        if weakest is None or diff.estimate < weakest.estimate:
            weakest = diff
    status = (HOLDS if all(v == HOLDS for v in verdicts) else FAILS if any(v == FAILS for v in verdicts)
              else INCONCLUSIVE) if verdicts else NOT_RUN
    return Finding(f"{label}: Liu et al.: the mean-difference shift improves retrieval without a map",
                   "P@1 shifted - raw at the shift's best layer, weakest pair (points; Wilson intervals compared)",
                   weakest, status, "; ".join(parts),
                   holds_when="every pair's shifted Wilson interval above the raw one's (below it: does not hold)")


def write_external_report(retrieval: Sequence[dict], cka: Sequence[dict], figure6_csv: Path, figure7_csv: Path,
                          section5_md: Path, findings_md: Path, findings_csv_path: Path) -> list[Finding]:
    write_rows_csv(figure6_points(retrieval), ROW_FIELDS + FIGURE6_FIELDS, figure6_csv)
    write_rows_csv(figure7_points(cka), ROW_FIELDS + FIGURE7_FIELDS, figure7_csv)
    with atomic_write(section5_md) as fh:
        fh.write(section5_markdown(retrieval, cka))
    found = external_findings(retrieval, cka)
    with atomic_write(findings_md) as fh:
        fh.write(findings_markdown(found, []))
    with atomic_write(findings_csv_path) as fh:
        fh.write(findings_csv(found))
    return found
