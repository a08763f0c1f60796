"""Every figure of the report has a CSV beside it: one row per plotted point, with its interval where
it has one, written from the results the figure is drawn from. Small synthetic results, each row
checked against the JSON it came from; the results bundle carries the CSVs, and a report rebuilt
from the bundle's results writes them byte for byte."""

from __future__ import annotations

import csv
import json
import math
import runpy
from pathlib import Path
from types import SimpleNamespace

import pytest

from support import archive
from xling.config import REPO
from xling.errors import InputError
from xling.report import build_report
from xling.report.analysis_figures import figure6_rows, figure7_rows, write_figure6_csv, write_figure7_csv
from xling.report.bundle import check_bundle, unpack_bundle, write_bundle
from xling.report.liu_translation import figure7_8_rows, write_figure7_8_csv
from xling.report.liu_xnli import CHANCE, write_xnli_figure_csv, xnli_figure_rows, xnli_rows
from xling.report.transfer_figures import figure5_rows, figure8_rows
from xling.report.word_figures import figure4a_rows, figure4b_rows


def read_csv(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def shown(v) -> str:
    """A value as the report's CSVs write it (4 decimals, empty for none)."""
    return "" if v is None else str(round(v, 4)) if isinstance(v, float) else str(v)


def assert_csv_is_rows(path: Path, rows: list[dict]) -> None:
    got = read_csv(path)
    assert len(got) == len(rows) and rows
    for g, r in zip(got, rows):
        assert g == {k: shown(r[k]) for k in g}, (g, r)


# ---------------------------------------------------------------- Figure 3


def test_figure3_csv_is_each_bar_with_its_interval_over_the_seeds(tmp_path):
    """Two fine-tuning seeds per cell (one grid cell): a bar is their mean, its interval Student's
    t with one degree of freedom; NER en-ru was not run (its bars: no score, the reason)."""
    scores = {("default", "en-fr", "xnli"): (70.0, 74.0), ("default", "en-ru", "xnli"): (60.0, 61.0),
              ("sep_emb", "en-fr", "xnli"): (50.0, 56.0), ("sep_emb", "en-ru", "xnli"): (40.0, 40.5),
              ("default", "en-fr", "ner"): (30.0, 34.0), ("sep_emb", "en-fr", "ner"): (20.0, 21.0)}
    root = tmp_path / "finetune"
    for (setting, pair, task), values in scores.items():
        for seed, v in enumerate(values, 1):
            p = root / setting / pair / "seed1" / task / "bs32_lr1e-05" / f"seed{seed}" / "result.json"
            p.parent.mkdir(parents=True)
            p.write_text(json.dumps({"en_dev": 80.0, "tgt_test": v}))
    why = "needs licensed data: levow"
    out = tmp_path / "report"
    build_report(root, out, ["default", "sep_emb"], {"default": "Default", "sep_emb": "Sep Emb"}, ["en-fr", "en-ru"],
                 ["xnli", "ner"], top_k=2, unavailable={"ner": {"ru": why}})
    rows = read_csv(out / "figure3.csv")
    assert len(rows) == 2 * 2 * 2  # task x target x setting: one per bar
    t975 = 12.706204736174696  # Student's t, 0.975 quantile, 1 degree of freedom
    for r in rows:
        key = (r["setting"], f"en-{r['target']}", r["task"])
        if key not in scores:
            assert r["score"] == r["low"] == r["high"] == "" and r["note"] == why and r["replicates"] == "0"
            continue
        a, b = scores[key]
        half = t975 * abs(a - b) / math.sqrt(2) / math.sqrt(2)  # sd of two values = |a - b| / sqrt(2)
        assert float(r["score"]) == pytest.approx((a + b) / 2, abs=1e-4)
        assert float(r["low"]) == pytest.approx((a + b) / 2 - half, abs=1e-4)
        assert float(r["high"]) == pytest.approx((a + b) / 2 + half, abs=1e-4)
        assert (r["replicates"], r["result_files"], r["note"]) == ("2", "2", "")
        assert r["label"] == {"default": "Default", "sep_emb": "Sep Emb"}[r["setting"]]


# ---------------------------------------------------------------- Section 5 (Figures 4-8)


def words(pair: str, base: float) -> dict:
    """A Figure 4 result: forward scores from ``base``, reverse ones 50 above (never plotted)."""
    def scores(x: float) -> dict:
        return {d: {"p_at_1": x + (50.0 if d == "reverse" else 0.0), "train_pairs": 300, "test_sources": 40,
                    "vocab": [700, 600]} for d in ("forward", "reverse")}
    src, tgt = pair.split("-")
    return {"pair": pair, "forward": f"{src}->{tgt}", "reverse": f"{tgt}->{src}",
            "embedding": {"mlm": scores(base), "fasttext": scores(base + 1)},
            "contextual": {"layers": [0, 1, 2], "mlm": [scores(base + 2 + i) for i in range(3)],
                           "fasttext": scores(base + 9)}}


def transfer(task: str, pair: str, layer: int) -> dict:
    return {"task": task, "pair": pair, "layer": layer, "metric": "f1",
            "tgt_test": {"mlm_align": 10.0 + layer, "bimlm": 20.0 + layer, "bimlm_w": 30.0 + layer},
            "en_dev": {"mlm_align": 80.0, "bimlm": 81.0, "bimlm_w": 82.0}}


def retrieval(pair: str, p_at_1: list, random: list | None = None) -> dict:
    src, tgt = pair.split("-")
    out = {"pair": pair, "source": src, "target": tgt, "map": "target onto source", "layers": [0, 1, 2],
           "p_at_1": p_at_1, "n_train": 100, "n_test": 50}
    if random:
        out.update(random={"seed": 1001, "p_at_1": random}, paired={
            "trained_layer": 0, "random_layer": 2, "both": 5, "trained_only": 15, "random_only": 3, "neither": 27})
    return out


def cka(pair: str, bilingual: bool = True) -> dict:
    mono, bi, rnd = [0.5, 0.4, 0.3], [0.6, 0.5, 0.45], [0.2, 0.2, 0.1]
    iv = {k: [[v - 0.01, v + 0.02] for v in vals] for k, vals in (("monolingual", mono), ("bilingual", bi),
                                                                   ("random", rnd))}
    lc = {"monolingual": [0.25, 0.2, 0.15], "bilingual": [0.3, 0.25, 0.2], "random": [0.05, 0.04, 0.03]}
    if not bilingual:
        bi, iv["bilingual"], lc["bilingual"] = None, None, None
    return {"pair": pair, "layers": [0, 1, 2], "n": 200,
            "cka": {"monolingual": mono, "bilingual": bi, "random": rnd}, "cka_interval": iv,
            "length_controlled": {"cka": lc, "cka_interval": {k: v and [[x - 0.03, x + 0.01] for x in v]
                                                              for k, v in lc.items()}}}


FIG4 = [words("en-fr", 10.0), words("en-de", 20.0)]
FIG5 = [transfer(t, p, i) for t in ("ner", "parsing") for p in ("en-fr", "en-de") for i in (0, 2)]
FIG6 = [retrieval("en-fr", [40.0, None, 30.5], random=[4.0, 6.0, 8.0]), retrieval("en-de", [35.0, 33.0, 31.0])]
FIG7 = [cka("en-fr"), cka("en-en_prime", bilingual=False)]


def test_figure4_csvs_are_the_plotted_direction_of_each_bar_and_point():
    rows = figure4a_rows(FIG4)
    by = {(r["pair"], r["vectors"]): r for r in rows}
    assert len(rows) == len(by) == 2 * 2  # per pair: MLM embeddings and fastText
    for res in FIG4:
        assert by[(res["pair"], "mlm_embedding")]["p_at_1"] == res["embedding"]["mlm"]["forward"]["p_at_1"]
        assert by[(res["pair"], "fasttext")]["p_at_1"] == res["embedding"]["fasttext"]["forward"]["p_at_1"]
        assert by[(res["pair"], "fasttext")]["direction"] == res["forward"]
    rows = figure4b_rows(FIG4)
    assert len(rows) == 2 * (3 + 1)  # per pair: each layer, then fastText's dashed line (no layer)
    for res in FIG4:
        mine = [r for r in rows if r["pair"] == res["pair"]]
        assert [(r["vectors"], r["layer"]) for r in mine] == [("mlm_contextual", 0), ("mlm_contextual", 1),
                                                              ("mlm_contextual", 2), ("fasttext", None)]
        assert [r["p_at_1"] for r in mine] == [s["forward"]["p_at_1"] for s in res["contextual"]["mlm"]] + [
            res["contextual"]["fasttext"]["forward"]["p_at_1"]]
    # en-de before en-fr: the paper's pair order, as the figure draws them
    assert [r["pair"] for r in figure4a_rows(FIG4)][::2] == ["en-fr", "en-de"]


def test_figures_5_and_8_csvs_are_their_two_models_per_task_pair_and_layer():
    for rows, models in ((figure5_rows(FIG5), {"mlm_align", "bimlm"}), (figure8_rows(FIG5), {"bimlm_w", "bimlm"})):
        assert len(rows) == 2 * len(FIG5) and {r["model"] for r in rows} == models
        source = {(r["task"], r["pair"], r["layer"]): r for r in FIG5}
        for row in rows:
            res = source[(row["task"], row["pair"], row["layer"])]
            assert row["tgt_test"] == res["tgt_test"][row["model"]] and row["en_dev"] == res["en_dev"][row["model"]]


def test_figure6_csv_is_each_pairs_p_at_1_per_layer_missing_left_empty(tmp_path):
    rows = figure6_rows(FIG6)
    assert [(r["pair"], r["kind"], r["layer"], r["p_at_1"]) for r in rows] == [
        ("en-fr", "monolingual", 0, 40.0), ("en-fr", "monolingual", 1, None), ("en-fr", "monolingual", 2, 30.5),
        ("en-fr", "random", 0, 4.0), ("en-fr", "random", 1, 6.0), ("en-fr", "random", 2, 8.0),
        ("en-de", "monolingual", 0, 35.0), ("en-de", "monolingual", 1, 33.0), ("en-de", "monolingual", 2, 31.0)]
    # one meaning: source is English (the pair's first), the language the target is mapped onto
    assert {(r["source"], r["target"]) for r in rows} == {("en", "fr"), ("en", "de")}
    write_figure6_csv(FIG6, tmp_path / "figure6.csv")
    assert_csv_is_rows(tmp_path / "figure6.csv", rows)
    assert read_csv(tmp_path / "figure6.csv")[1]["p_at_1"] == ""
    # a result from before the map was recorded named the mapped language "source": read the other way
    old = {**FIG6[1], "source": "de", "target": "en"}
    del old["map"]
    assert {(r["source"], r["target"]) for r in figure6_rows([old])} == {("en", "de")}


def test_figure7_csv_is_each_cell_with_its_bootstrap_interval_and_the_length_controlled_cka(tmp_path):
    rows = figure7_rows(FIG7)
    # the kinds drawn, then the pairs in the paper's order (en-en' first), each layer and the Average
    assert [(r["kind"], r["pair"], r["layer"]) for r in rows[:8]] == [
        ("monolingual", "en-en_prime", 0), ("monolingual", "en-en_prime", 1), ("monolingual", "en-en_prime", 2),
        ("monolingual", "en-en_prime", "average"), ("monolingual", "en-fr", 0), ("monolingual", "en-fr", 1),
        ("monolingual", "en-fr", 2), ("monolingual", "en-fr", "average")]
    assert len(rows) == 3 * 2 * (3 + 1)
    source = {r["pair"]: r for r in FIG7}
    for row in rows:
        res, kind = source[row["pair"]], row["kind"]
        if res["cka"][kind] is None:  # en-en' has no bilingual model: grey cells in the figure
            assert row["cka"] is row["low"] is row["length_controlled_cka"] is None
            continue
        if row["layer"] == "average":
            assert row["cka"] == pytest.approx(sum(res["cka"][kind]) / 3)
            assert row["length_controlled_cka"] == pytest.approx(sum(res["length_controlled"]["cka"][kind]) / 3)
            assert row["low"] is row["high"] is None
            continue
        i = row["layer"]
        assert row["cka"] == res["cka"][kind][i] and row["n"] == res["n"]
        assert [row["low"], row["high"]] == res["cka_interval"][kind][i]
        assert row["length_controlled_cka"] == res["length_controlled"]["cka"][kind][i]
        assert [row["length_controlled_low"], row["length_controlled_high"]] == \
            res["length_controlled"]["cka_interval"][kind][i]
    write_figure7_csv(FIG7, tmp_path / "figure7.csv")
    assert_csv_is_rows(tmp_path / "figure7.csv", rows)
    # results from before the bootstrap and the length control: the cells, without those columns
    old = [{k: v for k, v in r.items() if k not in ("cka_interval", "length_controlled")} for r in FIG7]
    assert {(r["low"], r["length_controlled_cka"]) for r in figure7_rows(old)} == {(None, None)}
    bad = {**FIG7[0], "cka_interval": {**FIG7[0]["cka_interval"], "monolingual": [[0.1, 0.2]]}}
    with pytest.raises(ValueError, match=r"'en-fr'.*cka_interval.*monolingual"):
        figure7_rows([bad])


def namedlist(d: dict):
    from snakemake.iocontainers import Namedlist

    return Namedlist(fromdict=d)


def test_the_section5_report_writes_each_figures_csv_from_the_results_it_draws(tmp_path):
    """workflow/scripts/analysis_report.py as Snakemake runs it: every figure with its CSV."""
    inputs = {}
    for key, results in (("words", FIG4), ("transfer", FIG5), ("retrieval", FIG6), ("cka", FIG7)):
        inputs[key] = []
        for i, r in enumerate(results):
            inputs[key].append(str(tmp_path / "in" / f"{key}{i}.json"))
            Path(inputs[key][-1]).parent.mkdir(exist_ok=True)
            Path(inputs[key][-1]).write_text(json.dumps(r))
    out = tmp_path / "report"
    outputs = {f"fig{n}_{ext}": str(out / f"figure{n}.{ext}") for n in ("4a", "4b", 5, 6, 7, 8)
               for ext in ("png", "pdf", "csv")}
    outputs.update(fig4_csv=str(out / "figure4.csv"), tables_md=str(out / "analysis.md"))
    sm = SimpleNamespace(input=namedlist(inputs), output=namedlist(outputs), params=namedlist({"note": ""}),
                         log=[str(tmp_path / "analysis.log")], rule="analysis_report")
    runpy.run_path(str(REPO / "workflow/scripts/analysis_report.py"), init_globals={"snakemake": sm},
                   run_name="__snakemake__")
    assert sorted(p.name for p in out.iterdir()) == sorted(Path(f).name for f in outputs.values())
    for n, rows in (("4a", figure4a_rows(FIG4)), ("4b", figure4b_rows(FIG4)), ("5", figure5_rows(FIG5)),
                    ("6", figure6_rows(FIG6)), ("7", figure7_rows(FIG7)), ("8", figure8_rows(FIG5))):
        assert_csv_is_rows(out / f"figure{n}.csv", rows)


# ---------------------------------------------------------------- Liu et al.


def test_liu_figure7_8_csv_is_each_alpha_and_layer_then_the_unshifted_line(tmp_path):
    scores = [{"src": "en", "tgt": t, "alpha": a, "layer": layer, "convert_rate": 0.1 * a + 0.01 * layer,
               "bleu1": 10.0 * a + layer} for t in ("fr", "de") for a in (2.0, 1.0) for layer in (1, 2, 3)]
    scores += [{"src": "en", "tgt": t, "alpha": 0.0, "layer": 3, "convert_rate": 0.0, "bleu1": 5.0}
               for t in ("fr", "de")]
    result = {"model": "mlm_full", "size": 1000, "scores": scores}
    rows = figure7_8_rows(result, "en-fr")
    assert [(r["alpha"], r["layer"]) for r in rows] == [(1.0, 1), (1.0, 2), (1.0, 3), (2.0, 1), (2.0, 2), (2.0, 3),
                                                        (0.0, None)]
    for r in rows[:-1]:
        assert r["bleu1"] == 10.0 * r["alpha"] + r["layer"] and r["convert_rate"] == pytest.approx(
            0.1 * r["alpha"] + 0.01 * r["layer"])
        assert (r["model"], r["size"], r["direction"]) == ("mlm_full", 1000, "en-fr")
    assert rows[-1]["bleu1"] == 5.0
    write_figure7_8_csv(result, "en-fr", tmp_path / "f.csv")
    assert_csv_is_rows(tmp_path / "f.csv", rows)
    with pytest.raises(ValueError, match="no scores for en-zh"):
        figure7_8_rows(result, "en-zh")


def test_liu_xnli_figure_csv_is_each_bar_of_the_studys_models(tmp_path):
    def res(model, size, accs):
        return {"model": model, "size": size,
                "languages": {lang: {"dev": a - 1, "test": a, "alpha": 1.0, "mds_dev": a, "mds_test": a + 1}
                              for lang, a in accs.items()}}

    results = [res("mlm_full", 100, {"en": 60.0, "fr": 40.0}), res("mlm_w20", 100, {"en": 58.0, "fr": 45.0}),
               res("mbert", None, {"en": 80.0, "fr": 70.0})]
    rows = xnli_figure_rows(xnli_rows(results))
    assert [(r["model"], r["language"], r["test"]) for r in rows] == [
        ("mlm_full", "en", 60.0), ("mlm_full", "fr", 40.0), ("mlm_w20", "en", 58.0), ("mlm_w20", "fr", 45.0)]
    assert {r["chance"] for r in rows} == {CHANCE} and {r["size"] for r in rows} == {100}
    write_xnli_figure_csv(xnli_rows(results), tmp_path / "xnli.csv")
    assert_csv_is_rows(tmp_path / "xnli.csv", rows)


# ---------------------------------------------------------------- the bundle


def test_the_bundle_carries_the_figure_csvs_and_a_rebuilt_report_writes_them_byte_for_byte(tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    monkeypatch.chdir(run)
    inputs = []
    for key, results in (("retrieval", FIG6), ("cka", FIG7)):
        for r in results:
            p = Path(f"results/t/analysis/{key}/{r['pair']}.json")
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(json.dumps(r))
            inputs.append(str(p))

    def report(workdir: Path) -> list[Path]:
        """Figures 6 and 7's CSVs from the results under ``workdir``."""
        read = [json.loads(p.read_text()) for p in sorted((workdir / "results/t/analysis/retrieval").glob("*.json"))]
        out = [workdir / "results/t/report/figure6.csv", workdir / "results/t/report/figure7.csv"]
        write_figure6_csv(read, out[0])
        write_figure7_csv([json.loads(p.read_text()) for p in sorted((workdir / "results/t/analysis/cka").glob("*"))],
                          out[1])
        return out

    csvs = [str(p.relative_to(run)) for p in report(run)]
    cfg = {"run_name": "t", "bundle": None}
    manifest = write_bundle(inputs, "bundle.tar.gz", cfg, REPO, report=csvs)
    assert sorted(manifest["report"]) == sorted(csvs) and not set(csvs) & set(manifest["files"])
    bundle = check_bundle("bundle.tar.gz", cfg)
    assert bundle.report == sorted(csvs) and bundle.files == sorted(inputs)

    fresh = tmp_path / "fresh"
    written = unpack_bundle(run / "bundle.tar.gz", cfg, fresh)
    assert sorted(str(p.relative_to(fresh)) for p in written) == sorted(inputs)  # the results only
    assert not (fresh / "results/t/report").exists()
    carried = archive.members(run / "bundle.tar.gz")
    for path in report(fresh):
        assert path.read_bytes() == carried[str(path.relative_to(fresh))]

    # a carried CSV altered after the fact is named, as a result file is
    carried[csvs[0]] += b"x"
    archive.rewrite(tmp_path / "tampered.tar.gz", carried)
    with pytest.raises(InputError, match=f"tampered.tar.gz:{csvs[0]}: expected sha256"):
        check_bundle(tmp_path / "tampered.tar.gz", cfg)


# ---------------------------------------------------------------- the workflow


def test_every_figure_the_report_rules_draw_has_its_csv_declared_beside_it_and_in_the_bundle(tmp_path):
    from snakemake.api import SnakemakeApi
    from snakemake.settings import types

    with SnakemakeApi(types.OutputSettings(quiet={"all"})) as api:
        wapi = api.workflow(resource_settings=types.ResourceSettings(cores=1),
                            config_settings=types.ConfigSettings(configfiles=[REPO / "config/demo.yaml"]),
                            storage_settings=types.StorageSettings(), snakefile=REPO / "Snakefile", workdir=tmp_path)
        rules = {r.name: [str(f) for f in r.output] for r in wapi._workflow.rules}
        bundled = {str(f) for f in wapi._workflow.get_rule("bundle").input.report}
    figures = [(name, f) for name, files in rules.items() for f in files if f.endswith(".png")]
    assert len({f for _, f in figures}) >= 14  # Figures 3-8, the shared-space curve, Liu et al.'s, figures/
    for name, png in figures:
        assert png.removesuffix(".png") + ".csv" in rules[name], f"rule {name}: {png} without its CSV"
    beside = {f.removesuffix(".png") + ".csv" for _, f in figures if "/report/figures/" not in f}
    assert beside <= bundled
    # and the tables beside them: what the bundle carries is all the report writes but its drawings
    tables = {"table1.md", "table1.tex", "table1_vs_paper.md", "findings.md", "compute.md", "analysis.md"}
    assert tables <= {Path(f).name for f in bundled}
    assert not [f for f in bundled if not f.endswith((".md", ".csv", ".tex"))]
