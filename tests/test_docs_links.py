"""Every relative link of README.md and docs/*.md resolves: the file exists and, for `page.md#anchor`,
the page has a heading with that anchor (GitHub's rule). The README is short and points into docs/,
so a moved section or a renamed heading must not leave a dead link behind."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def _prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks (a `# comment` in a bash block is not a heading)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation other than - and _ dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found, seen = set(), {}
    for line in _prose_lines(page.read_text(encoding="utf-8")):
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = github_anchor(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(page: Path) -> list[tuple[int, str]]:
    out = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        out += [(number, target) for target in LINK.findall(line)]
    return out


def test_github_anchor_matches_githubs_rule():
    assert github_anchor("Compute budget (paper run)") == "compute-budget-paper-run"
    assert github_anchor("`make demo-full`: Table 1, with seeds") == "make-demo-full-table-1-with-seeds"
    assert github_anchor("Results layout (`R = results/<run_name>`)") == "results-layout-r--resultsrun_name"


def test_anchors_skip_code_blocks_and_number_duplicates(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# Title\n\n```bash\n# not a heading\n```\n\n## Part\n\n## Part\n", encoding="utf-8")
    assert anchors(page) == {"title", "part", "part-1"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page):
    dead = []
    for number, target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: are not checked here
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            dead.append(f"{page.name}:{number}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            dead.append(f"{page.name}:{number}: {target} (no heading with anchor #{anchor} in {dest.name})")
    assert not dead, "dead links:\n" + "\n".join(dead)


def test_every_docs_page_is_reachable_from_the_readme():
    """Following links from README.md reaches every page of docs/."""
    seen, todo = set(), [ROOT / "README.md"]
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        for _, target in links(page):
            path = target.partition("#")[0]
            if path.endswith(".md") and not re.match(r"[a-z][a-z0-9+.-]*:", path):
                dest = (page.parent / path).resolve()
                if dest.exists():
                    todo.append(dest)
    missing = sorted(p.name for p in (ROOT / "docs").glob("*.md") if p.resolve() not in seen)
    assert not missing, f"docs pages no link from the README leads to: {missing}"
