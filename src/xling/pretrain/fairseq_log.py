"""fairseq's training log (``--log-format json``) as the job writes it: one ``START_MARK`` line
per invocation of fairseq-train, then fairseq's stamped lines; read into the records, the
wall time of each invocation and done.json's summary."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

START_MARK = "=== xling pretrain start "
_LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \| INFO \| (\S+) \| (\{.*\})\s*$")
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \|")


def parse_log(log_path: Path) -> dict:
    """Per-invocation wall time and the json records of a fairseq train log
    (``--log-format json``)."""
    records: list[tuple[str, dict]] = []
    walls: list[float] = []
    start = last = None

    def close():
        if start is not None and last is not None:
            walls.append(max(0.0, (last - start).total_seconds()))

    with open(log_path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith(START_MARK):
                close()
                start = datetime.fromisoformat(line[len(START_MARK):].split()[0])
                last = start
                continue
            m = _STAMP.match(line)
            if m and start is not None:
                last = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")
            m = _LOG_LINE.match(line)
            if m:
                try:
                    records.append((m.group(2), json.loads(m.group(3))))
                except json.JSONDecodeError:
                    continue
    close()
    return {"records": records, "invocation_wall_s": walls}


def summarise(records: list[tuple[str, dict]], languages: list[str]) -> dict:
    """Best source-language (first language) valid ppl, per-language valid ppl at the last
    validation and at the best one, and training tokens/s from the epoch summaries."""
    src = languages[0]
    valid: dict[str, list[dict]] = {lang: [] for lang in languages}
    for tag, rec in records:
        for lang in languages:
            if tag == f"valid_{lang}":
                valid[lang].append({"updates": int(float(rec[f"valid_{lang}_num_updates"])),
                                    "ppl": float(rec[f"valid_{lang}_ppl"]),
                                    "loss": float(rec[f"valid_{lang}_loss"])})
    out: dict = {"valid_ppl": {l: v[-1]["ppl"] for l, v in valid.items() if v}}
    if valid[src]:
        best = min(valid[src], key=lambda r: r["loss"])
        out["best_updates"] = best["updates"]
        out[f"best_valid_ppl_{src}"] = best["ppl"]
        out["valid_ppl_at_best"] = {
            l: next((r["ppl"] for r in v if r["updates"] == best["updates"]), None) for l, v in valid.items()}
    # tokens/s: every epoch summary covers the updates since the previous one
    tokens = seconds = 0.0
    prev = 0
    for tag, rec in records:
        if tag != "train":
            continue
        n = int(float(rec["train_num_updates"]))
        wps = float(rec["train_wps"])
        if n > prev and wps > 0:
            t = float(rec["train_wpb"]) * (n - prev)
            tokens += t
            seconds += t / wps
        prev = n
    out["tokens_per_s"] = tokens / seconds if seconds else None
    out["train_tokens"] = tokens
    return out
