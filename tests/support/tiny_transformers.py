"""Tiny transformers checkpoints for the external-model tests, built once per session by the
documented command (scripts/make_tiny_checkpoints.py) on short texts of two languages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from xling.config import REPO

EN = ["The war is famous .", "Birds with the mouse arrived .", "The empty farmers know the old libraries .",
      "Oliver waited under the grass .", "A loud sailor will send this farmer a song ."]
FR = ["La guerre est célèbre .", "Des oiseaux avec la souris sont arrivés .", "Les fermiers vides connaissent "
      "les vieilles bibliothèques .", "Olivier a attendu sous l' herbe .", "Un marin bruyant enverra une chanson ."]
NAMES = ("bert_en", "bert_fr", "camembert_fr", "mbert", "xlmr")
EVERY_KIND = ("distilbert", "electra", "albert", "deberta_v2", "xlm")  # --every-kind's


def write_texts(directory: Path) -> dict[str, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    out = {}
    for lang, lines in (("en", EN), ("fr", FR)):
        out[lang] = directory / f"{lang}.txt"
        out[lang].write_text("\n".join(lines * 20) + "\n", encoding="utf-8")
    return out


def make_checkpoints(out: Path, texts: dict[str, Path], vocab_size: int = 200,
                     every_kind: bool = False) -> dict[str, Path]:
    """``{name: directory}`` of the script's checkpoints under ``out`` (``every_kind``: DistilBERT,
    ELECTRA, ALBERT, DeBERTa-v2 and XLM too)."""
    args = [f"--text={lang}={path}" for lang, path in texts.items()] + (["--every-kind"] if every_kind else [])
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "make_tiny_checkpoints.py"), str(out), *args,
                           "--vocab-size", str(vocab_size)], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"make_tiny_checkpoints.py failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return {name: out / name for name in NAMES + (EVERY_KIND if every_kind else ())}
