"""A real vault, kepano/kepano-obsidian, copied to tmp_path before anything touches it.

The expected figures below were counted from the files themselves, not from this code: `grep -rhoE
'!?\\[\\[[^]]+\\]\\]' --include='*.md'` finds 209 wikilinks (61 of them embeds; the vault has no
code blocks, no `%%` comments and no Markdown links to local files); an awk pass that tracks the
`---` block of each file puts 134 of them in frontmatter and 75 in bodies; and checking each
target's file name (plus `.md` when it has no extension) against the vault's 104 files,
case-insensitively, finds 85 that exist and 124 that do not (all the `*.base` views, which the
repository does not ship, and notes kepano never wrote, such as `[[Apps]]`).
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from companion.vault.reader import ObsidianVault

KEPANO = Path(__file__).resolve().parents[3] / "shared" / "vaults" / "kepano-obsidian"

pytestmark = pytest.mark.skipif(not KEPANO.is_dir(), reason=f"{KEPANO} is not present")


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> ObsidianVault:
    copy = tmp_path_factory.mktemp("kepano") / "kepano-obsidian"
    shutil.copytree(KEPANO, copy, ignore=shutil.ignore_patterns(".git"))
    for path in [copy, *copy.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)  # the shared copy is read-only
    return ObsidianVault(copy)


def test_every_note_parses(vault: ObsidianVault) -> None:
    files = vault.scan_all()
    assert len(files) == 104  # 103 notes and LICENSE
    notes = vault.read_all_notes(files)
    assert len(notes) == 103
    assert vault.problems == []
    folders = Counter(path.split("/")[0] if "/" in path else "." for path in notes)
    assert folders == {
        "Templates": 52,
        "References": 19,
        "Categories": 21,
        "Notes": 5,
        "Clippings": 3,
        "Daily": 2,
        ".": 1,
    }


def test_link_figures(vault: ObsidianVault) -> None:
    graph = vault.graph(refresh=True)
    pairs = [pair for path in sorted(vault.scan_all()) for pair in graph.outlinks(path)]
    resolved = sum(1 for _, target in pairs if target is not None)
    unresolved = sum(1 for _, target in pairs if target is None)
    in_frontmatter = sum(1 for link, _ in pairs if link.property is not None)
    embeds = sum(1 for link, _ in pairs if link.embed)
    assert (len(pairs), resolved, unresolved) == (209, 85, 124)
    assert (in_frontmatter, len(pairs) - in_frontmatter, embeds) == (134, 75, 61)


def test_books_category_resolves_and_books_base_does_not(vault: ObsidianVault) -> None:
    outlinks = vault.outlinks("Templates/Book Template.md")
    books = [(link, target) for link, target in outlinks if link.target == "Books"]
    assert len(books) == 1
    link, target = books[0]
    assert link.property == "categories"
    assert target == "Categories/Books.md"
    ((embed, base_target),) = vault.outlinks("Categories/Books.md")
    assert (embed.target, embed.embed, base_target) == ("Books.base", True, None)
    assert "Templates/Book Template.md" in vault.backlinks("Categories/Books.md")


def test_template_frontmatter_and_aliases(vault: ObsidianVault) -> None:
    zelda = vault.read_note("References/The Legend of Zelda Breath of the Wild.md")
    assert zelda.aliases == ("BOTW",)
    assert zelda.frontmatter["year"] == 2017
    template = vault.read_note("Templates/Book Template.md")
    assert template.tags == ("to-read",)
    assert template.note_type is None
    assert vault.resolver().resolve("botw", "Notes/x.md") == ("References/The Legend of Zelda Breath of the Wild.md")
