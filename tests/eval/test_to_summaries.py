"""The converter of conversation-note vaults into summary-only vaults (eval/to_summaries.py), run as a real script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from companion.vault.reader import ObsidianVault
from tests.helpers.files import file_tree, split_frontmatter, write

SCRIPT = Path(__file__).resolve().parents[2] / "eval" / "to_summaries.py"
DAY = "ops/sessions/2024-03-05"

# Five turns with block ids, a title heading, a quote and a colon in the texts.
ROPE = """---
type: conversation
date: 2024-03-05
time: "09:30"
user_id: Ann
chat_id: c1
session: 1
---

# c1 - session 1

**Ann**: She said "meet at 10: sharp" at the crag. ^D1-1

**Bob**: Then we leave at nine. ^D1-2

**Ann**: I bought a new rope, a 60 metre one. ^D1-3

**Bob**: Orange like the old one? ^D1-4

**Ann**: Blue this time, it was on sale. ^D1-5
"""

# Same day and session number in another chat, late in the evening, plain speakers and no block ids.
BAKING = """---
type: conversation
date: 2024-03-05
time: '23:58'
user_id: dana
chat_id: c2
session: 1
---

user: my sourdough starter smells of nail varnish

assistant: That is acetone: it is hungry. Feed it twice a day for a few days.

user: and the bread itself?

assistant: Bake once it doubles within six hours of a feed.
"""

RECIPE = "---\ntype: recipe\n---\n\nDal: red lentils, cumin, lime.\n"

QUESTIONS: list[dict[str, Any]] = [
    {"id": "rope", "query": "What rope?", "as_of": "2024-04-01T10:00:00", "where": {"chat_id": "c1"},
     "evidence": ["chats/rope.md"], "label": "single-hop", "evidence_turns": ["D1-3"], "answer": "60 m"},
    {"id": "colour", "query": "Which colour?", "evidence": ["chats/rope.md"], "evidence_turns": ["D1-5"]},
    {"id": "two", "query": "When and what?", "evidence": ["chats/rope.md"], "evidence_turns": ["D1-1", "D1-4"]},
    {"id": "starter", "query": "Why the smell?", "evidence": ["chats/baking.md"], "label": "multi-hop"},
    {"id": "bake", "query": "When to bake?", "evidence": ["chats/baking.md"], "evidence_turns": ["D1-4"]},
    {"id": "mixed", "query": "Rope, dal?", "evidence": ["chats/rope.md", "notes/dal.md"], "evidence_turns": ["D1-2"]},
    {"id": "lost", "query": "Nowhere?", "evidence": ["chats/rope.md"], "evidence_turns": ["D7-1"]},
]  # fmt: skip

ROPE_SUMMARIES = [f"{DAY}/c1-1-01.md", f"{DAY}/c1-1-02.md", f"{DAY}/c1-1-03.md"]
BAKING_SUMMARIES = [f"{DAY}/c2-1-01.md", f"{DAY}/c2-1-02.md"]


def make_source(root: Path) -> Path:
    vault = root / "source"
    write(vault, "chats/rope.md", ROPE)
    write(vault, "chats/baking.md", BAKING)
    write(vault, "notes/dal.md", RECIPE)
    write(vault, ".obsidian/app.json", "{}")
    write(root, "questions.jsonl", "".join(json.dumps(q) + "\n" for q in QUESTIONS))
    return vault


def run(root: Path, out: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(root / "source"), str(root / "questions.jsonl"), str(root / out), *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("conv")
    make_source(root)
    for out, extra in (("out", ()), ("whole", ("--session-level",))):
        done = run(root, out, *extra)
        assert done.returncode == 0, done.stderr
    return root


def summary(root: Path, rel: str) -> tuple[dict[str, Any], str, str]:
    text = (root / "out" / "vault" / rel).read_text(encoding="utf-8")
    frontmatter, body = split_frontmatter(text)
    return frontmatter, body, text


def questions(root: Path, out: str) -> dict[str, dict[str, Any]]:
    lines = (root / out / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return {q["id"]: q for q in map(json.loads, lines)}


def test_only_summaries_and_other_notes_are_written(converted: Path) -> None:
    tree = file_tree(converted / "out" / "vault")
    assert sorted(tree) == sorted([*ROPE_SUMMARIES, *BAKING_SUMMARIES, "notes/dal.md"])
    assert tree["notes/dal.md"] == RECIPE.encode()


def test_each_exchange_is_two_turns_an_odd_last_one_has_no_reply(converted: Path) -> None:
    messages = [summary(converted, rel)[0] for rel in ROPE_SUMMARIES]
    assert [(m["user_msg"], m["sentinel_msg"]) for m in messages] == [
        ('Ann: She said "meet at 10: sharp" at the crag.', "Bob: Then we leave at nine."),
        ("Ann: I bought a new rope, a 60 metre one.", "Bob: Orange like the old one?"),
        ("Ann: Blue this time, it was on sale.", ""),
    ]
    first = summary(converted, BAKING_SUMMARIES[0])[0]
    assert first["user_msg"] == "user: my sourdough starter smells of nail varnish"
    assert first["sentinel_msg"] == "assistant: That is acetone: it is hungry. Feed it twice a day for a few days."


def test_frontmatter_is_the_notes_and_the_body_does_not_repeat_the_turns(converted: Path) -> None:
    frontmatter, body, text = summary(converted, ROPE_SUMMARIES[1])
    assert str(frontmatter["date"]) == "2024-03-05"
    assert (frontmatter["user_id"], frontmatter["chat_id"]) == ("Ann", "c1")
    assert "time: '09:32'\n" in text
    assert "rope" not in body and "^D1" not in text


def test_times_follow_the_exchanges_within_the_day(converted: Path) -> None:
    rope = [summary(converted, rel)[0]["time"] for rel in ROPE_SUMMARIES]
    baking = [summary(converted, rel)[0]["time"] for rel in BAKING_SUMMARIES]
    assert rope == ["09:31", "09:32", "09:33"]
    assert baking == ["23:58", "23:59"]


def test_evidence_goes_to_the_summaries_of_the_evidence_turns(converted: Path) -> None:
    got = questions(converted, "out")
    assert got["rope"]["evidence"] == [ROPE_SUMMARIES[1]]
    assert got["colour"]["evidence"] == [ROPE_SUMMARIES[2]]
    assert got["two"]["evidence"] == [ROPE_SUMMARIES[0], ROPE_SUMMARIES[1]]
    assert got["bake"]["evidence"] == [BAKING_SUMMARIES[1]]
    assert got["mixed"]["evidence"] == [ROPE_SUMMARIES[0], "notes/dal.md"]
    assert {k: v for k, v in got["rope"].items() if k != "evidence"} == {
        k: v for k, v in QUESTIONS[0].items() if k != "evidence"
    }


def test_evidence_without_turns_goes_to_every_summary_of_its_notes(converted: Path) -> None:
    got = questions(converted, "out")
    assert got["starter"]["evidence"] == BAKING_SUMMARIES
    assert got["lost"]["evidence"] == ROPE_SUMMARIES
    whole = questions(converted, "whole")
    assert whole["rope"]["evidence"] == ROPE_SUMMARIES
    assert whole["mixed"]["evidence"] == [*ROPE_SUMMARIES, "notes/dal.md"]
    assert whole["rope"]["evidence_turns"] == ["D1-3"]


def test_the_project_reads_every_summary(converted: Path) -> None:
    sessions = ObsidianVault(converted / "out" / "vault").sessions()
    by_path = {s.path: s for s in sessions}
    assert sorted(by_path) == sorted([*ROPE_SUMMARIES, *BAKING_SUMMARIES])
    assert all(s.user_msg for s in sessions)
    assert by_path[ROPE_SUMMARIES[1]].sentinel_msg == "Bob: Orange like the old one?"
    assert by_path[BAKING_SUMMARIES[1]].session_key == "dana:c2"
    rope = sorted((s for s in sessions if s.chat_id == "c1"), key=lambda s: s.path)
    moments = [s.when for s in rope if s.when is not None]
    assert len(moments) == len(ROPE_SUMMARIES) and moments == sorted(moments)


def test_an_output_folder_holding_other_files_is_refused(tmp_path: Path) -> None:
    make_source(tmp_path)
    write(tmp_path, "out/vault/stray.md", "not ours\n")
    done = run(tmp_path, "out")
    assert done.returncode == 2
    assert "stray.md" in done.stderr and "remove the folder" in done.stderr
    assert not (tmp_path / "out" / "vault" / "ops").exists()
