"""Config -> shard counts and download file names for the preprocess rules."""

from pathlib import Path

import pytest

from xling import config as xcfg
from xling.preprocess.plan import cc_file, n_shards, uses_stanford, wiki_dump
from xling.preprocess.segment import SegmenterUnavailable
from xling.preprocess.tokenize import TokenizeSettings, tokenize_line

CONFIG = xcfg.load(Path(__file__).resolve().parents[1] / "config" / "config.yaml")


def test_n_shards_int_mapping_default():
    assert n_shards({"preprocess": {"shards": 4}}, "fr") == 4
    cfg = {"preprocess": {"shards": {"en": 16, "default": 2}}}
    assert n_shards(cfg, "en") == 16 and n_shards(cfg, "zh") == 2
    assert n_shards({"preprocess": {}}, "en") == 1
    with pytest.raises(ValueError):
        n_shards({"preprocess": {"shards": 0}}, "en")


def test_download_names_follow_the_urls():
    assert wiki_dump(CONFIG, "fr") == "downloads/wiki_fr/frwiki-20190701-pages-articles.xml.bz2"
    assert cc_file(CONFIG, "zh") == "downloads/cc_zh/zh-Hans.txt.xz"
    assert uses_stanford(CONFIG, "zh") and not uses_stanford(CONFIG, "en")


def test_paper_config_settings():
    s = TokenizeSettings.from_config(CONFIG, "zh")
    # XLM: segment.sh pku
    assert (s.moses_lang, s.segmenter, s.stanford_model, s.lowercase) == ("zh", "stanford", "pku", False)
    # the paper config segments zh with Stanford; without the segmenter the error says what to do
    with pytest.raises(SegmenterUnavailable, match="segmenter: jieba"):
        tokenize_line("我爱北京", "zh", CONFIG)
