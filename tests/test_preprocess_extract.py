"""Wikipedia (WikiExtractor) and CC-100 extraction, and bad input."""

import bz2
import lzma
import subprocess

import pytest

from xling.errors import InputError
from xling.preprocess.extract import clean_wiki_lines, extract_cc, extract_wiki

DUMP = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>enwiki</dbname>
    <base>https://en.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.34.0-wmf.10</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="10" case="first-letter">Template</namespace>
    </namespaces>
  </siteinfo>
  <page>
    <title>Anarchism</title>
    <ns>0</ns>
    <id>12</id>
    <revision>
      <id>1</id>
      <text xml:space="preserve">'''Anarchism''' is a [[political philosophy]] that advocates [[self-governance|self-governed]] societies.&lt;ref&gt;A citation.&lt;/ref&gt;

== History ==
It was first used in 1642.{{citation needed}}

{| class="wikitable"
|-
| cell one || cell two
|}
[[Category:Anarchism]]</text>
    </revision>
  </page>
  <page>
    <title>Second page</title>
    <ns>0</ns>
    <id>13</id>
    <revision>
      <id>2</id>
      <text xml:space="preserve">The second article has one sentence about ''cats''.</text>
    </revision>
  </page>
</mediawiki>
"""


def _dump(tmp_path):
    dump = tmp_path / "enwiki-20190701-pages-articles.xml.bz2"
    with bz2.open(dump, "wt", encoding="utf-8") as fh:
        fh.write(DUMP)
    return dump


def test_extract_wiki_small_dump(tmp_path):
    dump = _dump(tmp_path)
    out = tmp_path / "wiki.txt"
    n = extract_wiki(dump, out, processes=1)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert n == len(lines)
    assert "Anarchism is a political philosophy that advocates self-governed societies." in lines
    assert "It was first used in 1642." in lines
    assert 'The second article has one sentence about "cats".' in lines
    # as XLM: the titles stay; no doc tags or empty lines; WikiExtractor itself leaves out
    # references, categories and the table
    assert lines[0] == "Anarchism" and "Second page" in lines
    assert all(l and not l.startswith("<") and "citation" not in l and "Category" not in l
               and not l.startswith("|") for l in lines)
    extract_wiki(dump, out, processes=1, drop=["titles", "markup"])
    dropped = out.read_text(encoding="utf-8").splitlines()
    assert dropped == [l for l in lines if l not in ("Anarchism", "Second page")]


def test_extraction_is_xlms_shell_pipeline(tmp_path):
    """By default we keep what XLM's get-data-wiki.sh keeps of WikiExtractor's output, line for
    line: its own ``sed | grep | grep`` run on the same output (lines stripped, as the tokeniser
    does anyway)."""
    raw = ['<doc id="1" url="u" title="T">', "T", "", "   ", "Body line one. ", "{{Infobox x", "|}",
           "! header", "<br>", "Body line two.", "</doc>", '<doc id="2" url="u" title="U">', "U", "Third.", "</doc>"]
    text = "".join(l + "\n" for l in raw)
    xlm = subprocess.run(["bash", "-c", 'sed "/^\\s*\\$/d" | grep -v "^<doc id=" | grep -v "</doc>\\$"'],
                         input=text, capture_output=True, text=True, check=True).stdout
    assert list(clean_wiki_lines(text.splitlines(keepends=True))) == [l.strip() for l in xlm.splitlines()]
    assert "T" in xlm.splitlines() and "|}" in xlm.splitlines()  # the titles and markup do stay in XLM's


def test_not_a_mediawiki_dump(tmp_path):
    dump = tmp_path / "x.xml.bz2"
    with bz2.open(dump, "wt", encoding="utf-8") as fh:
        fh.write("<html><body>not a dump</body></html>\n")
    with pytest.raises(InputError, match=r"x\.xml\.bz2:1: expected a MediaWiki XML export"):
        extract_wiki(dump, tmp_path / "out.txt")
    assert not (tmp_path / "out.txt").exists()
    plain = tmp_path / "plain.xml.bz2"
    plain.write_text("<mediawiki> but not bzip2")
    with pytest.raises(InputError, match="bzip2"):
        extract_wiki(plain, tmp_path / "out.txt")


def test_clean_wiki_lines_drops_titles_and_markup_on_request():
    raw = ['<doc id="1" url="u" title="T">', "T", "", "Body line one.", "{{Infobox x", "|}",
           "Body line two.", "</doc>", '<doc id="2" url="u" title="U">', "U", "Third.", "</doc>"]
    assert list(clean_wiki_lines(raw)) == ["T", "Body line one.", "{{Infobox x", "|}", "Body line two.", "U",
                                           "Third."]
    assert list(clean_wiki_lines(raw, ["titles"])) == ["Body line one.", "{{Infobox x", "|}", "Body line two.",
                                                      "Third."]
    assert list(clean_wiki_lines(raw, ["markup"])) == ["T", "Body line one.", "Body line two.", "U", "Third."]
    assert list(clean_wiki_lines(raw, ["titles", "markup"])) == ["Body line one.", "Body line two.", "Third."]
    with pytest.raises(ValueError, match="'tables'"):
        list(clean_wiki_lines(raw, ["tables"]))


def test_wiki_drop_default_is_xlms():
    from xling import config as xcfg

    cfg = xcfg.load(xcfg.REPO / "config" / "config.yaml")
    assert cfg["preprocess"]["wiki_drop"] == [] == xcfg.schema()["properties"]["preprocess"]["properties"][
        "wiki_drop"]["default"]


def test_extract_cc_drops_empty_lines(tmp_path):
    src = tmp_path / "fr.txt.xz"
    with lzma.open(src, "wt", encoding="utf-8") as fh:
        fh.write("Premier document, ligne 1.\n  Ligne 2.  \n\nDeuxième document.\n\n\n")
    out = tmp_path / "cc.txt"
    assert extract_cc(src, out) == 3
    assert out.read_text(encoding="utf-8") == "Premier document, ligne 1.\nLigne 2.\nDeuxième document.\n"


def test_extract_cc_invalid_utf8_names_file_and_line(tmp_path):
    src = tmp_path / "ru.txt.xz"
    with lzma.open(src, "wb") as fh:
        fh.write("хорошо\n\n".encode("utf-8") + b"bad \xff\xfe bytes\n")
    with pytest.raises(InputError, match=r"ru\.txt\.xz:3: expected UTF-8 text"):
        extract_cc(src, tmp_path / "cc.txt")
    assert not (tmp_path / "cc.txt").exists()  # nothing half-written


def test_extract_cc_not_xz(tmp_path):
    src = tmp_path / "zh.txt.xz"
    src.write_bytes(b"plain text, not xz\n")
    with pytest.raises(InputError, match="xz"):
        extract_cc(src, tmp_path / "cc.txt")
