"""Progress in a log file: plain lines with count and rate, never carriage-return redraws."""

from __future__ import annotations

import io

from xling import progress as progress_module
from xling.progress import progress


def test_a_log_gets_one_line_per_update_with_the_count(monkeypatch):
    monkeypatch.setattr(progress_module, "LOG_INTERVAL_S", 0.0)
    log = io.StringIO()
    for _ in progress(range(5), desc="tokenise en.0", unit="line", stream=log):
        pass
    text = log.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert len(lines) >= 2 and all(line.startswith("tokenise en.0") for line in lines)
    assert "5/5" in lines[-1] and "line/s" in lines[-1]


def test_updates_by_hand_and_an_unknown_total(monkeypatch):
    monkeypatch.setattr(progress_module, "LOG_INTERVAL_S", 0.0)
    log = io.StringIO()
    with progress(desc="switch", unit="line", stream=log) as bar:
        bar.update(3)
        bar.update(4)
    assert log.getvalue().splitlines()[-1].startswith("switch: 7line")
