"""Chinese segmentation: jieba for real; Stanford command line and error paths. Thai: pythainlp for real."""

import copy
import os
import stat
import subprocess
import sys

import pytest

from xling import config as xcfg
from xling.errors import ConfigError
from xling.preprocess.moses import MosesPipeline
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


# Thai: XLM's tokenize.sh runs `python tools/segment_th.py | remove-non-printing-char.perl`, where
# segment_th.py prints ' '.join(pythainlp.tokenize.word_tokenize(line)); no Moses step at all.


def _th():
    return LineTokenizer(TokenizeSettings("th", segmenter="pythainlp"))


def test_pythainlp_segments_thai_sentence():
    seg = segmenter("pythainlp")
    assert seg("ฉันรักภาษาไทย") == ["ฉัน", "รัก", "ภาษาไทย"]
    # word_tokenize keeps each space as a token of its own; the segmenter drops them
    assert seg("  ฉันรัก ภาษาไทย ") == ["ฉัน", "รัก", "ภาษาไทย"]
    assert seg.segment_lines(["ฉันรักภาษาไทย", "", "   "]) == [["ฉัน", "รัก", "ภาษาไทย"], [], []]


def test_th_line_is_xlms_words_joined_by_single_spaces():
    from pythainlp.tokenize import word_tokenize

    tok = _th()
    line = "ฉันรักภาษาไทย  สวัสดีครับ!"
    xlm = " ".join(word_tokenize(line))  # segment_th.py's line: space tokens become runs of spaces
    assert "   " in xlm
    assert tok(line) == "ฉัน รัก ภาษาไทย สวัสดี ครับ !" == " ".join(xlm.split())
    assert tok.batch([line, "", "ฉันรักภาษาไทย"]) == [tok(line), "", "ฉัน รัก ภาษาไทย"]


def test_th_line_skips_moses():
    """Moses would split the apostrophe and the brackets and turn curly quotes and full-width
    punctuation into ASCII; XLM's Thai line keeps what pythainlp returns."""
    from pythainlp.tokenize import word_tokenize

    tok = _th()
    line = "เขาพูดว่า “สวัสดี” don't <ไทย>！"
    assert tok(line) == " ".join(w for w in word_tokenize(line) if w.strip())
    assert "“" in tok(line) and "！" in tok(line)
    assert tok(line) != MosesPipeline("th")(" ".join(word_tokenize(line)))
    # a given (treebank, NER) word is neither segmented again nor normalised
    assert tok.given_word("ภาษาไทย") == ["ภาษาไทย"] and tok.given_word("“ไทย”") == ["“ไทย”"]


def test_th_non_printing_characters_are_removed_after_segmentation():
    """remove-non-printing-char.perl puts a space for each \\p{C} character of the segmented line:
    a zero-width space, a BOM or a control character ends a word there, never joins two."""
    tok = _th()
    out = tok("\ufeffภาษา\u200bไทย\x07ดี\tมาก abc\x07def")
    assert out == "ภาษา ไทย ดี มาก abc def"
    assert tok.given_word("ไทย\u200b") == ["ไทย"]


def test_pythainlp_runs_offline_and_writes_nothing(tmp_path):
    """newmm reads the dictionary inside the package: no network, no ~/pythainlp-data."""
    code = (
        "import socket\n"
        "def no_net(*a, **k): raise OSError('network used')\n"
        "socket.socket.connect = socket.create_connection = no_net\n"
        "from xling.preprocess.segment import segmenter\n"
        "print(' '.join(segmenter('pythainlp')('ฉันรักภาษาไทย')))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHAINLP")}
    env["HOME"] = str(tmp_path)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ฉัน รัก ภาษาไทย"
    assert list(tmp_path.iterdir()) == []


def test_config_accepts_pythainlp_and_rejects_unknown_segmenter():
    cfg = copy.deepcopy(xcfg.load_yaml(xcfg.REPO / "config" / "config.yaml"))
    cfg["languages"]["th"] = {"moses": "th", "segmenter": "pythainlp"}
    xcfg.validate(cfg)
    assert TokenizeSettings.from_config(cfg, "th").segmenter == "pythainlp"
    cfg["languages"]["th"]["segmenter"] = "deepcut"
    with pytest.raises(ConfigError, match=r"languages\.th\.segmenter.*'deepcut'.*'pythainlp'"):
        xcfg.validate(cfg)
    with pytest.raises(ValueError, match="pythainlp"):
        segmenter("deepcut")
