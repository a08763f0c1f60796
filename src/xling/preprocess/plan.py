"""Config -> file names and shard counts for workflow/rules/preprocess.smk (static DAG)."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Mapping
from urllib.parse import urlparse

DOMAINS = ("wiki", "cc")


def n_shards(config: Mapping, lang: str) -> int:
    """``preprocess.shards``: an int for every language or a mapping lang -> int (default 1)."""
    shards = config.get("preprocess", {}).get("shards", 1)
    if isinstance(shards, Mapping):
        shards = shards.get(lang, shards.get("default", 1))
    shards = int(shards)
    if shards < 1:
        raise ValueError(f"preprocess.shards for {lang} must be >= 1, got {shards}")
    return shards


def download_basename(config: Mapping, resource_id: str) -> str:
    """File name the download stage gives ``downloads.<resource_id>``: the URL's basename."""
    url = config["downloads"][resource_id]["url"]
    return PurePosixPath(urlparse(url).path).name


def wiki_dump(config: Mapping, lang: str) -> str:
    """``downloads/wiki_<lang>/<file>`` relative to the results directory."""
    return f"downloads/wiki_{lang}/{download_basename(config, f'wiki_{lang}')}"


def cc_file(config: Mapping, lang: str) -> str:
    return f"downloads/cc_{lang}/{download_basename(config, f'cc_{lang}')}"


def uses_stanford(config: Mapping, lang: str) -> bool:
    return (config["languages"][lang].get("segmenter") or "none") == "stanford"
