"""Chinese segmentation: jieba for real; Stanford command line and error paths."""

import os
import stat

import pytest

from xling import config as xcfg
from xling.preprocess.segment import SegmenterUnavailable, StanfordSegmenter, segmenter
from xling.preprocess.tokenize import LineTokenizer, TokenizeSettings


def test_jieba_segments_chinese_sentence():
    seg = segmenter("jieba")
    words = seg("我爱北京天安门。")
    assert "".join(words) == "我爱北京天安门。"
    assert "北京" in words and "天安门" in words and len(words) >= 4


def test_zh_line_tokenizer_with_jieba_drops_spaces_and_control_chars():
    tok = LineTokenizer(TokenizeSettings("zh", segmenter="jieba"))
    out = tok("  我爱\x07北京  天安门 ")
    assert "  " not in out and "\x07" not in out
    assert out.replace(" ", "") == "我爱北京天安门"
    assert tok.batch(["我爱北京", "", "天安门"]) == [tok("我爱北京"), "", tok("天安门")]


def test_zh_is_normalised_after_segmentation_as_in_xlm():
    """XLM: segment.sh | replace-unicode-punctuation | normalize-punctuation | remove-non-printing.
    Full-width punctuation and digits become ASCII after the segmenter has seen them."""
    tok = LineTokenizer(TokenizeSettings("zh", segmenter="jieba"))
    out = tok("他说：“你好，世界！”（２０１９年）")
    assert "，" not in out and "：" not in out and "（" not in out and "２" not in out
    assert out == '他 说: " 你好 , 世界 ! " (2 0 1 9 年)'
    assert tok.batch(["我爱北京。"]) == ["我 爱 北京 ."] == [tok("我爱北京。")]
    # a given (treebank) word is normalised the same way, never segmented again
    assert tok.given_word("北京。") == ["北京."] and tok.given_word("，") == [","]
    assert tok.given_word("天安门") == ["天安门"]


def test_given_words_need_no_segmenter():
    """NER and UD words are already segmented: normalising them starts no Stanford segmenter (no
    Java, no segmenter files), while a raw line still asks for it."""
    tok = LineTokenizer(TokenizeSettings("zh", segmenter="stanford", stanford_model="pku"))
    assert tok.given_word("北京。") == ["北京."]
    with pytest.raises(SegmenterUnavailable, match="segmenter directory"):
        tok("我爱北京")


def test_stanford_model_defaults_to_xlms_pku():
    cfg = {"languages": {"zh": {"moses": "zh", "segmenter": "stanford"}},
           "preprocess": {"lowercase_and_remove_accent": False}}
    assert TokenizeSettings.from_config(xcfg.fill_defaults(cfg), "zh").stanford_model == "pku"


def _fake_home(tmp_path, script: str):
    home = tmp_path / "stanford-segmenter-2018-10-16"
    home.mkdir()
    sh = home / "segment.sh"
    sh.write_text(script)
    sh.chmod(sh.stat().st_mode | stat.S_IEXEC)
    return home


def test_stanford_command_line(tmp_path):
    home = _fake_home(tmp_path, "#!/bin/bash\n")
    seg = StanfordSegmenter(tmp_path, model="pku")  # finds segment.sh below the extract dir
    assert seg.home == home
    assert seg.command("/x/in.txt") == ["bash", str(home / "segment.sh"), "pku", "/x/in.txt", "UTF-8", "0"]


def test_stanford_batch_wrapper_maps_lines(tmp_path):
    # stands in for the Java program only to check our file/line handling around it: it prints
    # each input line with spaces between characters, the shape segment.sh's output has
    _fake_home(tmp_path, '#!/bin/bash\n[ "$1" = ctb ] && [ "$3" = UTF-8 ] || exit 3\n'
                         "sed 's/./& /g; s/ $//' \"$2\"\n")
    seg = StanfordSegmenter(tmp_path, model="ctb")
    assert seg.segment_lines(["我爱", "北京"]) == [["我", "爱"], ["北", "京"]]
    assert seg("天安门") == ["天", "安", "门"]


def test_stanford_failure_reports_stderr(tmp_path):
    _fake_home(tmp_path, "#!/bin/bash\necho 'Error: could not find or load main class' >&2\nexit 1\n")
    with pytest.raises(SegmenterUnavailable, match="main class"):
        StanfordSegmenter(tmp_path, "pku")("x")


def test_stanford_missing_segmenter_suggests_jieba(tmp_path):
    with pytest.raises(SegmenterUnavailable, match="segmenter: jieba"):
        StanfordSegmenter(tmp_path / "nothing-here", "pku")
    with pytest.raises(SegmenterUnavailable, match="segmenter: jieba"):
        segmenter("stanford")


def test_stanford_missing_java_suggests_jieba(tmp_path):
    _fake_home(tmp_path, "#!/bin/bash\n")
    with pytest.raises(SegmenterUnavailable, match="segmenter: jieba"):
        StanfordSegmenter(tmp_path, "pku", java="no-such-java-binary")


def test_unknown_segmenter_and_model():
    with pytest.raises(ValueError):
        segmenter("mecab")
    with pytest.raises(ValueError):
        StanfordSegmenter("/", model="msr")


def test_real_stanford_if_available():
    home = os.environ.get("XLING_STANFORD_SEGMENTER")
    if not home:
        pytest.skip("set XLING_STANFORD_SEGMENTER to the extracted segmenter to run it for real")
    words = segmenter("stanford", home=home, model="ctb")("我爱北京天安门。")
    assert "".join(words) == "我爱北京天安门。" and "北京" in words
