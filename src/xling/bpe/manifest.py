"""The `bpe.json` manifest of a BPE directory and the language-prefix rule of the No-anchors mode.

Later stages (fine-tuning through `SubwordTokenizer`) must segment words exactly as pretraining
did; the manifest records everything that takes: the mode, the merges and which codes file each
language uses.
"""

from __future__ import annotations

import json
from pathlib import Path

from xling.errors import InputError
from xling.io import atomic_write

MODES = ("joint", "per_language", "per_language_prefixed")
MANIFEST = "bpe.json"
SEPARATOR = "@@"  # subword-nmt's joiner: a token ending in '@@' continues into the next one
SPLITS = ("train", "valid", "test")


def prefix_token(lang: str, token: str) -> str:
    """`<lang>_<token>`: the prefix goes in front so that the '@@' joiner stays at the end."""
    return f"{lang}_{token}"


def check_prefixes_unambiguous(languages: list[str]) -> None:
    """'en_' must not start another language's prefix (e.g. 'en' and 'en_x'), or a prefixed
    token of one language could read as a token of the other."""
    for a in languages:
        for b in languages:
            if a != b and prefix_token(b, "").startswith(prefix_token(a, "")):
                raise ValueError(f"language prefixes of {a!r} and {b!r} are ambiguous")


def codes_name(mode: str, lang: str) -> str:
    return "codes.joint" if mode == "joint" else f"codes.{lang}"


def bpe_name(lang: str, split: str) -> str:
    return f"{lang}.{split}.bpe"


def write_manifest(bpe_dir: Path, mode: str, merges: int, languages: list[str], **extra) -> dict:
    if mode not in MODES:
        raise ValueError(f"unknown BPE mode {mode!r}; expected one of {MODES}")
    manifest = {
        "mode": mode,
        "merges": merges,
        "languages": list(languages),
        "codes": {lang: codes_name(mode, lang) for lang in languages},
        "separator": SEPARATOR,
        "prefix": "{lang}_" if mode == "per_language_prefixed" else None,
        **extra,
    }
    with atomic_write(Path(bpe_dir) / MANIFEST) as fh:
        json.dump(manifest, fh, indent=2, sort_keys=True)
        fh.write("\n")
    return manifest


def read_manifest(path: Path) -> dict:
    """A BPE directory's ``bpe.json`` (the codes files it names sit beside it)."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except FileNotFoundError:
        raise InputError(path, None, "a bpe.json manifest written by the bpe stage", "no such file")
    except json.JSONDecodeError as err:
        raise InputError(path, err.lineno, "valid JSON", err.msg)
    for key in ("mode", "merges", "languages", "codes"):
        if key not in manifest:
            raise InputError(path, None, f"key {key!r} in the manifest", ", ".join(sorted(manifest)))
    if manifest["mode"] not in MODES:
        raise InputError(path, None, f"mode in {MODES}", str(manifest["mode"]))
    return manifest


def bpe_signature(setting: dict) -> tuple:
    """What determines a setting's BPE data: settings with equal signatures (e.g. Default anchors
    and the Sep* rows: per-language 40k on Wikipedia) have byte-identical BPE and binarised data."""
    return (setting["domain"], setting["bpe"], int(setting["merges"]), bool(setting["codeswitch"]))


def canonical_setting(settings: dict[str, dict], name: str) -> str:
    """The first setting (in config order) whose BPE data equals `name`'s: a workflow may build
    BPE and binarised data once for it and reuse them."""
    sig = bpe_signature(settings[name])
    return next(s for s, cfg in settings.items() if bpe_signature(cfg) == sig)
