"""Following agents' sessions (`ImportFollower`, real watches on real folders): the import at start, a sessions folder
that appears later, a damaged line said once and an unfinished one not at all, and a failed import that leaves the
following going."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from companion.config import ImportsConfig
from companion.pipeline.imports.follow import Followed, ImportFollower
from tests.helpers.transcripts import copy_transcripts

SESSION = "1f0c2a9e-5b7d-4c1e-9a3b-2d4e6f8a0b1c"
TRANSCRIPT = f".claude/projects/-home-alice-work-ledger/{SESSION}.jsonl"


def _said(uuid: str, text: str) -> str:
    record = {
        "type": "user",
        "uuid": uuid,
        "sessionId": SESSION,
        "timestamp": "2026-03-10T09:10:00.000Z",
        "message": {"role": "user", "content": text},
    }
    return json.dumps(record) + "\n"


def _wait(condition: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


class Follow:
    """A follower of Claude Code's sessions in `home`, and what it told."""

    def __init__(self, vault: Path, data: Path, home: Path, agents: tuple[str, ...] = ("claude-code",)) -> None:
        self.imports: list[Followed] = []
        self.errors: list[tuple[str, Exception]] = []
        self._lock = threading.Lock()
        self.follower = ImportFollower(
            vault,
            data,
            ImportsConfig(folder="Imported/{agent}", follow=agents),  # type: ignore[arg-type]
            on_import=self._imported,
            on_error=lambda agent, exc: self.errors.append((agent, exc)),
            home=home,
            environ={},
            quiet_ms=50,
            gather_ms=300,
        )

    def _imported(self, done: Followed) -> None:
        with self._lock:
            self.imports.append(done)

    def problems(self) -> list[str]:
        return [p for done in self.imports for p in done.problems]

    def settle(self) -> None:
        """Wait until an import has run after every change so far (a change waits 50 ms, then is imported)."""
        runs = self.follower.imports_run
        assert _wait(lambda: self.follower.imports_run > runs), "no import after the change"


@pytest.fixture
def follow(tmp_path: Path) -> Iterator[Follow]:
    (tmp_path / "vault").mkdir()
    follow = Follow(tmp_path / "vault", tmp_path / "data", tmp_path / "home")
    yield follow
    assert follow.follower.stop(), "the follower did not stop"


def test_a_sessions_folder_that_appears_later_is_imported_then_followed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    copy_transcripts("codex", home / ".codex")
    (tmp_path / "vault").mkdir()
    follow = Follow(tmp_path / "vault", tmp_path / "data", home, ("claude-code", "codex"))
    follow.follower.start()
    try:
        # Codex's folder is watched at once; Claude Code keeps none yet.
        assert _wait(lambda: bool(follow.imports)), "the folder there was not imported"
        assert [(done.agent, done.catch_up) for done in follow.imports] == [("codex", True)]
        copy_transcripts("claude-code", home / ".claude")
        assert _wait(lambda: len(follow.imports) == 2), "the folder that appeared was never imported"
        claude = follow.imports[1]
        assert (claude.agent, claude.catch_up, len(claude.report.written)) == ("claude-code", True, 1)
        note = tmp_path / "vault" / claude.report.written[0]
        with (home / TRANSCRIPT).open("a", encoding="utf-8") as handle:
            handle.write(_said("n1", "The night shift reconciles the Oslo account by hand."))
        assert _wait(lambda: len(follow.imports) == 3), "the change was not imported"
        assert "Oslo account" in note.read_text(encoding="utf-8")
        assert (follow.imports[2].agent, follow.imports[2].catch_up) == ("claude-code", False)
        assert not follow.errors
    finally:
        assert follow.follower.stop(), "the follower did not stop"


def test_a_damaged_line_is_said_once_and_an_unfinished_one_not_at_all(tmp_path: Path, follow: Follow) -> None:
    home = tmp_path / "home"
    copy_transcripts("claude-code", home / ".claude")
    transcript = home / TRANSCRIPT
    lines_before = len(transcript.read_text(encoding="utf-8").splitlines())
    follow.follower.start()
    assert _wait(lambda: bool(follow.imports)), "no import at start"

    unfinished = _said("n1", "The Bergen invoices are due on Fridays.")
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(unfinished[:30])  # the agent is mid-line
    follow.settle()
    assert follow.problems() == []

    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(unfinished[30:] + "{damaged\n" + _said("n2", "The Trondheim ledger closes monthly."))
    follow.settle()
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(_said("n3", "The Tromso ledger closes yearly."))
    follow.settle()

    damaged = f"{transcript}, line {lines_before + 2}: not JSON; the line was skipped"
    assert follow.problems() == [damaged]
    note = tmp_path / "vault" / follow.imports[0].report.written[0]
    text = note.read_text(encoding="utf-8")
    assert "Bergen invoices" in text and "Trondheim" in text and "Tromso" in text
    assert not follow.errors


def test_a_failed_import_is_reported_and_the_next_change_is_imported(tmp_path: Path, follow: Follow) -> None:
    home = tmp_path / "home"
    copy_transcripts("claude-code", home / ".claude")
    data = tmp_path / "data"
    data.write_text("a file where the data folder should be\n", encoding="utf-8")
    follow.follower.start()
    assert _wait(lambda: bool(follow.errors)), "the failed import was not reported"
    agent, _exc = follow.errors[0]
    assert agent == "claude-code"

    data.unlink()
    with (home / TRANSCRIPT).open("a", encoding="utf-8") as handle:
        handle.write(_said("n1", "The Stavanger audit starts in May."))
    assert _wait(lambda: bool(follow.imports)), "following stopped after the failure"
    note = tmp_path / "vault" / follow.imports[-1].report.written[0]
    assert "Stavanger audit" in note.read_text(encoding="utf-8")
