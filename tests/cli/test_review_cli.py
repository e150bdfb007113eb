"""`companion review` as a user runs it: the queue as JSON, accepting (undoable), skipping until the notes change."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from companion.demo.planted import Planted, write_planted_vault
from tests.helpers.cli import run_companion

NOW = datetime.now(UTC)


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path, Planted]:
    vault, data = tmp_path / "vault", tmp_path / "data"
    truth = write_planted_vault(vault, ordinary=40, per_kind=2, now=NOW)
    (vault / ".companion").mkdir()
    (vault / ".companion" / "companion.yaml").write_text("embedding:\n  provider: hash\n", encoding="utf-8")
    out = run_companion("index", "--vault", str(vault), "--data-dir", str(data), "--json")
    assert out.returncode == 0, out.stderr
    return vault, data, truth


def review(vault: Path, data: Path, *args: str) -> tuple[int, dict[str, Any]]:
    out = run_companion("review", *args, "--vault", str(vault), "--data-dir", str(data), "--json")
    return out.returncode, json.loads(out.stdout)


def test_the_queue_lists_each_kind_with_evidence_and_proposal(planted: tuple[Path, Path, Planted]) -> None:
    vault, data, truth = planted
    code, listing = review(vault, data)
    assert code == 0
    # The stale notes need old uses in the access statistics, which nothing recorded here.
    assert listing["counts"] == {
        "duplicate": 2,
        "changed_fact": 2,
        "broken_link": 2,
        "missing_type": 2,
        "stale": 0,
        "orphan": 2,
    }
    assert listing["total"] == 10
    first = listing["suggestions"][0]
    assert set(first) == {"id", "kind", "paths", "summary", "evidence", "action", "proposal", "value"}
    values = [s["value"] for s in listing["suggestions"]]
    assert values == sorted(values, reverse=True)
    changed = [s for s in listing["suggestions"] if s["kind"] == "changed_fact"]
    assert {tuple(s["paths"]) for s in changed} == set(truth.changed)
    assert all(s["action"] == "supersede" for s in changed)
    code, only = review(vault, data, "--kind", "broken_link", "--limit", "1")
    assert code == 0 and only["total"] == 2 and len(only["suggestions"]) == 1


def test_accepting_a_duplicate_merges_it_and_undo_restores_the_files(planted: tuple[Path, Path, Planted]) -> None:
    vault, data, _ = planted
    _, listing = review(vault, data, "--kind", "duplicate")
    suggestion = listing["suggestions"][0]
    drop, keep = suggestion["paths"]
    before = {p: (vault / p).read_bytes() for p in (drop, keep)}
    code, dry = review(vault, data, "accept", suggestion["id"], "--dry-run")
    assert code == 0 and dry["applied"] is False and (vault / drop).exists()
    code, done = review(vault, data, "accept", suggestion["id"], "--yes")
    assert code == 0 and done["applied"] is True and done["action"] == "merge"
    assert not (vault / drop).exists()
    assert "Merged from" in (vault / keep).read_text(encoding="utf-8")
    undone = run_companion("undo", "--vault", str(vault), "--data-dir", str(data), "--json")
    assert undone.returncode == 0, undone.stderr
    assert {p: (vault / p).read_bytes() for p in (drop, keep)} == before


def test_accepting_a_changed_fact_marks_the_older_note_superseded(planted: tuple[Path, Path, Planted]) -> None:
    vault, data, _ = planted
    _, listing = review(vault, data, "--kind", "changed_fact")
    suggestion = listing["suggestions"][0]
    older, newer = suggestion["paths"]
    code, done = review(vault, data, "accept", suggestion["id"], "--yes")
    assert code == 0 and done["action"] == "supersede"
    title = Path(newer).stem
    assert f'superseded_by: "[[{title}]]"' in (vault / older).read_text(encoding="utf-8")
    assert (vault / newer).exists()
    _, after = review(vault, data, "--kind", "changed_fact")
    assert suggestion["id"] not in {s["id"] for s in after["suggestions"]}


def test_a_skipped_suggestion_stays_hidden_until_its_note_changes(planted: tuple[Path, Path, Planted]) -> None:
    vault, data, _ = planted
    _, listing = review(vault, data, "--kind", "missing_type")
    suggestion = listing["suggestions"][0]
    code, skipped = review(vault, data, "skip", suggestion["id"])
    assert code == 0 and skipped["skipped"]["id"] == suggestion["id"]
    _, after = review(vault, data, "--kind", "missing_type")
    assert suggestion["id"] not in {s["id"] for s in after["suggestions"]}
    note = vault / suggestion["paths"][0]
    note.write_text(note.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    _, again = review(vault, data, "--kind", "missing_type")
    # Back once the note changed (its proposed type may differ, as the note's words did).
    assert suggestion["paths"][0] in {s["paths"][0] for s in again["suggestions"]}


def test_unknown_ids_and_suggestions_with_nothing_to_apply_are_clear_errors(
    planted: tuple[Path, Path, Planted],
) -> None:
    vault, data, _ = planted
    code, error = review(vault, data, "accept", "0000000000", "--yes")
    assert code == 2 and "no suggestion" in error["error"] and error["exit_code"] == 2
    _, listing = review(vault, data, "--kind", "orphan")
    orphan = listing["suggestions"][0]
    code, refused = review(vault, data, "accept", orphan["id"], "--yes")
    assert code == 1 and "nothing to apply" in refused["error"]
