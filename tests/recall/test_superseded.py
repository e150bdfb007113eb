"""A note a review marked superseded ranks below the note that replaces it, and `--explain` says why."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from companion.recall.candidates import NoteInfo
from companion.recall.results import SUPERSEDED_FACTOR, RecallItem
from companion.recall.superseded import below_replacements, replacement_name
from tests.helpers.workspaces import workspace

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
OLD = """---
type: fact
created: 2026-01-10
{extra}---
The boiler pressure should be 1.5 bar when the heating is cold. Top it up at the filling loop under the boiler.
The filling loop handle turns a quarter clockwise.
"""
NEW = """---
type: fact
created: 2026-11-02
---
The boiler pressure should now be 1.2 bar when the heating is cold, as the engineer advised after the service.
"""


def test_a_superseded_fact_is_listed_below_its_replacement_with_the_reason(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "Memory").mkdir(parents=True)
    (vault / "Memory" / "Boiler pressure.md").write_text(OLD.format(extra=""), encoding="utf-8")
    (vault / "Memory" / "Boiler pressure now.md").write_text(NEW, encoding="utf-8")
    ws = workspace(vault, data_dir=tmp_path / "data")
    try:
        ws.indexer().sync()
        question = "what should the boiler pressure be when the heating is cold? filling loop"
        before = [i.path for i in ws.recall().recall(question, as_of=NOW).results]
        assert before[0] == "Memory/Boiler pressure.md"  # it holds more of the question's words
        (vault / "Memory" / "Boiler pressure.md").write_text(
            OLD.format(extra='superseded_by: "[[Boiler pressure now]]"\n'), encoding="utf-8"
        )
        ws.indexer().sync()
        results = ws.recall().recall(question, as_of=NOW).results
    finally:
        ws.close()
    paths = [i.path for i in results]
    assert paths.index("Memory/Boiler pressure now.md") < paths.index("Memory/Boiler pressure.md")
    old = next(i for i in results if i.path == "Memory/Boiler pressure.md")
    assert old.explanation is not None and old.explanation.superseded_by == "[[Boiler pressure now]]"
    assert any(line.startswith("superseded by [[Boiler pressure now]]") for line in old.explanation.lines())
    assert old.score < old.explanation.decay.value  # scaled down by the factor
    assert SUPERSEDED_FACTOR < 1


def test_the_replacement_is_read_from_any_wikilink_form() -> None:
    assert replacement_name("[[Boiler pressure now]]") == "boiler pressure now"
    assert replacement_name("[[Memory/Boiler pressure now.md#Now|the new one]]") == "memory/boiler pressure now"
    assert replacement_name("Boiler pressure now") == "boiler pressure now"


def _item(title: str, score: float) -> RecallItem:
    return RecallItem(f"{title}.md", title, "warm", score, "memory", "fact", None, "", None)


def _info(title: str, superseded_by: str = "") -> NoteInfo:
    fields = json.dumps({"superseded_by": superseded_by}) if superseded_by else "{}"
    return NoteInfo(f"{title}.md", title, "memory", "fact", None, fields_json=fields)


def test_a_superseded_match_never_moves_among_the_non_matches() -> None:
    items = [_item("A", 0.9), _item("Old", 0.8), _item("B", 0.1), _item("New", 0.05)]
    infos = {"Old.md": _info("Old", "[[New]]")}
    matches = {"A.md", "Old.md"}
    order = below_replacements(items, infos, lambda i: i.path in matches)
    assert [i.title for i in order] == ["A", "Old", "B", "New"]


def test_a_chain_of_supersedes_ends_newest_first() -> None:
    items = [_item("V1", 0.9), _item("V2", 0.8), _item("V3", 0.7)]
    infos = {"V1.md": _info("V1", "[[V2]]"), "V2.md": _info("V2", "[[V3]]")}
    assert [i.title for i in below_replacements(items, infos, lambda i: 0)] == ["V3", "V2", "V1"]
    cycle = {"V1.md": _info("V1", "[[V2]]"), "V2.md": _info("V2", "[[V1]]")}
    assert len(below_replacements(items, cycle, lambda i: 0)) == 3  # a slip in the notes ends, whatever the order
