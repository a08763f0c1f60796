"""Open a Snakemake report in a real headless browser (Chromium), click through it as a reader
would, and check what it shows; optionally take a screenshot.

    python -m xling.report.browser results/demo/report.html \
        --expect "1. Table 1: zero-shot transfer=table1.csv,figure3.png" --screenshot report.png

The report is a page that JavaScript builds from data embedded in the file, and its results only
appear after clicking "Results" and a category. Chromium cannot be scripted from the command line,
so the check renders a temporary copy of the page with a small script appended that clicks
through the given menu entries, then reads the rendered document back (``--dump-dom``). Only the
rendered elements count (the embedded ``<script>`` data is removed first), so a text counts as
shown only if the page put it on screen.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

from xling.errors import InputError

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# Report pages are self-contained; the flags keep Chromium quiet and runnable as root in containers.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--hide-scrollbars")


def find_browser() -> str | None:
    for name in BROWSERS:
        if path := shutil.which(name):
            return path
    return None


def _run(browser: str, args: list[str], timeout_s: float) -> subprocess.CompletedProcess:
    # a profile of its own: a second Chromium (or a leftover lock) must not block this one
    with tempfile.TemporaryDirectory(prefix="xling-chromium-") as profile:
        cmd = [browser, *FLAGS, f"--user-data-dir={profile}", *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc


def _with_clicks(page: Path, clicks: list[str], dest: Path) -> Path:
    """A copy of ``page`` that, once loaded, clicks the elements whose whole text is each of
    ``clicks`` in turn (the innermost match: the menu entry itself, not a container)."""
    clicks_js = json.dumps(list(clicks))
    script = f"""<script>
window.addEventListener('load', () => {{
  const steps = {clicks_js};
  const click = (text) => {{
    const found = [...document.querySelectorAll('a,button,li,span,div,td,p')]
      .filter(e => e.textContent.trim() === text);
    if (found.length) found[found.length - 1].click();
  }};
  steps.forEach((text, i) => setTimeout(() => click(text), 500 * (i + 1)));
}});
</script>"""
    html = page.read_text(encoding="utf-8")
    end = html.rfind("</body>")  # the last one: the page's scripts hold the string too
    if end < 0:
        raise InputError(page, None, "an HTML page with a </body> tag")
    dest.write_text(html[:end] + script + html[end:], encoding="utf-8")
    return dest


def _page(page: Path) -> Path:
    page = Path(page)
    if not page.is_file():
        raise InputError(page, None, "a report page (snakemake --report report.html)", "no such file")
    return page


def _render(page: Path, browser: str, clicks: Sequence[str], wait_ms: int, timeout_s: float,
            args: list[str]) -> subprocess.CompletedProcess:
    """Chromium with ``args`` on ``page`` (a clicking copy of it when there are ``clicks``), given
    ``wait_ms`` of virtual time for the page's scripts plus the clicks' delays."""
    page = _page(page)
    with tempfile.TemporaryDirectory(prefix="xling-report-") as tmp:
        target = _with_clicks(page, list(clicks), Path(tmp) / page.name) if clicks else page
        budget = wait_ms + 500 * len(clicks)
        return _run(browser, [f"--virtual-time-budget={budget}", *args, target.resolve().as_uri()], timeout_s)


def rendered_dom(page: Path, browser: str, clicks: Sequence[str] = (), wait_ms: int = 5000,
                 timeout_s: float = 120) -> str:
    """The document after the page's scripts ran and the ``clicks`` were made."""
    return _render(page, browser, clicks, wait_ms, timeout_s, ["--dump-dom"]).stdout


def visible_text(dom: str) -> str:
    """The document's text without scripts, styles and tags (what the page shows, roughly)."""
    dom = re.sub(r"(?is)<(script|style)\b.*?</\1\s*>", " ", dom)
    return re.sub(r"\s+", " ", re.sub(r"(?s)<[^>]+>", " ", dom))


def missing(dom: str, expected: list[str]) -> list[str]:
    text = visible_text(dom)
    return [e for e in expected if e not in text]


def check_report(page: Path, expected: dict[str, list[str]], browser: str) -> dict[str, list[str]]:
    """For each category of ``expected``: the texts (file names, captions) missing from the page
    after clicking "Results" and that category. An empty result means everything was shown."""
    gone = {}
    for category, texts in expected.items():
        dom = rendered_dom(page, browser, clicks=["Results", category])
        lost = missing(dom, [category, *texts])
        if lost:
            gone[category] = lost
    return gone


def screenshot(page: Path, out_png: Path, browser: str, clicks: Sequence[str] = (), size: tuple[int, int] = (1400, 900),
               wait_ms: int = 5000, timeout_s: float = 120) -> Path:
    """A PNG of the page after ``clicks``."""
    out_png = Path(out_png)
    out_png.parent.mkdir(parents=True, exist_ok=True)
    _render(page, browser, clicks, wait_ms, timeout_s,
            [f"--window-size={size[0]},{size[1]}", f"--screenshot={out_png.resolve()}"])
    if not out_png.is_file():
        raise RuntimeError(f"{browser} wrote no screenshot to {out_png}")
    return out_png


def _expectation(text: str) -> tuple[str, list[str]]:
    category, _, files = text.partition("=")
    return category, [f for f in files.split(",") if f]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("page", type=Path, help="the report's HTML file")
    ap.add_argument("--expect", action="append", default=[], metavar="CATEGORY=FILE,FILE",
                    help="a category and what it must list (repeatable)")
    ap.add_argument("--screenshot", type=Path, help="also save a PNG of the page here")
    ap.add_argument("--click", action="append", default=[], help="menu entries to click before the screenshot")
    ap.add_argument("--browser", default=None, help=f"browser executable (default: the first of {', '.join(BROWSERS)})")
    args = ap.parse_args(argv)
    browser = args.browser or find_browser()
    if browser is None:
        ap.error(f"no browser found ({', '.join(BROWSERS)}); on Debian: apt-get install chromium")
    expected = dict(_expectation(e) for e in args.expect)
    gone = check_report(args.page, expected, browser)
    for category, texts in expected.items():
        lost = gone.get(category, [])
        print(f"{'MISSING' if lost else 'shown  '} {category}: {', '.join(texts)}"
              + (f" (not shown: {', '.join(lost)})" if lost else ""))
    if args.screenshot:
        print(f"screenshot: {screenshot(args.page, args.screenshot, browser, clicks=args.click)}")
    return 1 if gone else 0


if __name__ == "__main__":
    raise SystemExit(main())
