"""Metric definitions: span F1 (vs seqeval), the paper's BIO repair, CoNLL 2018 LAS/UAS, accuracy,
and the MST tree decoder."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest
from seqeval.metrics import f1_score

from support import repo_module
from xling.errors import InputError
from xling.finetune.mst import _chu_liu_edmonds, decode_mst, is_tree, tree_score
from xling.metrics import accuracy, attachment_scores, read_conllu_words, repair_bio, score_conllu_files, span_f1, spans

UD = Path("/work/shared/data/ud-2.3")


def test_repair_paper_examples():
    assert repair_bio(["I-PER"]) == ["B-PER"]  # standalone I-X -> B-X
    assert repair_bio(["O", "I-LOC", "I-LOC", "O"]) == ["O", "B-LOC", "I-LOC", "O"]
    assert repair_bio(["B-PER", "I-LOC", "I-ORG"]) == ["B-ORG", "I-ORG", "I-ORG"]  # final type wins
    assert repair_bio(["B-PER", "I-PER", "O", "B-LOC"]) == ["B-PER", "I-PER", "O", "B-LOC"]  # valid: unchanged
    assert repair_bio(["B-PER", "B-LOC", "I-ORG"]) == ["B-PER", "B-ORG", "I-ORG"]


def _f1_by_definition(gold, pred):
    g = {(k, *s) for k, t in enumerate(gold) for s in spans(t)}
    p = {(k, *s) for k, t in enumerate(pred) for s in spans(t)}
    tp = len(g & p)
    if tp == 0:
        return 0.0
    prec, rec = tp / len(p), tp / len(g)
    return 100 * 2 * prec * rec / (prec + rec)


def test_span_f1_hand_made():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-ORG"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG"], ["O", "B-ORG"]]
    # 2 of 3 predicted spans right, 2 of 3 gold spans found
    assert span_f1(gold, pred) == pytest.approx(100 * 2 / 3)
    # repair turns the standalone I-LOC into a correct span
    assert span_f1([["O", "B-LOC"]], [["O", "I-LOC"]]) == pytest.approx(100.0)


def test_span_f1_agrees_with_seqeval_and_definition_on_random_sequences():
    rng = random.Random(0)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"]
    for _ in range(200):
        n = rng.randint(1, 6)
        lens = [rng.randint(1, 8) for _ in range(n)]
        gold = [repair_bio([rng.choice(tags) for _ in range(m)]) for m in lens]
        pred = [[rng.choice(tags) for _ in range(m)] for m in lens]
        repaired = [repair_bio(p) for p in pred]
        ours = span_f1(gold, pred)
        assert ours == pytest.approx(100 * f1_score(gold, repaired))
        assert ours == pytest.approx(_f1_by_definition(gold, repaired))
        # on repaired (valid) sequences seqeval's conlleval chunking and the BIO span definition agree
        for r in repaired:
            assert repair_bio(r) == r


def test_accuracy():
    assert accuracy([0, 1, 2, 1], [0, 1, 1, 1]) == pytest.approx(75.0)
    with pytest.raises(ValueError):
        accuracy([0], [0, 1])


GOLD_CONLLU = """# text = Au revoir.
1-2\tAu\t_\t_\t_\t_\t_\t_\t_\t_
1\tà\tà\tADP\t_\t_\t3\tcase\t_\t_
2\tle\tle\tDET\t_\t_\t3\tdet\t_\t_
3\trevoir\trevoir\tNOUN\t_\t_\t0\troot\t_\t_
3.1\tvu\tvu\tVERB\t_\t_\t_\t_\t0:root\t_
4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

1\tIl\til\tPRON\t_\t_\t2\tnsubj:pass\t_\t_
2\tdort\tdormir\tVERB\t_\t_\t0\troot\t_\t_
"""

# word 1: right head and label; word 2: wrong head; word 3: right; word 4 (punct): right head, wrong label;
# sentence 2: word 1 head right, subtype differs only (nsubj:pass vs nsubj -> counts as right); word 2 right.
SYSTEM_CONLLU = GOLD_CONLLU.replace("2\tle\tle\tDET\t_\t_\t3\tdet", "2\tle\tle\tDET\t_\t_\t1\tdet").replace(
    "4\t.\t.\tPUNCT\t_\t_\t3\tpunct", "4\t.\t.\tPUNCT\t_\t_\t3\tdep").replace("nsubj:pass", "nsubj")


def test_las_hand_made_pair(tmp_path):
    g, s = tmp_path / "gold.conllu", tmp_path / "sys.conllu"
    g.write_text(GOLD_CONLLU, encoding="utf-8")
    s.write_text(SYSTEM_CONLLU, encoding="utf-8")
    words = read_conllu_words(g)
    # the multiword token line and the empty node are not words; the syntactic words are
    assert [w.form for w in words[0]] == ["à", "le", "revoir", "."]
    scores = score_conllu_files(g, s)
    assert scores.words == 6
    assert scores.uas == pytest.approx(100 * 5 / 6)  # only "le" has a wrong head
    assert scores.las == pytest.approx(100 * 4 / 6)  # and "." a wrong label; subtypes ignored


def test_attachment_scores_label_needs_right_head():
    gold = [[(2, "nsubj"), (0, "root")]]
    assert attachment_scores(gold, [[(0, "nsubj"), (0, "root")]]).las == pytest.approx(50.0)
    assert attachment_scores(gold, [[(2, "obj"), (0, "root")]]).uas == pytest.approx(100.0)


def test_bad_conllu_names_file_and_line(tmp_path):
    p = tmp_path / "bad.conllu"
    p.write_text("1\tx\t_\t_\t_\t_\t0\troot\t_\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.conllu:1"):
        read_conllu_words(p)


@pytest.mark.skipif(not UD.exists(), reason="shared UD v2.3 files not present")
@pytest.mark.parametrize("treebank,name", [("UD_French-GSD", "fr_gsd-ud-test.conllu"),
                                            ("UD_Russian-GSD", "ru_gsd-ud-test.conllu"),
                                            ("UD_Chinese-GSD", "zh_gsd-ud-test.conllu"),
                                            ("UD_English-EWT", "en_ewt-ud-dev.conllu")])
def test_las_on_real_ud(treebank, name, tmp_path):
    gold_path = UD / treebank / name
    assert score_conllu_files(gold_path, gold_path).las == pytest.approx(100.0)
    # Perturb: every 7th syntactic word gets another (valid) head; every 5th other word a wrong label.
    k, wrong_head, wrong_label, total = 0, 0, 0, 0
    out = []
    for line in gold_path.read_text(encoding="utf-8").split("\n"):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            k += 1
            total += 1
            if k % 7 == 0:
                cols[6] = "0" if cols[6] != "0" else "1"
                wrong_head += 1
            elif k % 5 == 0:
                cols[7] = "zzz:sub"
                wrong_label += 1
            line = "\t".join(cols)
        out.append(line)
    assert total == sum(len(s) for s in read_conllu_words(gold_path))
    sys_path = tmp_path / name
    sys_path.write_text("\n".join(out), encoding="utf-8")
    scores = score_conllu_files(gold_path, sys_path)
    assert scores.words == total
    assert scores.uas == pytest.approx(100 * (total - wrong_head) / total)
    assert scores.las == pytest.approx(100 * (total - wrong_head - wrong_label) / total)
    # a system file whose words differ from gold is an input error, not something scored
    sys_path.write_text("\n".join(_change_first_form(out)), encoding="utf-8")
    with pytest.raises(InputError):
        score_conllu_files(gold_path, sys_path)


def _change_first_form(lines):
    lines = list(lines)
    for i, line in enumerate(lines):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[1] += "X"
            lines[i] = "\t".join(cols)
            break
    return lines


def test_mst_returns_a_tree_on_random_matrices():
    rng = np.random.default_rng(0)
    for _ in range(500):
        n = int(rng.integers(1, 40))
        scores = rng.normal(size=(n + 1, n + 1)) * rng.choice([0.1, 1, 10])
        if rng.random() < 0.3:  # root strongly preferred by many words: the single-root constraint matters
            scores[:, 0] += 5
        assert is_tree(decode_mst(scores))


def test_mst_is_optimal_against_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(150):
        n = int(rng.integers(1, 6))
        scores = rng.normal(size=(n + 1, n + 1))
        heads = decode_mst(scores)
        best = max(tree_score(scores, np.array([-1, *a]))
                   for a in itertools.product(range(n + 1), repeat=n) if is_tree(np.array([-1, *a])))
        assert tree_score(scores, heads) == pytest.approx(best)


def test_mst_single_root_search_is_trying_every_root():
    """decode_mst's pruned search against the definition (bench/bench_mst.py's every_root: every word
    tried as ROOT's only child, the first best tree kept)."""
    every_root = repo_module.load("bench/bench_mst.py").every_root
    rng = np.random.default_rng(2)
    multi_root = 0
    for k in range(300):
        n = int(rng.integers(2, 30))
        if k % 3 == 0:  # small integers: many exact ties, which must break the same way
            scores = rng.integers(-3, 3, size=(n + 1, n + 1)).astype(np.float64)
        else:
            scores = rng.normal(size=(n + 1, n + 1)) * rng.choice([0.3, 1, 3])
        scores[:, 0] += rng.choice([0, 2])  # words drawn to ROOT: the one-child search runs
        free = scores.copy()
        free[0, :] = -np.inf
        np.fill_diagonal(free, -np.inf)
        multi_root += int(np.sum(_chu_liu_edmonds(free)[1:] == 0)) > 1
        assert list(decode_mst(scores)) == list(every_root(scores))
    assert multi_root > 100  # the search itself was compared, not only the one-ROOT shortcut


def test_mst_handles_forbidden_arcs():
    scores = np.full((4, 4), -np.inf)
    scores[1, 0] = scores[2, 1] = scores[3, 2] = 0.0  # only a chain is allowed
    assert list(decode_mst(scores)[1:]) == [0, 1, 2]
    assert is_tree(decode_mst(np.full((5, 5), np.nan)))


def test_is_tree_rejects_cycles_and_two_roots():
    assert not is_tree(np.array([-1, 0, 0]))
    assert not is_tree(np.array([-1, 0, 3, 2]))
    assert is_tree(np.array([-1, 2, 0, 2]))
