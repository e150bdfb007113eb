"""A note a review marked superseded ranks below the note that replaces it, and `--explain` says why."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from companion.recall.results import SUPERSEDED_FACTOR
from companion.recall.superseded import replacement_name
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
    assert replacement_name("[[Memory/Boiler pressure now.md#Now|the new one]]") == "boiler pressure now"
    assert replacement_name("Boiler pressure now") == "boiler pressure now"
