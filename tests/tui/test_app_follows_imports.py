"""The app follows the agents `imports.follow` names while it indexes: a running Claude Code session's new exchange is
imported, indexed and recalled without a restart."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from companion.tui.app import CompanionApp
from companion.workspace import Workspace
from tests.helpers.conversations import NOW, write_vault
from tests.helpers.files import write
from tests.helpers.pilot import run, settle, until
from tests.helpers.transcripts import copy_transcripts
from tests.helpers.workspaces import workspace

SESSION = "1f0c2a9e-5b7d-4c1e-9a3b-2d4e6f8a0b1c"
TRANSCRIPT = f".claude/projects/-home-alice-work-ledger/{SESSION}.jsonl"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder where Claude Code keeps one session."""
    home = tmp_path / "home"
    copy_transcripts("claude-code", home / ".claude")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def following(tmp_path: Path, home: Path) -> Iterator[Workspace]:
    """The conversation vault, configured to follow Claude Code."""
    root = tmp_path / "vault"
    write_vault(root)
    write(root, ".companion/companion.yaml", "imports:\n  folder: Imported/{agent}\n  follow: [claude-code]\n")
    space = workspace(root, data_dir=tmp_path / "data")
    yield space
    space.close()


def _exchange() -> str:
    record = {
        "type": "user",
        "uuid": "f1",
        "sessionId": SESSION,
        "timestamp": "2026-03-10T09:10:00.000Z",
        "cwd": "/home/alice/work/ledger",
        "message": {"role": "user", "content": "Remember: the ledger's Kvitsoy office closes its books on the ninth."},
    }
    return json.dumps(record) + "\n"


def test_the_app_imports_a_followed_session_and_recalls_what_it_just_said(following: Workspace, home: Path) -> None:
    app = CompanionApp(following, as_of=NOW)
    imported = following.root / "Imported" / "claude-code"

    async def steps(pilot: Pilot[Any]) -> None:
        await until(pilot, lambda: any(imported.glob("*.md")), "the import at start")
        (note,) = imported.glob("*.md")
        rel = note.relative_to(following.root).as_posix()

        def indexed() -> bool:
            with app.indexing.lock:  # the app's recalls share this connection
                return following.manifest.note(rel) is not None

        await until(pilot, indexed, "the imported note indexed")
        await pilot.press("slash", *"Kvitsoy office books", "enter")
        await settle(pilot)
        assert app.context is not None and not [r for r in app.context.results[:1] if r.path == rel]
        with (home / TRANSCRIPT).open("a", encoding="utf-8") as handle:
            handle.write(_exchange())
        await until(
            pilot,
            lambda: app.context is not None and bool(app.context.results) and app.context.results[0].path == rel,
            "the appended exchange recalled first",
            seconds=10,
        )
        assert "Kvitsoy office" in note.read_text(encoding="utf-8")

    run(app, steps)
