"""The paper's claims, one row each, checked against this run's numbers with their intervals.

Table 1's claims compare rows through contrasts of their replicate means (Welch intervals, see
xling.metrics.intervals), on each task and on the score averaged over the tasks (the paper's Delta
narrative). A claim **holds** when the whole 95% interval of its contrast lies on the claimed side,
**does not hold** when it lies on the other side, and is **inconclusive** otherwise (which is all a
single replicate can ever be). Figure 4a's claim uses Newcombe's interval over the test words,
Figure 6's Newcombe's paired interval over the test sentences (trained minus the random encoder) and
Figure 7's the CKA job's bootstrap over sentences: Section 5's models are trained once, so these
intervals cover the choice of test items, not of training seeds; Figure 4b's and Figure 5's claims are
point estimates."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from xling.metrics.intervals import (
    Interval,
    contrast_interval,
    newcombe_interval,
    paired_newcombe_interval,
    t_interval,
    wilson_interval,
)
from xling.report.aggregate import Table1
from xling.report.analysis_figures import check_figure6
from xling.report.render import TASK_TITLES

HOLDS, FAILS, INCONCLUSIVE, NOT_RUN = "holds", "does not hold", "inconclusive", "not run"
CHANCE = {"xnli": 100 / 3}  # three balanced classes
NEAR_CHANCE = 5.0  # points: "near chance"
ABOVE_ZERO = "> 0: the whole 95% interval above 0 (below 0: does not hold)"
POINT = "point estimate, no interval"
MOST = 50.0  # percent of a row's models: "most of them transfer"
EVERY_LAYER = "every (pair, layer) above 0: each bootstrap interval above 0 (any below: does not hold)"
ABOUT_AS_WELL = 10.0  # points of P@1: "about as well as fastText"


@dataclass
class Finding:
    claim: str
    statistic: str  # what the number is
    estimate: Interval | None
    status: str
    detail: str = ""
    per_task: dict[str, str] = field(default_factory=dict)  # task -> status
    number: str = "{:+.1f}"  # how the estimate and its bounds are written
    holds_when: str = ABOVE_ZERO  # the threshold the status is judged by, as the table writes it


def _verdict(iv: Interval) -> str:
    """HOLDS when the interval is above 0, FAILS when below, INCONCLUSIVE when it straddles 0 or
    there is none."""
    if iv.bounds is None:
        return INCONCLUSIVE
    low, high = iv.bounds
    return HOLDS if low > 0 else FAILS if high < 0 else INCONCLUSIVE


def _bounds(iv: Interval) -> tuple[float, float]:
    """The bounds of an interval that always has them (Wilson's, Newcombe's, a t interval of n > 1)."""
    if iv.bounds is None:
        raise ValueError(f"no interval around {iv.estimate} (n = {iv.n})")
    return iv.bounds


def _all(verdicts: Sequence[str]) -> str:
    """Every part must hold; any part that fails fails the whole."""
    if any(v == FAILS for v in verdicts):
        return FAILS
    return HOLDS if verdicts and all(v == HOLDS for v in verdicts) else INCONCLUSIVE


class _Rows:
    """Replicates of each row per task, and averaged over the tasks."""

    def __init__(self, t: Table1):
        self.t = t

    def reps(self, setting: str, task: str | None) -> tuple[float, ...] | None:
        if setting not in self.t.settings:
            return None
        if task is not None:
            return self.t.row_replicates.get((setting, task))
        per_task = [self.t.row_replicates.get((setting, k)) for k in self.t.tasks]
        present = [r for r in per_task if r is not None]
        if len(present) != len(per_task) or len({len(r) for r in present}) != 1:
            return None
        return tuple(sum(col) / len(col) for col in zip(*present))

    def contrast(self, weights: Mapping[str, float], task: str | None) -> Interval | None:
        groups = [self.reps(s, task) for s in weights]
        present = [g for g in groups if g is not None]
        if len(present) != len(groups):
            return None
        return contrast_interval(present, list(weights.values()))


def _fmt(iv: Interval | None, number: str = "{:+.1f}") -> str:
    if iv is None:
        return "–"
    if iv.bounds is None:
        return f"{number.format(iv.estimate)} (n = {iv.n}, no interval)"
    return f"{number.format(iv.estimate)} [{number.format(iv.bounds[0])}, {number.format(iv.bounds[1])}]"


def _claim(rows: _Rows, tasks: Sequence[str], claim: str, statistic: str,
           contrasts: Mapping[str, Mapping[str, float]], untrained: Sequence[str] = ()) -> Finding:
    """A claim that every contrast (name -> row weights) is > 0; its number is the contrast nearest
    to failing, on the task-averaged score. ``untrained``: the labels of rows the claim names that
    have no scores here (a pair trained on some rows only), said in the detail."""
    def judge(task):
        ivs = {name: rows.contrast(w, task) for name, w in contrasts.items()}
        found = {name: iv for name, iv in ivs.items() if iv is not None}
        if not ivs or len(found) != len(ivs):
            return None, NOT_RUN
        worst = min(found.items(), key=lambda kv: kv[1].estimate)
        return worst, _all([_verdict(iv) for iv in found.values()])

    overall, status = judge(None)
    per_task = {task: judge(task)[1] for task in tasks}
    detail = f"nearest to failing: {overall[0]}" if overall and len(contrasts) > 1 else ""
    if untrained:
        detail = "; ".join(filter(None, [detail, f"judged on the rows trained here, not on {', '.join(untrained)}"]))
    return Finding(claim, statistic, overall[1] if overall else None, status, detail, per_task)


def table1_findings(t: Table1, separate: Mapping[str, Mapping], baseline: str = "default") -> list[Finding]:
    """Claims 1-5 (paper Section 4 / Table 1). ``separate``: each setting's ``separate`` entry (which
    rows are Sep* rows)."""
    rows, D = _Rows(t), baseline
    labels = t.labels
    # claims 1 and 2 quantify over the rows: on a pair trained on some rows only (pair_rows) they are
    # judged on those, saying which they leave out, rather than not judged at all
    trained = [s for s in t.settings if any(t.row_replicates.get((s, k)) for k in t.tasks)]
    every_sep = [s for s in t.settings if separate[s]["embeddings"] or int(separate[s]["layers"]) > 0]
    sep = [s for s in every_sep if s in trained]
    worst = "sep_emb_l1_6"

    def left_out(named: Sequence[str]) -> list[str]:
        return [labels.get(s, s) for s in named if s not in trained] if trained else []
    out = [_claim(rows, t.tasks, f"1. {labels.get(worst, worst)} is the worst row",
                  "every other row minus it (points, mean over tasks), the nearest row shown",
                  {labels[o]: {o: 1.0, worst: -1.0} for o in trained if o != worst} if worst in trained else {},
                  left_out(t.settings) if worst in trained else [])]
    xnli = rows.reps(worst, "xnli") if "xnli" in t.tasks else None
    if xnli:
        gap = t_interval([x - CHANCE["xnli"] for x in xnli])
        near = (INCONCLUSIVE if gap.bounds is None
                else HOLDS if -NEAR_CHANCE < gap.bounds[0] and gap.bounds[1] < NEAR_CHANCE
                else FAILS if gap.bounds[0] >= NEAR_CHANCE else INCONCLUSIVE)
        out.append(Finding(f"1b. {labels.get(worst, worst)} is near chance on XNLI",
                           "its XNLI accuracy minus chance (33.3), points", gap, near,
                           holds_when=f"the whole interval within ±{NEAR_CHANCE:g} (all of it beyond +"
                                      f"{NEAR_CHANCE:g}: does not hold)"))
    out.append(_claim(rows, t.tasks, "2. Every Sep* row is below Default",
                      "Default minus each Sep row (points, mean over tasks), the nearest row shown",
                      {labels[s]: {D: 1.0, s: -1.0} for s in sep if s != D},
                      left_out(every_sep)))
    if "no_anchors" in t.settings and "sep_l1_6" in t.settings:
        out.append(_claim(rows, t.tasks, "3. No anchors loses less than half of what Sep L1-6 loses against Default "
                          "(the paper: No anchors stays close to Default)",
                          "No anchors minus the midpoint of Default and Sep L1-6 (points, mean over tasks)",
                          {"": {"no_anchors": 1.0, D: -0.5, "sep_l1_6": -0.5}}))
        share = transfer_share(rows, "no_anchors", D, "sep_l1_6", labels)
        if share is not None:
            out.append(share)
    if "extra_anchors" in t.settings:
        out.append(_claim(rows, t.tasks, "4. Extra anchors is not below Default", "Extra anchors minus Default "
                          "(points, mean over tasks)", {"": {"extra_anchors": 1.0, D: -1.0}}))
    if "wiki_cc" in t.settings:
        out.append(_claim(rows, t.tasks, "5. Wiki-CC is below Default (the paper: it costs a little; judged by sign "
                          "only)", "Default minus Wiki-CC (points, mean over tasks)", {"": {D: 1.0, "wiki_cc": -1.0}}))
    return out


def transfer_share(rows: _Rows, row: str, high: str, low: str, labels: Mapping[str, str]) -> Finding | None:
    """Claim 3b: how many of ``row``'s models transfer, each model judged alone. A model (a
    pretraining seed, its score averaged over the tasks) transfers when it is above the midpoint of
    the ``high`` and ``low`` rows' means (claim 3's midpoint: Default's and Sep L1-6's), a rule fixed
    before the seeds ran (docs/report.md). A row whose models either transfer or do not (bimodal) is
    summarised by this share, with Wilson's interval, and by each mode's mean beside the row's mean,
    which alone would describe a model that does not exist. Holds when the share's lower bound is
    above half. None with fewer than two models or a missing row."""
    mine, a, b = rows.reps(row, None), rows.reps(high, None), rows.reps(low, None)
    if not mine or not a or not b or len(mine) < 2:
        return None
    cut = (sum(a) / len(a) + sum(b) / len(b)) / 2
    up = [x for x in mine if x > cut]
    down = [x for x in mine if x <= cut]
    iv = wilson_interval(len(up), len(mine))
    low_, high_ = _bounds(iv)
    status = HOLDS if low_ > MOST else FAILS if high_ < MOST else INCONCLUSIVE

    def mean(xs: list[float]) -> str:
        return f"{sum(xs) / len(xs):.1f} (n = {len(xs)})" if xs else "none"
    detail = (f"{len(up)} of {len(mine)} transfer (above {cut:.1f}, the midpoint of {labels.get(high, high)}'s and "
              f"{labels.get(low, low)}'s means); mean of those that transfer {mean(up)}, of the others {mean(down)}, "
              f"of all {mean(list(mine))}")
    return Finding(f"3b. Most {labels.get(row, row)} models transfer (each pretraining seed judged alone)",
                   f"share of its models above the midpoint of {labels.get(high, high)} and {labels.get(low, low)} "
                   "(%, mean over tasks; Wilson's interval over its models)", iv, status, detail, number="{:.0f}%",
                   holds_when=f"> {MOST:g}%: the whole interval above half (below half: does not hold)")


CENTRAL = ("default", "no_anchors", "sep_emb_l1_6")  # the sentence regime's central finding (docs/demo.md)


def language_embedding_findings(t: Table1, twins: Mapping[str, str], rows_have: bool) -> list[Finding]:
    """Claim 12 (beyond the paper): the central finding with and without XLM's language embeddings.
    ``twins``: Table 1 rows -> their twin that differs only in language embeddings
    (xling.config.language_embedding_twins); ``rows_have``: whether the rows (not the twins) have
    them. In each variant No anchors loses less than half of Sep Emb + L1-6's loss against Default
    (> 0: No anchors minus the midpoint of the two) and Sep Emb + L1-6 is below Default; the detail
    gives what language embeddings change in No anchors - Default (a difference of differences,
    Welch interval). Empty unless all three rows have a twin."""
    if not all(r in twins for r in CENTRAL):
        return []
    rows = _Rows(t)
    d, na, se = CENTRAL
    variants = {rows_have: dict(zip(CENTRAL, CENTRAL)), not rows_have: {r: twins[r] for r in CENTRAL}}
    out = []
    for has in (False, True):
        v = variants[has]
        contrasts = {"No anchors - midpoint": {v[na]: 1.0, v[d]: -0.5, v[se]: -0.5},
                     "Default - Sep Emb + L1-6": {v[d]: 1.0, v[se]: -1.0}}
        f = _claim(rows, t.tasks, f"12. The central finding holds {'with' if has else 'without'} language embeddings",
                   "No anchors minus the midpoint of Default and Sep Emb + L1-6 (> 0: it loses less than half of "
                   "Sep Emb + L1-6's loss), and Default minus Sep Emb + L1-6", contrasts)
        if has:
            w, wo = variants[True], variants[False]
            effect = rows.contrast({w[na]: 1.0, w[d]: -1.0, wo[na]: -1.0, wo[d]: 1.0}, None)
            f.detail = "; ".join(x for x in (f.detail, "language embeddings' effect on No anchors - Default: "
                                             + _fmt(effect)) if x)
        out.append(f)
    return out


RETRIEVAL_CLAIM = "6. One orthogonal map aligns trained monolingual models better than untrained ones (Fig. 6)"


def retrieval_finding(retrieval: Mapping[str, Mapping], claim: str = RETRIEVAL_CLAIM) -> Finding:
    """Claim 6 (Figure 6): per pair, the best layer's retrieval P@1 after the map, trained minus the
    random encoder's (the same models untrained: each side's architecture initialised with
    analysis.random_seed, one multilingual model still one; at its own best layer), with
    Newcombe's paired interval over the test sentences (both are scored on the same sentences).
    Holds when every pair's lower bound is above 0. Chance (1 / test sentences) is no yardstick: a
    map learnt on thousands of parallel sentences aligns untrained encoders' mean-pooled states far
    above it (docs/report.md). A result without the baseline (made before it existed) leaves the
    claim not run."""
    checked = check_figure6([{**r, "pair": r.get("pair", pair)} for pair, r in sorted(retrieval.items())])
    if not checked:
        return Finding(claim, RETRIEVAL_STATISTIC, None, NOT_RUN)
    if any(r["random"] is None for r in checked):
        return Finding(claim, RETRIEVAL_STATISTIC, None, NOT_RUN,
                       "no random-encoder baseline in these results (made before it existed): rerun the retrieval jobs")
    parts, verdicts, worst = [], [], None
    for r in checked:
        t = r["paired"]
        iv = paired_newcombe_interval(t["both"], t["trained_only"], t["random_only"], t["neither"])
        verdicts.append(_verdict(iv))
        parts.append(f"{r['pair']}: {r['p_at_1'][t['trained_layer']]:.1f} (L{t['trained_layer']}) vs random "
                     f"{r['random']['p_at_1'][t['random_layer']]:.1f} (L{t['random_layer']}), "
                     f"{_fmt(iv)} on {r['n_test']} sentences")
        if worst is None or _bounds(iv)[0] < _bounds(worst)[0]:
            worst = iv
    return Finding(claim, RETRIEVAL_STATISTIC, worst, _all(verdicts), "; ".join(parts))


RETRIEVAL_STATISTIC = ("best layer's P@1 after the map, trained minus the same architecture untrained (points; "
                       "Newcombe's paired interval over the test sentences), the pair with the lowest bound")


def layerwise_claim(cka: Mapping[str, Mapping], pairs: Sequence[str], x: str,
                    y: str) -> tuple[str, Interval | None, str]:
    """Whether CKA of kind ``x`` is above kind ``y`` at every layer of every pair: from the paired
    bootstrap intervals of x - y when the job computed them (HOLDS: every lower bound > 0; FAILS:
    some upper bound < 0), else from the point estimates. Returns (status, the weakest layer's
    difference, detail)."""
    verdicts, weakest, parts = [], None, []
    for p in pairs:
        c, diff = cka[p]["cka"], (cka[p].get("difference_interval") or {}).get(f"{x}-{y}")
        n = int(cka[p].get("n", 0))
        for layer, (a, b) in enumerate(zip(c[x], c[y])):
            lo, hi = diff[layer] if diff else (None, None)
            iv = Interval(a - b, lo, hi, n)
            verdicts.append(_verdict(iv) if diff else HOLDS if a > b else FAILS)
            key = iv.low if iv.low is not None else iv.estimate
            if weakest is None or key < weakest[0]:
                weakest = (key, p, layer, iv)
        parts.append(f"{p}: min over layers {min(a - b for a, b in zip(c[x], c[y])):+.3f}")
    status = _all(verdicts) if verdicts else NOT_RUN
    how = "bootstrap over sentences" if all(cka[p].get("difference_interval") for p in pairs) else "point estimates"
    detail = "; ".join(parts) + (f"; weakest: {weakest[1]} L{weakest[2]}" if weakest else "") + f" ({how})"
    return status, weakest[3] if weakest else None, detail


def cka_findings(cka: Mapping[str, Mapping], order: Sequence[str]) -> list[Finding]:
    """Claim 7 (Figure 7): bilingual ≥ monolingual and monolingual > random at every layer (with the
    CKA job's bootstrap intervals over sentences when present); the peak in the lower half of the
    layers and the bilingual-monolingual gap not growing with distance (``order``: pairs from closest
    to most distant) on point estimates."""
    def mean(xs):
        return sum(xs) / len(xs)

    pairs = [p for p in order if p in cka]
    bi_pairs = [p for p in pairs if cka[p]["cka"].get("bilingual") is not None]  # null: no bilingual model
    out = []
    for x, y, pp, name in (("bilingual", "monolingual", bi_pairs, "bilingual ≥ monolingual"),
                           ("monolingual", "random", pairs, "monolingual > random")):
        status, iv, detail = layerwise_claim(cka, pp, x, y)
        out.append(Finding(f"7. CKA: {name} at every layer (Fig. 7)",
                           f"{x} - {y} CKA at the weakest (pair, layer), 95% bootstrap interval", iv, status, detail,
                           number="{:+.3f}", holds_when=EVERY_LAYER))
    controlled = {p: {**cka[p], **cka[p]["length_controlled"]} for p in pairs if cka[p].get("length_controlled")}
    if controlled:
        # the random floor is where the length signal weighs most (xling.analysis.cka.length_residuals)
        status, iv, detail = layerwise_claim(controlled, list(controlled), "monolingual", "random")
        out.append(Finding("7. CKA, length-controlled: monolingual > random at every layer (robustness, "
                           "not the paper's measure)",
                           "monolingual - random CKA of the length residuals at the weakest (pair, layer), 95% "
                           "bootstrap interval", iv, status, detail, number="{:+.3f}", holds_when=EVERY_LAYER))
    peaks = {}
    for p in pairs:
        m = cka[p]["cka"]["monolingual"]
        peaks[p] = max(range(len(m)), key=m.__getitem__)
    low = {p: k <= len(cka[p]["cka"]["monolingual"]) // 2 for p, k in peaks.items()}
    out.append(Finding("7. CKA: monolingual similarity highest in the lower layers (Fig. 7)",
                       "layer of the peak (point estimates)", None,
                       (HOLDS if all(low.values()) else FAILS) if low else NOT_RUN,
                       ", ".join(f"{p}: L{peaks[p]}" for p in pairs) + " — no interval",
                       holds_when=f"every pair's peak at or below the middle layer ({POINT})"))
    gaps = [mean(cka[p]["cka"]["bilingual"]) - mean(cka[p]["cka"]["monolingual"]) for p in bi_pairs]
    shrinking = all(a >= b for a, b in zip(gaps, gaps[1:]))
    out.append(Finding("7. CKA: the bilingual-monolingual gap shrinks with language distance (Fig. 7)",
                       "mean over layers of bilingual - monolingual CKA, closest pair first (point estimates)",
                       None, (HOLDS if shrinking else FAILS) if len(bi_pairs) > 1 else NOT_RUN,
                       ", ".join(f"{p}: {g:+.3f}" for p, g in zip(bi_pairs, gaps)) + " — no interval",
                       holds_when=f"never larger for a more distant pair ({POINT})"))
    return out


def drift_note(cka: Mapping[str, Mapping]) -> str:
    """The range of the trained models' distance from their initial weights over the CKA jobs
    (empty when none recorded it): Section 5's numbers read differently for models that have
    barely left their random start."""
    values = [v for r in cka.values() for sides in (r.get("drift") or {}).values() if sides
              for v in sides if v is not None]
    if not values:
        return ""
    return f"the models are {100 * min(values):.1f}-{100 * max(values):.1f}% (relative norm) from their initial weights"


def _hits(rec: Mapping) -> tuple[int, int]:
    """(correct, test words) of one direction's P@1 record of a Figure 4 job."""
    n = int(rec["test_sources"])
    return round(float(rec["p_at_1"]) * n / 100), n


def word_findings(words: Mapping[str, Mapping]) -> list[Finding]:
    """Figure 4 (en->x, MUSE's direction): 4a, the MLM's whole-word embeddings translate about as
    well as fastText on the same words (the MLM - fastText difference, Newcombe's interval over the
    test words, within ±ABOUT_AS_WELL points); 4b, the contextual vectors align best in a middle
    layer (neither the embeddings nor the top layer; point estimates)."""
    ivs = {}
    for pair, w in sorted(words.items()):
        emb = w["embedding"]
        ivs[pair] = newcombe_interval(*_hits(emb["mlm"]["forward"]), *_hits(emb["fasttext"]["forward"]))
    verdicts = [HOLDS if -ABOUT_AS_WELL < low and high < ABOUT_AS_WELL else
                FAILS if high < -ABOUT_AS_WELL or low > ABOUT_AS_WELL else INCONCLUSIVE
                for low, high in map(_bounds, ivs.values())]
    worst = max(ivs.items(), key=lambda kv: abs(kv[1].estimate)) if ivs else None
    out = [Finding("8. MLM word embeddings align about as well as fastText (Fig. 4a)",
                   "MLM - fastText P@1 en->x on the same words (points; Newcombe's interval over the test words), "
                   "the pair furthest apart",
                   worst[1] if worst else None, _all(verdicts) if verdicts else NOT_RUN,
                   "; ".join(f"{p}: {iv.estimate:+.1f} [{iv.low:+.1f}, {iv.high:+.1f}] on {iv.n} words"
                             for p, iv in ivs.items()),
                   holds_when=f"the whole interval within ±{ABOUT_AS_WELL:g} (all of it beyond: does not hold)")]
    best, middle = {}, []
    for pair, w in sorted(words.items()):
        p1 = [layer["forward"]["p_at_1"] for layer in w["contextual"]["mlm"]]
        if max(p1) > 0:
            best[pair] = max(range(len(p1)), key=p1.__getitem__)
            middle.append(0 < best[pair] < len(p1) - 1)
    out.append(Finding("9. Contextual word vectors align best in the middle layers (Fig. 4b)",
                       "layer of the best P@1 en->x (point estimates; pairs where some layer translates a word)",
                       None, (HOLDS if all(middle) else FAILS) if middle else INCONCLUSIVE,
                       ", ".join(f"{p}: L{k}" for p, k in best.items()) or "no layer translates any test word",
                       holds_when=f"every pair's best layer neither L0 nor the top one ({POINT})"))
    return out


def transfer_findings(transfer: Sequence[Mapping]) -> list[Finding]:
    """Figure 5 (point estimates: one task model per layer): MLM align below biMLM, target score
    averaged over the layers and pairs of each task; and the gap smaller on parsing than on NER."""
    gaps: dict[str, list[float]] = {}
    for rec in transfer:
        t = rec["tgt_test"]
        gaps.setdefault(rec["task"], []).append(t["bimlm"] - t["mlm_align"])
    mean = {task: sum(g) / len(g) for task, g in gaps.items()}
    detail = ", ".join(f"{task}: biMLM - MLM align {m:+.1f} over {len(gaps[task])} (pair, layer)"
                       for task, m in mean.items()) + " — no interval"
    out = [Finding("10. MLM align is below biMLM (Fig. 5)", "biMLM - MLM align, mean over layers and pairs",
                   None, (HOLDS if all(m > 0 for m in mean.values()) else FAILS) if mean else NOT_RUN, detail,
                   holds_when=f"> 0 on every task ({POINT})")]
    if {"ner", "parsing"} <= set(mean):
        # only meaningful where MLM align is below biMLM on both tasks
        below = mean["ner"] > 0 and mean["parsing"] > 0
        out.append(Finding("11. The MLM align - biMLM gap is smaller on parsing than on NER (Fig. 5)",
                           "gap(NER) - gap(parsing) (point estimates; judged only where claim 10 holds on both)",
                           None, (HOLDS if mean["ner"] > mean["parsing"] else FAILS) if below else INCONCLUSIVE,
                           detail, holds_when=f"> 0 ({POINT})"))
    return out


def findings_markdown(findings: Sequence[Finding], tasks: Sequence[str], note: str | None = None) -> str:
    out = [note, ""] if note else []
    out += ["| Claim | Statistic | Holds when | Ours (95% interval) | Status | Per task | Detail |",
            "|---|---|---|---|---|---|---|"]
    for f in findings:
        per = " · ".join(f"{TASK_TITLES.get(k, k).split(' ')[0]} {v}" for k, v in f.per_task.items() if k in tasks)
        ours = _fmt(f.estimate, f.number)
        out.append(f"| {f.claim} | {f.statistic} | {f.holds_when} | {ours} | **{f.status}** | {per} | {f.detail} |")
    out += ["", "holds / does not hold: the whole 95% interval lies on the claimed / the other side of the "
                "threshold in *Holds when*; inconclusive: it straddles it (always so with one replicate)."]
    return "\n".join(out) + "\n"


def findings_csv(findings: Sequence[Finding]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["claim", "statistic", "holds_when", "estimate", "low", "high", "n", "status", "per_task", "detail"])
    for f in findings:
        iv = f.estimate
        nums: list[object] = ["", "", "", ""] if iv is None else [
            f"{iv.estimate:.4f}", "" if iv.low is None else f"{iv.low:.4f}",
            "" if iv.high is None else f"{iv.high:.4f}", iv.n]
        w.writerow([f.claim, f.statistic, f.holds_when, *nums, f.status,
                    ";".join(f"{k}={v}" for k, v in f.per_task.items()), f.detail])
    return buf.getvalue()


def write_findings(table: Table1, separate: Mapping[str, Mapping], out_md, out_csv, retrieval: Mapping | None = None,
                   cka: Mapping | None = None, cka_order: Sequence[str] = (), words: Mapping | None = None,
                   transfer: Sequence[Mapping] = (), baseline: str = "default",
                   note: str | None = None, language_twins: Mapping | None = None,
                   by_pair: Mapping[str, Table1] | None = None) -> list[Finding]:
    """findings.md and findings.csv from Table 1 (with its replicates) and, when given, the Section 5
    results: Figure 4's (``words``) and Figure 6's (``retrieval``) and Figure 7's (``cka``) JSON by
    pair, Figure 5's JSON records (``transfer``). ``language_twins``: ``{"rows_have": bool, "twins":
    {row: twin}}`` (claim 12, :func:`language_embedding_findings`). ``by_pair``: Table 1 of each
    pair alone; Table 1's claims are then judged on each pair's column, each named by its pair,
    instead of on the scores averaged over the pairs."""
    from dataclasses import replace

    from xling.io import atomic_write

    found: list[Finding] = []
    for pair, t in (by_pair or {"": table}).items():
        mine = table1_findings(t, separate, baseline)
        if language_twins:
            mine += language_embedding_findings(t, language_twins["twins"], bool(language_twins["rows_have"]))
        found += [replace(f, claim=f"{pair}: {f.claim}") if pair else f for f in mine]
    if words:
        found += word_findings(words)
    if transfer:
        found += transfer_findings(transfer)
    section5 = []
    if retrieval:
        section5.append(retrieval_finding(retrieval))
    if cka:
        section5 += cka_findings(cka, cka_order)
        drift = drift_note(cka)
        for f in section5 if drift else []:
            f.detail = f"{f.detail}; {drift}" if f.detail else drift
    found += section5
    for path, text in ((out_md, findings_markdown(found, table.tasks, note)), (out_csv, findings_csv(found))):
        with atomic_write(path) as fh:
            fh.write(text)
    return found
