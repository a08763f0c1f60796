"""A config overlay on config/demo.yaml with Section 5 as the real-language study reads it: parallel
rows from the UD PUD treebanks, Figure 4's dictionaries from FreeDict, fastText trained on the
run's corpus; Figure 5 and en′ left out. Its downloads are ``file://`` URLs of the real files in
../shared/data; FreeDict's, tarballs laid out as Debian's dict-freedict-* packages extract
(``usr/share/dictd/``), built from the shared .index and .dict.dz."""

from __future__ import annotations

import copy
import tarfile
from pathlib import Path

from support.shared_data import FREEDICT, PUD
from xling import config as xcfg

# the directions the real study has (FreeDict's eng-deu is not in ../shared/data: en-de is left out)
FREEDICT_DIRECTIONS = {"en-fr": "eng-fra", "en-ru": "eng-rus"}


def freedict_tarball(name: str, dest: Path) -> Path:
    """``dest``: a tar.gz of FreeDict's ``name`` (eng-fra) under usr/share/dictd/, as the package's."""
    with tarfile.open(dest, "w:gz") as tf:
        for suffix in (".index", ".dict.dz"):
            src = FREEDICT / f"freedict-{name}{suffix}"
            tf.add(src, arcname=f"usr/share/dictd/{src.name}")
    return dest


def overlay(tmp: Path) -> dict:
    """The overlay, its FreeDict tarballs written under ``tmp``."""
    downloads = {f"ud_{lang}_pud_test": {"url": path.as_uri(), "sha256": None} for lang, path in PUD.items()}
    freedict = {}
    for direction, name in FREEDICT_DIRECTIONS.items():
        rid = f"freedict_{name.replace('-', '_')}"
        downloads[rid] = {"url": freedict_tarball(name, tmp / f"freedict-{name}.tar.gz").as_uri(), "sha256": None,
                          "extract": True}
        freedict[direction] = rid
    return {
        "monolingual": {"languages": ["en", "fr", "de", "ru"]},  # PUD has no Chinese here
        "analysis": {
            "parallel": "pud",
            "pud": {lang: f"ud_{lang}_pud_test" for lang in PUD},
            "align_sentences": 1000,
            "cka_sentences": 1000,
            "en_paraphrase": None,
            "backtranslation": None,
            "transfer": {"tasks": []},
            # eng-rus has 1,475 one-word headwords: sizes that every dictionary holds
            "words": {"dictionary": "freedict", "fasttext": "corpus", "freedict_train": 1000, "freedict_test": 400},
        },
        "codeswitch": {"freedict": freedict},
        "downloads": downloads,
    }


def demo_with_real_section5(tmp: Path) -> dict:
    """config/config.yaml with config/demo.yaml and the overlay merged, checked valid as it is."""
    paper = xcfg.load_yaml(xcfg.REPO / "config" / "config.yaml")
    cfg = xcfg.merge(xcfg.merge(paper, xcfg.load_yaml(xcfg.REPO / "config" / "demo.yaml")), overlay(tmp))
    xcfg.validate(copy.deepcopy(cfg))
    return cfg
