"""Moses chain: equal to the sacremoses CLI pipeline (XLM's tokenize.sh) and to sacremoses itself."""

import random
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from sacremoses import MosesPunctNormalizer, MosesTokenizer

from xling import config as xcfg
from xling.preprocess.moses import MosesPipeline, _required_chars, lowercase_and_remove_accent
from xling.preprocess.tokenize import TokenizeSettings, tokenize_line

SAMPLES = {
    "en": [
        "The U.S. isn't here... \"Quoted,\" he said (Mr. Smith) — 1,234.5 people!",
        "It’s 42% of the “world’s” data; see e.g. page 3.",
        "Tabs\there and  double  spaces\u00a0and a control\x07char .",
        "'Tis the students' own 'quoted' text, isn't it?",
    ],
    "fr": [
        "« L’homme » n’est pas là… aujourd’hui, dit-il : « Non ! »",
        "C'est l'été ; il fait 30\u00a0°C et 1\u00a0000 personnes (environ) sont venues.",
        "Qu’est-ce que c’est ? — Rien, M. Dupont.",
    ],
    "ru": [
        "«Москва» — столица России, где живёт 12,6 млн человек.",
        "Он сказал: „Привет!“ и ушёл… (в 1999 г.)",
    ],
    "de": [
        "„Das ist’s“, sagte Dr. Müller, „und 3,5 Mio. Euro.“",
        "Die Straße (Nr. 5) ist z.B. 1\u00a0000 m lang; ÄÖÜ äöü ß.",
    ],
}


def _cli(lang: str, lines: list[str]) -> list[str]:
    exe = Path(sys.executable).parent / "sacremoses"
    if not exe.exists():
        exe = shutil.which("sacremoses")
    # the CLI always XML-escapes (its -x flag cannot switch escaping off in this click version)
    cmd = [str(exe), "-l", lang, "-j", "1", "-q", "normalize", "-p", "-c", "tokenize", "-x"]
    out = subprocess.run(cmd, input="".join(l + "\n" for l in lines), capture_output=True,
                         text=True, encoding="utf-8", check=True).stdout
    return out.split("\n")[: len(lines)]


@pytest.mark.parametrize("lang", sorted(SAMPLES))
def test_pipeline_equals_sacremoses_cli(lang):
    lines = SAMPLES[lang]
    ours = MosesPipeline(lang, escape=True)
    assert [ours(l) for l in lines] == _cli(lang, lines)
    # production setting (XLM: -no-escape) differs from the CLI only by escaping
    plain = MosesPipeline(lang)
    esc = MosesTokenizer(lang)
    assert [esc.escape_xml(plain(l)) for l in lines] == _cli(lang, lines)


def test_fr_apostrophes_and_quotes_tokens():
    out = MosesPipeline("fr")("« L’homme » n’est pas là…").split()
    assert out == ['"', "L'", "homme", '"', "n'", "est", "pas", "là", "..."]


def _fuzz_lines(alphabet, n, seed):
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))) for _ in range(n)]


@pytest.mark.parametrize("lang", ["en", "fr", "de", "ru"])
def test_fast_tokenize_equals_sacremoses(lang):
    # pieces chosen to hit every rule: prefixes, multidots, commas in numbers, quote adjacency
    alphabet = list("aZé9 ,.'\"()-`:;%!?&|<>[]/@#$ж中\t\x01") + [
        "Mr.", "U.S.", "No.", "Nr.", "...", "don't", "l'", "1'", "' '", "x.", "5,3", "  "]
    ours, ref = MosesPipeline(lang, escape=True), MosesTokenizer(lang)
    for line in _fuzz_lines(alphabet, 3000, sum(map(ord, lang))):
        assert ours.tokenize(line) == ref.tokenize(line, return_str=True, escape=True), repr(line)


@pytest.mark.parametrize("lang", ["en", "fr", "de", "ru"])
def test_fast_normalize_equals_sacremoses(lang):
    norm = MosesPunctNormalizer(lang, pre_replace_unicode_punct=True, post_remove_control_chars=True)
    # plain lines with one to three characters that some rule mentions, so that a character
    # missing from the fast path's trigger set shows up as a difference
    rule_chars = set()
    for pattern, _ in norm.substitutions + norm.REPLACE_UNICODE_PUNCTUATION:
        rule_chars.update(pattern)
    special = sorted(rule_chars) + ["nº\u00a0", "\u00a0ºC", "''", "´´", "  ", "\t", "\x07", "\u2009"]
    plain = "aZ09 "
    rng = random.Random(7)
    ours = MosesPipeline(lang)
    for _ in range(6000):
        parts = [rng.choice(plain) for _ in range(rng.randint(0, 10))]
        for _ in range(rng.randint(1, 3)):
            parts.insert(rng.randint(0, len(parts)), rng.choice(special))
        line = "".join(parts)
        assert ours.normalize(line) == norm.normalize(line + "\n"), repr(line)


def test_lowercase_and_remove_accent_definition():
    text = "Éléphant ÇA Ångström naïve Ёлка ß"
    expected = "".join(c for c in unicodedata.normalize("NFD", text.lower())
                       if unicodedata.category(c) != "Mn")
    assert lowercase_and_remove_accent(text) == expected == "elephant ca angstrom naive елка ß"


def test_tokenize_line_from_config_lowercases():
    config = xcfg.fill_defaults({"languages": {"fr": {"moses": "fr", "segmenter": "none"}},
                                 "preprocess": {"lowercase_and_remove_accent": True}})
    assert tokenize_line("L’Été « chaud »", "fr", config) == "l' ete \" chaud \""
    assert tokenize_line("L’Été", "fr", TokenizeSettings("fr")) == "L' Été"


def test_required_chars_of_rule_patterns():
    assert _required_chars(r"(\d) %") == "%"
    assert _required_chars(r"\) ([.!:?;,])") == ")"
    assert _required_chars(r'(\.+)"(\s*[^<])') == '."'
    assert _required_chars("。\\s*") == "。"
    assert _required_chars(r" +") == "  "
    assert _required_chars(r"([a-zA-Z])’([a-zA-Z])") == "’"
    assert _required_chars(r"a|b") is None and _required_chars(r"x?") is None


SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _real_sentences(lang: str) -> list[str]:
    """Raw sentences of the UD dev treebank (# text = ...) and the Tatoeba test set."""
    tb = {"en": "UD_English-EWT", "fr": "UD_French-GSD", "ru": "UD_Russian-GSD"}[lang]
    lines = []
    for f in sorted((SHARED / "ud-2.3" / tb).glob("*-ud-dev.conllu")):
        lines += [l[len("# text = "):].rstrip("\n") for l in open(f, encoding="utf-8")
                  if l.startswith("# text = ")]
    tat = {"en": "tatoeba.fra-eng.eng", "fr": "tatoeba.fra-eng.fra", "ru": "tatoeba.rus-eng.rus"}[lang]
    if (SHARED / "tatoeba-v1" / tat).exists():
        lines += (SHARED / "tatoeba-v1" / tat).read_text(encoding="utf-8").splitlines()
    return lines


@pytest.mark.parametrize("lang", ["en", "fr", "ru"])
def test_real_text_equals_sacremoses_cli(lang):
    if not (SHARED / "ud-2.3").is_dir():
        pytest.skip(f"no shared real data at {SHARED}")
    lines = _real_sentences(lang)
    assert len(lines) > 500
    ours = MosesPipeline(lang, escape=True)
    got = [ours(l) for l in lines]
    want = _cli(lang, lines)
    diff = [(l, a, b) for l, a, b in zip(lines, got, want) if a != b]
    assert not diff, diff[:3]
