"""done.json summary from fairseq's json log: best source-language dev ppl, per-language
ppl, tokens/s and wall time over (resumed) invocations."""

import json

import pytest

from xling.pretrain.run import START_MARK, parse_log, summarise


def line(stamp, tag, rec):
    return f"2026-01-01 {stamp} | INFO | {tag} | {json.dumps({k: str(v) for k, v in rec.items()})}\n"


def valid(stamp, lang, updates, loss):
    return line(stamp, f"valid_{lang}", {"epoch": 1, f"valid_{lang}_loss": loss, f"valid_{lang}_ppl": round(2 ** loss, 2),
                                         f"valid_{lang}_num_updates": updates})


def train(stamp, updates, wpb, wps):
    return line(stamp, "train", {"epoch": 1, "train_num_updates": updates, "train_wpb": wpb, "train_wps": wps})


def test_parse_and_summarise(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(
        f"{START_MARK}2026-01-01T10:00:00 resume_from_updates=0 ===\n"
        "2026-01-01 10:00:05 | INFO | fairseq_cli.train | something\n"
        + train("10:00:10", 10, 1000, 500)           # 10k tokens in 20 s
        + valid("10:00:11", "en", 10, 6.0) + valid("10:00:11", "fr", 10, 7.0)
        + "garbage line that is not json\n"
        + f"{START_MARK}2026-01-01T11:00:00 resume_from_updates=10 ===\n"
        + train("11:00:20", 30, 500, 1000)           # 10k tokens in 10 s
        + valid("11:00:30", "en", 30, 5.0) + valid("11:00:30", "fr", 30, 7.5)
        + valid("11:00:40", "en", 40, 5.5) + valid("11:00:40", "fr", 40, 6.5)
    )
    parsed = parse_log(log)
    assert parsed["invocation_wall_s"] == [11.0, 40.0]
    s = summarise(parsed["records"], ["en", "fr"])
    assert s["best_updates"] == 30 and s["best_valid_ppl_en"] == pytest.approx(32.0)
    assert s["valid_ppl_at_best"] == {"en": pytest.approx(32.0), "fr": pytest.approx(round(2 ** 7.5, 2))}
    assert s["valid_ppl"] == {"en": pytest.approx(round(2 ** 5.5, 2)), "fr": pytest.approx(round(2 ** 6.5, 2))}
    assert s["train_tokens"] == 20000 and s["tokens_per_s"] == pytest.approx(20000 / 30)


def test_summary_of_a_monolingual_log(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(f"{START_MARK}2026-01-01T10:00:00 x ===\n" + valid("10:00:02", "zh", 5, 4.0))
    s = summarise(parse_log(log)["records"], ["zh"])
    assert s["best_valid_ppl_zh"] == 16.0 and s["tokens_per_s"] is None
