"""`companion index --watch` follows the agents `imports.follow` names: their sessions are imported at start, and an
exchange a running agent appends to its transcript is found by recall within seconds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from companion.cli import main
from tests.helpers.files import write
from tests.helpers.transcripts import copy_transcripts

SESSION = "1f0c2a9e-5b7d-4c1e-9a3b-2d4e6f8a0b1c"
TRANSCRIPT = f".claude/projects/-home-alice-work-ledger/{SESSION}.jsonl"
QUESTION = "which datum was the Kvitsoy tide gauge recalibrated to?"

CONFIG = """embedding:
  provider: hash
imports:
  folder: Imported/{agent}
  follow: [claude-code]
"""


def _line(kind: str, uuid: str, second: int, content: Any) -> str:
    record = {
        "type": kind,
        "uuid": uuid,
        "sessionId": SESSION,
        "timestamp": f"2026-03-10T09:10:{second:02d}.000Z",
        "cwd": "/home/alice/work/ledger",
        "isSidechain": False,
        "message": {"role": kind, "content": content},
    }
    return json.dumps(record) + "\n"


EXCHANGE = _line(
    "user", "f1", 1, "Note for later: the Kvitsoy tide gauge on pier nine was recalibrated to the Halvorsen datum."
) + _line(
    "assistant",
    "f2",
    2,
    [
        {
            "type": "text",
            "text": "Noted: the Kvitsoy gauge now reads against the Halvorsen datum since its recalibration.",
        }
    ],
)


class _Events:
    """The JSON lines a watching process prints, read in a thread as they come."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._thread.start()

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.lines.append(json.loads(line))

    def seen(self, event: str) -> list[dict[str, Any]]:
        return [e for e in list(self.lines) if e.get("event") == event]


def _wait(condition: Any, seconds: float) -> bool:
    """Whether `condition()` held in a check begun within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        started = time.monotonic()
        if condition():
            return True
        if started >= deadline:
            return False
        time.sleep(0.05)


def _first(vault: Path, data: Path, capsys: pytest.CaptureFixture[str]) -> str | None:
    code = main(["recall", QUESTION, "--json", "--vault", str(vault), "--data-dir", str(data)])
    out = capsys.readouterr().out
    assert code == 0, out
    results = json.loads(out)["results"]
    return str(results[0]["path"]) if results else None


def test_index_watch_imports_a_running_session_and_recall_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    copy_transcripts("claude-code", home / ".claude")
    monkeypatch.setenv("HOME", str(home))
    vault, data = tmp_path / "vault", tmp_path / "data"
    write(vault, ".companion/companion.yaml", CONFIG)
    write(vault, "Harbour/Tides.md", "# Tides\n\nThe tide gauge on the harbour wall is read every morning.\n")
    write(vault, "Harbour/Piers.md", "# Piers\n\nPier nine takes the ferries; pier four the fishing boats.\n")
    args = ["index", "--watch", "--json", "--vault", str(vault), "--data-dir", str(data)]
    stderr = tmp_path / "stderr.txt"
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", *args],
        stdout=subprocess.PIPE,
        stderr=stderr.open("w"),
        text=True,
        env={**os.environ, "HOME": str(home)},
    )
    events = _Events(proc)
    try:
        assert _wait(lambda: events.seen("watching") and events.seen("imported"), 30), "no catch-up import"
        caught_up = events.seen("imported")[0]
        assert caught_up["catch_up"] is True
        (note,) = caught_up["notes"]
        assert note.startswith("Imported/claude-code/")
        assert _wait(lambda: _first(vault, data, capsys) is not None, 10), "the notes were never indexed"
        assert _first(vault, data, capsys) != note, "the session's note came first before it held the fact"

        with (home / TRANSCRIPT).open("a", encoding="utf-8") as handle:
            handle.write(EXCHANGE)
        appended = time.monotonic()
        found = _wait(lambda: _first(vault, data, capsys) == note, 5.0)
        waited = time.monotonic() - appended
        assert found, f"the appended exchange was not recalled first within 5 s (gave up after {waited:.1f} s)"
        assert "Halvorsen datum" in (vault / note).read_text(encoding="utf-8")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("the watcher did not stop on SIGINT")
    assert proc.returncode == 0, stderr.read_text(encoding="utf-8")
    imported = events.seen("imported")
    assert [e["notes"] for e in imported[1:]] == [[note]], "the appended exchange was not imported exactly once"
    assert not events.seen("import_error")
