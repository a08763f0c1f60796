"""Liu et al.'s data sizes: sentences (not paragraph lines) of the training split, drawn at random
with a seed, nested across sizes, in the split's order; too few sentences refused."""

import pytest

from xling.errors import InputError
from xling.liu.sample import sample_sentences, splitter


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def read(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_paragraph_lines_are_cut_into_sentences(tmp_path):
    src = write(tmp_path / "train.txt", ["The cat sleeps . Mr. Smith sees it .", "A dog runs !", "",
                                         "It rains . We stay home ."])
    out = tmp_path / "n5.txt"
    counts = sample_sentences(src, out, 5, "en", seed=0)
    assert counts == {"lines": 4, "sentences": 5, "written": 5}
    assert read(out) == ["The cat sleeps .", "Mr. Smith sees it .", "A dog runs !", "It rains .", "We stay home ."]
    # Chinese ends its sentences with its own full stop, tokenised text included
    assert [s.strip() for s in splitter("sentencex", "zh")("我 爱 北京 。 你 好 吗 ？ 是 的 。")] == [
        "我 爱 北京 。", "你 好 吗 ？", "是 的 。"]
    assert list(splitter("lines", "en")("One . Two .")) == ["One . Two ."]
    with pytest.raises(ValueError, match="unknown sentence splitter 'punkt'"):
        splitter("punkt", "en")


def test_a_seeded_random_draw_that_nests_and_keeps_the_order(tmp_path):
    sentences = [f"Sentence number {i} ." for i in range(400)]
    src = write(tmp_path / "train.txt", [" ".join(sentences[i : i + 2]) for i in range(0, 400, 2)])
    small, big, again, other = (tmp_path / f"{name}.txt" for name in ("small", "big", "again", "other"))
    sample_sentences(src, small, 40, "en", seed=3)
    sample_sentences(src, big, 200, "en", seed=3)
    sample_sentences(src, again, 40, "en", seed=3)
    sample_sentences(src, other, 40, "en", seed=4)
    drawn = read(small)
    assert len(drawn) == 40 and len(set(drawn)) == 40 and set(drawn) <= set(sentences)
    assert drawn != sentences[:40]  # not the split's first sentences
    assert read(again) == drawn and read(other) != drawn  # the seed decides
    assert set(drawn) <= set(read(big))  # the small size lies inside the big one
    index = {s: i for i, s in enumerate(sentences)}
    assert [index[s] for s in read(big)] == sorted(index[s] for s in read(big))  # the split's order
    assert max(index[s] for s in drawn) > 200  # drawn from the whole split, not its beginning


def test_every_sentence_is_equally_likely(tmp_path):
    """Over many seeds, the first and the second half of the split are drawn equally often."""
    src = write(tmp_path / "train.txt", [f"Word {i} here . Word {i} there ." for i in range(50)])
    first_half = 0
    for seed in range(60):
        sample_sentences(src, tmp_path / "s.txt", 10, "en", seed=seed)
        first_half += sum(int(line.split()[1]) < 25 for line in read(tmp_path / "s.txt"))
    assert 0.4 < first_half / (60 * 10) < 0.6


def test_too_few_sentences_names_the_file_and_writes_nothing(tmp_path):
    src = write(tmp_path / "train.txt", ["One . Two .", "Three ."])
    dst = tmp_path / "out" / "n4.txt"
    with pytest.raises(InputError, match=r"train\.txt: expected at least 4 sentences.*'3 sentences in 2 lines'"):
        sample_sentences(src, dst, 4, "en", seed=0)
    assert not dst.exists() and not (dst.parent.exists() and any(dst.parent.iterdir()))
