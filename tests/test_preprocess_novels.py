"""The corpus from TEI novels through the workflow (preprocess.corpus_files, rule tei_extract): real
ELTeC files fetched by their download entries (file:// URLs standing in for their GitHub ones),
their body text cut into sentences, then the usual Moses chain and split."""

from __future__ import annotations

import hashlib

import yaml

from support.shared_data import ELTEC, needs
from support.slice import snakemake
from xling.config import REPO

NOVELS = {"fr": "fra/FRA01301_Flaubert.xml", "ru": "rus/007_olesya.xml"}


def _overlay(tmp_path, sha256=None) -> str:
    downloads = {f"eltec_{lang}": {"url": (ELTEC / name).as_uri(),
                                   "sha256": sha256 or hashlib.sha256((ELTEC / name).read_bytes()).hexdigest()}
                 for lang, name in NOVELS.items()}
    overlay = {"run_name": "novels", "download": {"mirror": None}, "downloads": downloads,
               "preprocess": {"corpus_files": {lang: [f"eltec_{lang}"] for lang in NOVELS},
                              "valid_lines": 100, "test_lines": 100}}
    path = tmp_path / "novels.yaml"
    path.write_text(yaml.safe_dump(overlay), encoding="utf-8")
    return str(path)


@needs(ELTEC)
def test_a_language_reads_its_novels_as_its_corpus(tmp_path):
    """French and Russian from one novel each: a dry run plans tei_extract for them (and no
    Wikipedia dump); the run writes one sentence a line, tokenised and split as Wikipedia's lines
    would be; a wrong pin stops the download, nothing extracted."""
    configs = [str(REPO / "config" / "demo.yaml"), _overlay(tmp_path)]
    targets = [f"results/novels/corpus/{lang}/wiki.train.txt" for lang in NOVELS]
    dry = snakemake(tmp_path, "-n", "--cores", "2", "--configfile", *configs, "--", *targets)
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "tei_extract" in dry.stdout and "wiki_extract" not in dry.stdout and "download_wiki_" not in dry.stdout
    run = snakemake(tmp_path, "--cores", "2", "--configfile", *configs, "--", *targets, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    fr = (tmp_path / "results/novels/corpus/fr/wiki.train.txt").read_text(encoding="utf-8").splitlines()
    assert len(fr) > 3000 and all(line.strip() for line in fr)
    # Moses tokenised, one sentence a line: French elisions cut as XLM's chain cuts them
    assert any(" l' " in line for line in fr) and max(len(line.split()) for line in fr) < 400
    log = (tmp_path / "logs/novels/corpus/ru/tei_extract.log").read_text(encoding="utf-8")
    assert "sentences" in log and "007_olesya.xml" in log
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    configs = [str(REPO / "config" / "demo.yaml"), _overlay(wrong, sha256="0" * 64)]
    bad = snakemake(wrong, "--cores", "1", "--configfile", *configs, "--", "results/novels/corpus/fr/wiki.train.txt")
    assert bad.returncode != 0 and "sha256 mismatch" in bad.stdout + bad.stderr
    assert not list(wrong.glob("results/novels/corpus/fr/raw/*"))
