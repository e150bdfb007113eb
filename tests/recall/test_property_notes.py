"""Notes whose facts are all properties (a book's author, a trip's dates): recalled, they show their properties as
their passage, and an agent's context gets them instead of nothing."""

from __future__ import annotations

from pathlib import Path

from companion.embedding.tokens import TokenCounter
from companion.recall.assembly import build
from companion.vault.properties import properties_text
from tests.helpers.files import write
from tests.helpers.workspaces import workspace

BOOK = (
    '---\ncategories:\n  - "[[Books]]"\nauthor: Kevin Kelly\nyear: 1994\n'
    + "rating: 4\ntopics: [systems, biology]\n---\n"
)


def test_a_note_of_properties_alone_shows_them_and_reaches_the_agents_context(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "References/Out of Control.md", BOOK)
    write(root, "Notes/Garden.md", "The tomatoes need staking before the July heat.\n")
    ws = workspace(root)
    try:
        ws.indexer().sync()
        engine = ws.recall()
        recalled = engine.recall("which book did Kevin Kelly write?", k=5)
        item = next(i for i in recalled.results if i.path == "References/Out of Control.md")
        assert "author: Kevin Kelly" in engine.passage(item)
        assert "author: Kevin Kelly" in engine.locate(item).snippet
        assembled = build(engine, recalled, 1500, TokenCounter())
        pieces = [p for p in assembled.pieces if p.kind == "entity"]
        assert any(p.source == "References/Out of Control.md" and "Kevin Kelly" in p.text for p in pieces)
    finally:
        ws.close()


def test_properties_text_keeps_values_and_leaves_out_empty_ones_and_tables() -> None:
    text = properties_text(
        {"author": "Kevin Kelly", "year": 1994, "tags": ["a", "", None, "b"], "empty": "", "nested": {"x": 1}}
    )
    assert text.splitlines() == ["author: Kevin Kelly", "year: 1994", "tags: a, b"]
