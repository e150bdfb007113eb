"""`companion vault ...` and `companion memory query` as a user or a script runs them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.agentvault import write_agent_vault
from tests.helpers.cli import run_companion


def test_vault_commands_answer_in_text_and_json(tmp_path: Path) -> None:
    vault = write_agent_vault(tmp_path / "vault")
    where = ["--vault", str(vault), "--data-dir", str(tmp_path / "data")]
    found = run_companion("vault", "search", "chalet deposit", "--k", "2", "--json", *where)
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    assert results[0]["path"] == "Conversations/2026-10-05 Ski trip.md"
    # The text lists each result's relevance (one scale for every question), not the final score that is relative
    # to the first result.
    text = run_companion("vault", "search", "chalet deposit", "--k", "2", *where).stdout
    assert all(f"{r['relevance']:.3f} {r['tier']:<8} {r['path']}" in text for r in results)
    assert not json.loads(found.stdout)["no_good_match"]
    lexical = json.loads(run_companion("memory", "query", "lexical", "chalet", "--json", *where).stdout)
    assert lexical["results"] and all(r["relevance"] is None for r in lexical["results"])
    assert not lexical["no_good_match"]  # its own score: no floor to be held to
    # Nothing relevant enough: the closest notes, said to be only that, as recall says it.
    for command in (["vault", "search"], ["memory", "query", "hybrid"]):
        far = run_companion(*command, "quantum chromodynamics lecture", "--json", *where)
        closest = json.loads(far.stdout)
        assert closest["no_good_match"] and not any(r["match"] for r in closest["results"]), command
        shown = run_companion(*command, "quantum chromodynamics lecture", *where).stdout
        assert shown.startswith("no good match: no note is relevant enough; the closest ones are"), command
    note = run_companion("vault", "read", "Ingrid", *where)
    assert note.returncode == 0 and "People/Ingrid Olsen.md" in note.stdout
    assert "<- Projects/Kitchen Renovation.md" in note.stdout
    links = run_companion("vault", "links", "Kitchen Renovation", *where)
    assert "[[Missing Note]]  (unresolved)" in links.stdout
    listed = json.loads(run_companion("vault", "list", "--type", "fact", "--json", *where).stdout)
    assert [n["path"] for n in listed["notes"]] == ["Memory/Kitchen budget.md"]
    graph = json.loads(run_companion("vault", "graph", "Ingrid", "--hops", "1", "--json", *where).stdout)
    assert len(graph["nodes"]) == 2
    typed = json.loads(run_companion("memory", "query", "type", "entity", "--json", *where).stdout)
    assert [r["path"] for r in typed["results"]] == ["Memory/Nowak Renovations.md"]


def test_a_bad_argument_exits_2_naming_it_as_json_with_json(tmp_path: Path) -> None:
    vault = write_agent_vault(tmp_path / "vault")
    where = ["--vault", str(vault), "--data-dir", str(tmp_path / "data")]
    as_json = run_companion("vault", "read", "../../etc/passwd", "--json", *where)
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout)["field"] == "note"
    plain = run_companion("vault", "graph", "Ingrid", "--hops", "9", *where)
    assert plain.returncode == 2 and "hops: must be between 1 and 4" in plain.stderr


def test_the_vault_options_may_come_before_the_verb_and_k_has_a_short_form(tmp_path: Path) -> None:
    vault = write_agent_vault(tmp_path / "vault")
    where = ["--vault", str(vault), "--data-dir", str(tmp_path / "data")]
    found = run_companion("vault", *where, "search", "chalet deposit", "-k", "1", "--json")
    assert found.returncode == 0, found.stderr
    assert [r["path"] for r in json.loads(found.stdout)["results"]] == ["Conversations/2026-10-05 Ski trip.md"]
    typed = run_companion("memory", *where, "query", "type", "entity", "-k", "1", "--json")
    assert typed.returncode == 0, typed.stderr
    assert [r["path"] for r in json.loads(typed.stdout)["results"]] == ["Memory/Nowak Renovations.md"]


def test_the_timeline_puts_a_note_in_its_time_in_text_and_json(tmp_path: Path) -> None:
    vault = write_agent_vault(tmp_path / "vault")
    where = ["--vault", str(vault), "--data-dir", str(tmp_path / "data")]
    shown = run_companion("vault", "timeline", "--note", "Kitchen budget", "--before", "1", "--after", "1", *where)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("around Memory/Kitchen budget.md  (date: 2026-09-03")
    assert "Projects/Kitchen Renovation.md" in lines[1] and lines[1].startswith("  1. 2026-09-01")
    assert lines[3].startswith("> 2. 2026-09-03") and "Memory/Kitchen budget.md" in lines[3]
    assert "The kitchen budget is 18,500 euros" in lines[4]
    assert "Conversations/2026-10-01 Boiler pressure.md" in lines[5]
    shown = run_companion("vault", "timeline", "--date", "2026-10-03", "--days", "3", "--json", *where)
    data = json.loads(shown.stdout)
    assert [(e["position"], e["path"]) for e in data["entries"]] == [
        ("before", "Conversations/2026-10-01 Boiler pressure.md"),
        ("after", "Conversations/2026-10-05 Ski trip.md"),
    ]
    both = run_companion("vault", "timeline", "--date", "2026-10-03", "--note", "Ingrid", "--json", *where)
    assert both.returncode == 2 and json.loads(both.stdout)["field"] == "date"
