"""Replicates in Table 1 and the findings table, on hand-written result.json files."""

from __future__ import annotations

import csv
import json

import pytest

from xling.metrics.intervals import contrast_interval, t_interval
from xling.report import build_report
from xling.report.aggregate import aggregate, build_table1, replicate_values
from xling.report.collect import collect_results
from xling.report.findings import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_RUN,
    cka_findings,
    language_embedding_findings,
    retrieval_finding,
    table1_findings,
    write_findings,
)

SEP = {"default": (False, 0), "wiki_cc": (False, 0), "no_anchors": (False, 0), "extra_anchors": (False, 0),
       "sep_l1_6": (False, 6), "sep_emb_l1_6": (True, 6)}
SEPARATE = {s: {"embeddings": e, "layers": n} for s, (e, n) in SEP.items()}
SETTINGS = list(SEP)
LABELS = {s: s.replace("_", " ").title() for s in SETTINGS}
# XNLI test accuracy per pretraining seed (one pair, one grid cell, one fine-tuning seed):
# Default 60 ± little; Sep Emb + L1-6 at chance; No anchors a point below Default; Extra anchors
# indistinguishable from Default; Wiki-CC clearly *above* Default (claim 5 fails).
XNLI = {"default": [60.0, 61.0, 59.0], "wiki_cc": [66.0, 67.0, 65.5], "no_anchors": [59.0, 58.5, 59.5],
        "extra_anchors": [60.5, 58.0, 62.0], "sep_l1_6": [45.0, 46.0, 44.0], "sep_emb_l1_6": [33.0, 34.0, 33.5]}


def _write(root, setting, pair, task, hp, pseed, fseed, dev, test):
    p = root / setting / pair / f"seed{pseed}" / task / hp / f"seed{fseed}" / "result.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"en_dev": dev, "tgt_test": test}), encoding="utf-8")


@pytest.fixture()
def seeded(tmp_path):
    root = tmp_path / "finetune"
    for s, accs in XNLI.items():
        for seed, acc in zip((1, 2, 3), accs):
            _write(root, s, "en-fr", "xnli", "bs8", seed, 1, 70.0, acc)
            _write(root, s, "en-fr", "xnli", "bs4", seed, 1, 60.0, 0.0)  # worse on dev: never selected
    return root


def _table(root, top_k=1):
    return build_table1(aggregate(collect_results(root), top_k), SETTINGS, LABELS, ["en-fr"], ["xnli"])


def test_replicate_units():
    # one pretraining seed: the fine-tuning seeds are the replicates
    assert replicate_values({(1, 1): 1.0, (1, 2): 3.0}) == (1.0, 3.0)
    # several: one replicate per pretraining seed, its fine-tuning seeds averaged
    assert replicate_values({(1, 1): 1.0, (1, 2): 3.0, (2, 1): 5.0, (2, 2): 7.0}) == (2.0, 6.0)


def test_table1_cells_and_delta_carry_intervals(seeded, tmp_path):
    t = _table(seeded)
    iv = t.value_intervals[("default", "xnli", "fr")]
    assert iv.estimate == pytest.approx(60.0) and iv.n == 3
    assert iv.half_width == pytest.approx(t_interval(XNLI["default"]).half_width)
    d = t.delta_intervals[("no_anchors", "xnli")]
    assert d.estimate == pytest.approx(-1.0) == t.deltas[("no_anchors", "xnli")]
    assert d.half_width == pytest.approx(contrast_interval([XNLI["no_anchors"], XNLI["default"]], [1, -1]).half_width)
    assert t.delta_intervals[("default", "xnli")] is None  # the baseline has no Delta to test

    out = tmp_path / "report"
    build_report(seeded, out, SETTINGS, LABELS, ["en-fr"], ["xnli"], top_k=1)
    md = (out / "table1.md").read_text(encoding="utf-8")
    assert f"| Default | 60.0 ± {iv.half_width:.1f} | 0.0 |" in md
    assert "95% interval over 3 replicates" in md
    row = next(r for r in csv.DictReader((out / "table1.csv").open(encoding="utf-8")) if r["setting"] == "no_anchors")
    assert float(row["xnli_delta_low"]) == pytest.approx(d.low, abs=1e-4)
    assert float(row["xnli_fr_high"]) == pytest.approx(t.value_intervals[("no_anchors", "xnli", "fr")].high, abs=1e-4)


def test_one_replicate_prints_no_interval(seeded, tmp_path):
    for p in seeded.glob("*/*/seed[23]"):
        for f in sorted(p.rglob("*"), reverse=True):
            f.unlink() if f.is_file() else f.rmdir()
        p.rmdir()
    build_report(seeded, tmp_path, SETTINGS, LABELS, ["en-fr"], ["xnli"], top_k=1)
    md = (tmp_path / "table1.md").read_text(encoding="utf-8")
    assert "| Default | 60.0 | 0.0 |" in md and "±" not in md


def test_claims_on_planted_rows(seeded):
    found = {f.claim.split(".")[0]: f for f in table1_findings(_table(seeded), SEPARATE)}
    assert found["1"].status == HOLDS  # Sep Emb + L1-6 is far below every other row
    assert found["1"].estimate.estimate == pytest.approx(45.0 - 33.5)  # nearest: Sep L1-6
    assert found["1b"].status == HOLDS  # 33.5 ± 1.2 is within 5 points of chance
    assert found["2"].status == HOLDS  # both Sep rows below Default
    assert found["3"].status == HOLDS  # No anchors 59 > midpoint (60 + 45) / 2
    assert found["4"].status == INCONCLUSIVE  # Extra anchors 60.2 ± 5: straddles Default
    assert found["5"].status == FAILS  # Wiki-CC is clearly above Default here
    assert found["5"].per_task == {"xnli": FAILS}


def test_a_pair_trained_on_some_rows_is_judged_on_those(seeded):
    """A pair trained on the central rows only (config/real.yaml's en-de and en-ru): claims 1 and 2
    are judged on the rows it has, and say which they leave out, instead of not being judged."""
    central = {"default", "no_anchors", "sep_l1_6", "sep_emb_l1_6"}
    t = build_table1(aggregate([c for c in collect_results(seeded) if c.setting in central], 1),
                     SETTINGS, LABELS, ["en-fr"], ["xnli"])
    found = {f.claim.split(".")[0]: f for f in table1_findings(t, SEPARATE)}
    assert found["1"].status == HOLDS and found["1"].estimate.estimate == pytest.approx(45.0 - 33.5)
    assert found["1"].detail == ("nearest to failing: Sep L1 6; judged on the rows trained here, not on "
                                 "Wiki Cc, Extra Anchors")
    assert found["2"].status == HOLDS and found["2"].estimate.estimate == pytest.approx(60.0 - 45.0)
    assert "not on" not in found["2"].detail  # every Sep row of SEP is trained here
    assert found["4"].status == NOT_RUN  # a row the pair was not trained on is still said not run


def test_a_single_replicate_is_never_conclusive(seeded):
    t = build_table1(aggregate([c for c in collect_results(seeded) if c.pretrain_seed == 1], 1),
                     SETTINGS, LABELS, ["en-fr"], ["xnli"])
    assert {f.status for f in table1_findings(t, SEPARATE)} == {INCONCLUSIVE}


# Twins without language embeddings: No anchors holds up less well, but still loses less than half
# of Sep Emb + L1-6's loss (midpoint (60 + 33.5) / 2 = 46.75)
TWINS = {"default": "default_nl", "no_anchors": "no_anchors_nl", "sep_emb_l1_6": "sep_emb_l1_6_nl"}
XNLI_NL = {"default_nl": [59.0, 60.0, 61.5], "no_anchors_nl": [52.0, 53.5, 51.0], "sep_emb_l1_6_nl": [33.5, 33.0, 34.5]}


def test_the_central_finding_with_and_without_language_embeddings(seeded):
    """Claim 12: No anchors minus the midpoint of Default and Sep Emb + L1-6, and Default minus Sep
    Emb + L1-6, each with Welch intervals, for the rows and for their twins; the detail gives the
    difference of No anchors' gaps to Default."""
    for s, accs in XNLI_NL.items():
        for seed, acc in zip((1, 2, 3), accs):
            _write(seeded, s, "en-fr", "xnli", "bs8", seed, 1, 70.0, acc)
    settings = SETTINGS + list(XNLI_NL)
    t = build_table1(aggregate(collect_results(seeded), 1), settings, {s: s for s in settings}, ["en-fr"], ["xnli"])
    without, with_ = language_embedding_findings(t, TWINS, rows_have=True)
    assert without.claim == "12. The central finding holds without language embeddings"
    mid = contrast_interval([XNLI_NL["no_anchors_nl"], XNLI_NL["default_nl"], XNLI_NL["sep_emb_l1_6_nl"]],
                            [1.0, -0.5, -0.5])
    assert without.estimate.estimate == pytest.approx(mid.estimate) and without.estimate.low == pytest.approx(mid.low)
    assert without.status == with_.status == HOLDS
    effect = contrast_interval([XNLI["no_anchors"], XNLI["default"], XNLI_NL["no_anchors_nl"], XNLI_NL["default_nl"]],
                               [1.0, -1.0, -1.0, 1.0])
    assert f"{effect.estimate:+.1f} [{effect.low:+.1f}, {effect.high:+.1f}]" in with_.detail
    # the rows are the ones without when the model's default has none: the variants swap
    swapped = language_embedding_findings(t, TWINS, rows_have=False)
    assert swapped[0].estimate.estimate == pytest.approx(with_.estimate.estimate)
    assert language_embedding_findings(t, {"default": "default_nl"}, True) == []


def retrieval_result(pair: str, trained: list, random: list, paired: tuple, n: int = 1000) -> dict:
    """A Figure 6 job's result with its random-encoder baseline and the paired table (both, trained
    only, random only, neither) at the two best layers."""
    src, tgt = pair.split("-")
    return {"pair": pair, "source": src, "target": tgt, "map": "target onto source", "layers": [0, 1],
            "p_at_1": trained, "n_train": 100, "n_test": n, "random": {"seed": 1001, "p_at_1": random},
            "paired": dict(zip(("both", "trained_only", "random_only", "neither"), paired),
                           trained_layer=trained.index(max(trained)), random_layer=random.index(max(random)))}


def test_retrieval_claim_is_trained_minus_random_not_against_chance(seeded, tmp_path):
    """Claim 6 is judged against the random encoder with a paired interval: a pair far above chance
    but no better than its untrained architecture does not hold, whatever its ratio to chance."""
    ret = {"en-fr": retrieval_result("en-fr", [26.4, 20.0], [5.0, 4.0], (40, 224, 10, 726)),
           "en-zh": retrieval_result("en-zh", [6.0, 5.0], [6.1, 6.0], (50, 10, 11, 929))}
    f = retrieval_finding(ret)
    # en-zh: 60 of 1000 (60x chance), and the untrained encoder 61: no better than untrained
    assert f.status == INCONCLUSIVE and "en-zh" in f.detail and "vs random 6.1 (L0)" in f.detail
    assert f.estimate.estimate == pytest.approx(-0.1) and f.estimate.low < 0 < f.estimate.high
    assert f.holds_when.startswith("> 0") and "untrained" in f.claim
    only_fr = retrieval_finding({"en-fr": ret["en-fr"]})
    assert only_fr.status == HOLDS and only_fr.estimate.estimate == pytest.approx(21.4)
    worse = retrieval_finding({"en-zh": retrieval_result("en-zh", [6.0, 5.0], [16.0, 6.0], (50, 10, 110, 830))})
    assert worse.status == FAILS
    # results from before the baseline: the claim is not run, not judged against chance
    old = {"en-fr": {k: v for k, v in ret["en-fr"].items() if k not in ("random", "paired")}}
    assert retrieval_finding(old).status == NOT_RUN and "before it existed" in retrieval_finding(old).detail


def test_cka_claims_and_the_written_table(seeded, tmp_path):
    def cka(bi, mono, rnd):
        return {"cka": {"bilingual": bi, "monolingual": mono, "random": rnd}, "n": 100}

    c = {"en-fr": cka([0.9, 0.8, 0.7], [0.8, 0.7, 0.6], [0.2, 0.2, 0.2]),
         "en-zh": cka([0.7, 0.5, 0.55], [0.6, 0.6, 0.5], [0.2, 0.2, 0.2])}
    by = {x.claim: x for x in cka_findings(c, ["en-fr", "en-zh"])}
    bi_mono = by["7. CKA: bilingual ≥ monolingual at every layer (Fig. 7)"]
    assert bi_mono.status == FAILS and "en-zh L1" in bi_mono.detail  # 0.5 < 0.6, on point estimates
    assert "point estimates" in bi_mono.detail
    assert by["7. CKA: monolingual > random at every layer (Fig. 7)"].status == HOLDS
    assert by["7. CKA: monolingual similarity highest in the lower layers (Fig. 7)"].status == HOLDS
    assert by["7. CKA: the bilingual-monolingual gap shrinks with language distance (Fig. 7)"].status == HOLDS

    # with the job's bootstrap intervals: a positive difference whose interval reaches below 0 is
    # inconclusive; every interval above 0 holds
    c["en-zh"]["cka"]["bilingual"] = [0.7, 0.62, 0.55]  # L1: +0.02 ± 0.05
    for p, d in c.items():
        d["difference_interval"] = {
            "bilingual-monolingual": [(b - m - 0.05, b - m + 0.05) for b, m in zip(d["cka"]["bilingual"],
                                                                                 d["cka"]["monolingual"])],
            "monolingual-random": [(m - r - 0.01, m - r + 0.01) for m, r in zip(d["cka"]["monolingual"],
                                                                               d["cka"]["random"])]}
    by = {x.claim: x for x in cka_findings(c, ["en-fr", "en-zh"])}
    bi_mono = by["7. CKA: bilingual ≥ monolingual at every layer (Fig. 7)"]
    assert bi_mono.status == INCONCLUSIVE and bi_mono.estimate.estimate == pytest.approx(0.02)
    assert bi_mono.estimate.low == pytest.approx(-0.03) and "bootstrap" in bi_mono.detail
    assert by["7. CKA: monolingual > random at every layer (Fig. 7)"].status == HOLDS

    # a pair without a bilingual model (null) counts only for the monolingual checks
    c_none = {**c, "en-de": cka(None, [0.7, 0.6, 0.5], [0.1, 0.1, 0.1])}
    by = {x.claim: x for x in cka_findings(c_none, ["en-fr", "en-de", "en-zh"])}
    assert "en-de" not in by["7. CKA: bilingual ≥ monolingual at every layer (Fig. 7)"].detail
    assert "en-de" in by["7. CKA: monolingual > random at every layer (Fig. 7)"].detail

    # the length-controlled CKA, its own line (robustness beside the paper's measure)
    for d in c.values():
        rnd = [0.0, 0.01, 0.02]
        d["length_controlled"] = {"cka": {**d["cka"], "random": rnd}, "difference_interval": {
            "monolingual-random": [(m - r - 0.01, m - r + 0.01) for m, r in zip(d["cka"]["monolingual"], rnd)]}}
    by = {x.claim: x for x in cka_findings(c, ["en-fr", "en-zh"])}
    controlled = by["7. CKA, length-controlled: monolingual > random at every layer (robustness, not the paper's "
                    "measure)"]
    assert controlled.status == HOLDS and controlled.estimate.estimate == pytest.approx(0.48)  # en-zh L2
    c["en-zh"]["length_controlled"]["difference_interval"]["monolingual-random"][2] = (-0.1, -0.05)
    assert {x.claim: x for x in cka_findings(c, ["en-fr", "en-zh"])}[controlled.claim].status == FAILS
    c["en-fr"]["drift"] = {"monolingual": [0.081, 0.12], "bilingual": [0.2, 0.2], "random": [None, None]}

    md, csv_path = tmp_path / "findings.md", tmp_path / "findings.csv"
    ret = {"en-fr": retrieval_result("en-fr", [26.4, 20.0], [5.0, 4.0], (40, 224, 10, 726))}
    write_findings(_table(seeded), SEPARATE, md, csv_path, retrieval=ret, cka=c, cka_order=["en-fr", "en-zh"])
    text = md.read_text(encoding="utf-8")
    assert "| 5. Wiki-CC is below Default (the paper: it costs a little; judged by sign only) |" in text
    assert "**does not hold**" in text and "| Holds when |" in text
    rows = list(csv.DictReader(csv_path.open(encoding="utf-8")))
    assert len(rows) == 7 + 1 + 5 and rows[0]["n"] == "3"
    # every claim says the threshold it is judged by
    assert all(r["holds_when"] for r in rows), [r["claim"] for r in rows if not r["holds_when"]]
    # Section 5's rows say how far the models moved from their initial weights
    assert all("8.1-20.0% (relative norm) from their initial weights" in r["detail"] for r in rows[7:])


def test_findings_workflow_script(seeded, tmp_path):
    """workflow/scripts/findings.py with the objects Snakemake injects (no Section 5 results)."""
    import runpy
    from pathlib import Path
    from types import SimpleNamespace

    from snakemake.iocontainers import Namedlist

    results = [str(p) for p in sorted(seeded.rglob("result.json"))]
    sm = SimpleNamespace(
        input=Namedlist(fromdict={"results": results, "words": [], "transfer": [], "retrieval": [], "cka": []}),
        output=Namedlist(fromdict={"findings_md": str(tmp_path / "f.md"), "findings_csv": str(tmp_path / "f.csv")}),
        params=Namedlist(fromdict={"settings": SETTINGS, "labels": LABELS, "separate": SEPARATE, "pairs": ["en-fr"],
                                   "tasks": ["xnli"], "top_k": 1, "baseline": "default", "source": "en",
                                   "unavailable": {"ner": {}}, "cka_order": [], "note": "testbed",
                                   "language_twins": {"rows_have": True, "twins": {}}}),
        log=[str(tmp_path / "findings.log")], rule="findings",
    )
    script = Path(__file__).resolve().parents[1] / "workflow" / "scripts" / "findings.py"
    runpy.run_path(str(script), init_globals={"snakemake": sm}, run_name="__snakemake__")
    text = (tmp_path / "f.md").read_text(encoding="utf-8")
    assert text.startswith("testbed") and "| 2. Every Sep* row is below Default |" in text
    assert '"5. Wiki-CC is below Default (the paper: it costs a little; judged by sign only)": "does not hold"' in (
        tmp_path / "findings.log").read_text()


class _Replicates:
    """A row's replicates, averaged over the tasks (what transfer_share reads)."""

    def __init__(self, reps):
        self._reps = reps

    def reps(self, setting, task):
        return self._reps.get(setting)


def test_a_bimodal_row_is_summarised_by_the_share_of_its_models_that_transfer():
    """Claim 3b: each No anchors model judged alone against the midpoint of Default's and Sep
    L1-6's means (here 45); the share with Wilson's interval, holding only when the whole interval
    is above half, and each mode's mean beside the row's."""
    from xling.metrics.intervals import wilson_interval
    from xling.report.findings import transfer_share

    base = {"default": (60.0, 62.0, 58.0), "sep_l1_6": (30.0, 31.0, 29.0)}
    bimodal = tuple([55.0] * 13 + [24.0] * 2)  # 13 of 15 transfer
    f = transfer_share(_Replicates({**base, "no_anchors": bimodal}), "no_anchors", "default", "sep_l1_6", {})
    iv = wilson_interval(13, 15)
    assert f.estimate.estimate == pytest.approx(100 * 13 / 15) and f.estimate.low == pytest.approx(iv.low)
    assert f.status == HOLDS and iv.low > 50
    assert "13 of 15 transfer (above 45.0" in f.detail and "those that transfer 55.0 (n = 13)" in f.detail
    assert "of the others 24.0 (n = 2)" in f.detail and "of all 50.9 (n = 15)" in f.detail
    assert f.holds_when.startswith("> 50%")
    split = transfer_share(_Replicates({**base, "no_anchors": (55.0, 52.0, 24.0)}), "no_anchors", "default",
                           "sep_l1_6", {})
    assert split.status == INCONCLUSIVE and "2 of 3 transfer" in split.detail
    none = transfer_share(_Replicates({**base, "no_anchors": tuple([24.0] * 15)}), "no_anchors", "default",
                          "sep_l1_6", {})
    assert none.status == FAILS and none.estimate.estimate == 0
    # a model exactly at the midpoint does not transfer; one model is no share
    at = transfer_share(_Replicates({**base, "no_anchors": (45.0, 46.0)}), "no_anchors", "default", "sep_l1_6", {})
    assert "1 of 2 transfer" in at.detail
    assert transfer_share(_Replicates({**base, "no_anchors": (55.0,)}), "no_anchors", "default", "sep_l1_6", {}) is None


def test_figure4_and_figure5_claims():
    from xling.report.findings import transfer_findings, word_findings

    def rec(p, n):
        return {"forward": {"p_at_1": p, "test_sources": n}}

    def words(mlm, ft, n, layers):
        return {"embedding": {"mlm": rec(mlm, n), "fasttext": rec(ft, n)},
                "contextual": {"mlm": [rec(p, n) for p in layers]}}

    # 4a: 60% vs 62% on 1,000 words is "about as well" (interval within ±10); 30% vs 60% is not
    close = {"en-fr": words(60.0, 62.0, 1000, [10.0, 30.0, 40.0, 20.0])}
    far = {**close, "en-ru": words(30.0, 60.0, 1000, [5.0, 4.0, 3.0, 2.0])}
    f4a, f4b = word_findings(close)
    assert f4a.status == HOLDS and f4a.estimate.estimate == pytest.approx(-2.0)
    assert f4b.status == HOLDS and "en-fr: L2" in f4b.detail  # best in a middle layer
    f4a, f4b = word_findings(far)
    assert f4a.status == FAILS and f4a.estimate.estimate == pytest.approx(-30.0)
    assert f4b.status == FAILS  # en-ru is best at the embeddings (L0)
    # few test words: the same 2-point gap is inconclusive
    assert word_findings({"en-fr": words(60.0, 62.0, 50, [0.0, 2.0, 0.0])})[0].status == INCONCLUSIVE
    assert word_findings({"en-fr": words(0.0, 0.0, 50, [0.0, 0.0, 0.0])})[1].status == INCONCLUSIVE

    def t(task, layer, mlm, bi):
        return {"task": task, "pair": "en-fr", "layer": layer, "tgt_test": {"mlm_align": mlm, "bimlm": bi}}

    found = transfer_findings([t("ner", 0, 40, 60), t("ner", 4, 50, 70), t("parsing", 0, 30, 35),
                               t("parsing", 4, 30, 33)])
    assert [f.status for f in found] == [HOLDS, HOLDS]  # below on both; gap 20 on NER, 4 on parsing
    found = transfer_findings([t("ner", 0, 60, 50), t("parsing", 0, 30, 35)])
    assert [f.status for f in found] == [FAILS, INCONCLUSIVE]  # MLM align above biMLM on NER: no gap to compare
    found = transfer_findings([t("ner", 0, 40, 45), t("parsing", 0, 30, 40)])
    assert [f.status for f in found] == [HOLDS, FAILS]  # below on both, but the parsing gap is the larger
