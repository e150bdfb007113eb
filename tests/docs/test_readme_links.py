"""Every link of the README resolves: to a file of the repository, and to a heading of that page when it names one."""

from __future__ import annotations

import re
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).parents[2]


def links(markdown: str) -> list[str]:
    """The targets of every link and image in a Markdown text."""
    found = []
    for token in MarkdownIt("commonmark").parse(markdown):
        for child in token.children or []:
            if child.type == "link_open":
                found.append(str(child.attrs["href"]))
            elif child.type == "image":
                found.append(str(child.attrs["src"]))
    return found


def slug(heading: str) -> str:
    """A heading's anchor as the documentation site makes it (Python-Markdown's toc: lower case, words joined by -)."""
    text = re.sub(r"[`*_]", "", heading).strip().lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"[-\s]+", "-", text).strip("-")


def anchors(page: Path) -> set[str]:
    return {slug(line.lstrip("#")) for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("#")}


def test_the_readme_links_resolve() -> None:
    readme = ROOT / "README.md"
    targets = [t for t in links(readme.read_text(encoding="utf-8")) if not re.match(r"[a-z]+:", t)]
    assert len(targets) >= 12, "the README links into the documentation"
    for target in targets:
        path, _, anchor = target.partition("#")
        file = (ROOT / path).resolve()
        assert file.is_file(), f"README links to {target}, which does not exist"
        if anchor:
            assert anchor in anchors(file), f"README links to {target}: {path} has no heading #{anchor}"


def test_every_documentation_page_is_in_the_navigation() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = set(re.findall(r"^\s+- [^:]+: (\S+\.md)$", config, re.M))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages == nav


def test_the_slug_matches_the_site_anchors() -> None:
    assert slug("A big vault: words first, meaning after") == "a-big-vault-words-first-meaning-after"
    assert slug("The `retention` section") == "the-retention-section"
