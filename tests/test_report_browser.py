"""The browser check's page handling (the browser itself runs in tests/test_workflow.py)."""

from __future__ import annotations

import json

import pytest

from xling.errors import InputError
from xling.report.browser import _expectation, _with_clicks, missing, visible_text


def test_visible_text_leaves_out_scripts_and_styles():
    dom = "<html><style>.a{}</style><body><p>Table 1</p><script>var x = 'figure3.png';</script></body></html>"
    assert visible_text(dom).split() == ["Table", "1"]
    assert missing(dom, ["Table 1", "figure3.png"]) == ["figure3.png"]


def test_clicks_go_before_the_last_body_tag(tmp_path):
    page = tmp_path / "r.html"
    # the report's own scripts contain "</body>" in strings: only the real end tag may be used
    page.write_text("<html><body><script>var f = '</body>';</script><p>x</p></body></html>")
    out = _with_clicks(page, ["Results", "1. Table 1"], tmp_path / "c.html").read_text()
    assert out.startswith("<html><body><script>var f = '</body>';</script><p>x</p><script>")
    assert out.endswith("</script></body></html>") and json.dumps(["Results", "1. Table 1"]) in out


def test_a_page_without_a_body_tag_is_named(tmp_path):
    page = tmp_path / "r.html"
    page.write_text("<html></html>")
    with pytest.raises(InputError, match=r"r\.html.*</body>"):
        _with_clicks(page, ["Results"], tmp_path / "c.html")


def test_expectations_parse():
    assert _expectation("1. Table 1: zero-shot transfer=table1.csv,figure3.png") == (
        "1. Table 1: zero-shot transfer", ["table1.csv", "figure3.png"])
    assert _expectation("2. Anchor points") == ("2. Anchor points", [])
