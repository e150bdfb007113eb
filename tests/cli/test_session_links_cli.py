"""Links written in session summaries, as a user meets them: `graph` lists them both ways, `review` calls no note an
orphan that a session links to; and `recall --batch` gives each line the hot tier of its own `as_of`."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_companion
from tests.helpers.conversations import NOW, write_vault
from tests.helpers.files import write
from tests.helpers.sessionlinks import EARLIER, FORGOTTEN, GARDEN, LONELY, SESSION, write_session_links_vault


@pytest.fixture(scope="module")
def linked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("session-links")
    vault, data = write_session_links_vault(base / "vault"), base / "data"
    out = run_companion("index", "--vault", str(vault), "--data-dir", str(data))
    assert out.returncode == 0, out.stderr
    return vault, data


def _run(where: tuple[Path, Path], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    vault, data = where
    return run_companion(*args, "--vault", str(vault), "--data-dir", str(data), stdin=stdin)


def _json(where: tuple[Path, Path], *args: str) -> dict[str, Any]:
    out = _run(where, *args, "--json")
    assert out.returncode == 0, out.stderr
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def test_graph_lists_the_session_among_the_backlinks_of_a_note_it_links(linked: tuple[Path, Path]) -> None:
    lonely = _json(linked, "graph", "Lonely Idea")
    assert lonely["note"] == LONELY
    assert lonely["backlinks"] == [SESSION]
    # Through the session, the garden is two hops away; the earlier session that links the garden is three.
    assert {"path": GARDEN, "hops": 2} in lonely["neighbours"]
    garden = _json(linked, "graph", "Garden")
    assert garden["backlinks"] == [EARLIER, SESSION]
    text = _run(linked, "graph", "Lonely Idea").stdout
    assert f"linked from (1)\n  <- {SESSION}\n" in text


def test_graph_of_a_session_shows_its_outlinks_and_neighbours(linked: tuple[Path, Path]) -> None:
    session = _json(linked, "graph", SESSION)
    assert [(o["target"], o["path"]) for o in session["outlinks"]] == [("Lonely Idea", LONELY), ("Garden", GARDEN)]
    assert session["backlinks"] == []
    assert {"path": EARLIER, "hops": 2} in session["neighbours"]


def test_the_review_queue_calls_no_note_an_orphan_that_a_session_links(linked: tuple[Path, Path]) -> None:
    listing = _json(linked, "review", "--kind", "orphan")
    orphans = [tuple(s["paths"]) for s in listing["suggestions"]]
    assert orphans == [(FORGOTTEN,)]


def test_a_new_session_link_takes_a_note_out_of_the_orphans(tmp_path: Path) -> None:
    where = (write_session_links_vault(tmp_path / "vault"), tmp_path / "data")
    assert [s["paths"] for s in _json(where, "review", "--kind", "orphan")["suggestions"]] == [[FORGOTTEN]]
    write(where[0], "ops/sessions/2026-11-23/080000-birds.md", "---\ndate: 2026-11-23\n---\nSee [[Forgotten]].\n")
    assert _json(where, "review", "--kind", "orphan")["suggestions"] == []


@pytest.fixture(scope="module")
def conversations(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("batch-as-of")
    vault, data = base / "vault", base / "data"
    write_vault(vault)
    write(vault, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    out = run_companion("index", "--vault", str(vault), "--data-dir", str(data))
    assert out.returncode == 0, out.stderr
    return vault, data


def test_each_batch_line_gets_the_hot_sessions_of_its_own_as_of(
    conversations: tuple[Path, Path], tmp_path: Path
) -> None:
    now, then = NOW.isoformat(), (NOW - dt.timedelta(days=40) + dt.timedelta(hours=3)).isoformat()
    batch = tmp_path / "q.jsonl"
    batch.write_text(
        json.dumps({"id": "now", "query": "packing list", "as_of": now})
        + "\n"
        + json.dumps({"id": "then", "query": "packing list", "as_of": then})
        + "\n"
    )
    out = _run(conversations, "recall", "--batch", str(batch))
    assert out.returncode == 0, out.stderr
    lines = {d["id"]: d for d in map(json.loads, out.stdout.splitlines())}
    for qid, moment in (("now", now), ("then", then)):
        single = _json(conversations, "recall", "packing list", "--as-of", moment)
        assert lines[qid]["as_of"] == single["as_of"]
        assert lines[qid]["hot"] == single["hot"]
        assert lines[qid]["pushed_out"] == single["pushed_out"]
        assert lines[qid]["temporal"] == single["temporal"]
    assert [s["path"] for s in lines["then"]["hot"]] == ["ops/sessions/2026-10-13/100000-chalet.md"]
    assert len(lines["now"]["hot"]) == 5 and all(s["date"] >= "2026-11-21" for s in lines["now"]["hot"])
