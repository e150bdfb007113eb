"""`companion index --watch` runs the session-history processors by itself when their triggers fire."""

from __future__ import annotations

import json
import lzma
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from companion.pipeline.history import serialize
from tests.helpers.files import write

CONFIG = """embedding:
  provider: hash
session_history:
  sources:
    - path: ./.agents/{agent}/history.jsonl
agents:
  sentinel:
    processors:
      - type: archive
        older_than_days: 3
        destination: ./cold-storage
      - type: retain
        max_age_days: 3
        trigger: on_write
"""


def _entry(n: int, ts: datetime) -> bytes:
    return serialize({"id": f"s-{n}", "ts": ts.isoformat(), "agent": "sentinel", "r": "HEARTBEAT_OK"}) + b"\n"


def _ids(log: Path) -> list[str]:
    return [json.loads(line)["id"] for line in log.read_text(encoding="utf-8").splitlines()]


def _archived(vault: Path) -> list[str]:
    ids = []
    for path in sorted((vault / "cold-storage").rglob("*.jsonl.xz")):
        ids += [json.loads(line)["id"] for line in lzma.decompress(path.read_bytes()).decode().splitlines()]
    return ids


def _wait(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_watch_processes_history_on_write_and_stops_on_sigint(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, ".companion/companion.yaml", CONFIG)
    write(vault, "a.md", "alpha\n")
    now = datetime.now(UTC)
    # The log sits in a dot-folder, where the note watcher sees nothing: the trigger thread stats it itself.
    log = vault / ".agents" / "sentinel" / "history.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(_entry(1, now - timedelta(days=10)) + _entry(2, now - timedelta(days=5)) + _entry(3, now))
    args = ["index", "--watch", "--json", "--trigger-interval", "0.3", "--vault", str(vault)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Never run before, so the on_write list runs once at start.
        assert _wait(lambda: _ids(log) == ["s-3"], 15), "the history was never processed"
        assert sorted(_archived(vault)) == ["s-1", "s-2"]
        with log.open("ab") as handle:
            handle.write(_entry(4, now - timedelta(days=4)) + _entry(5, now))
        assert _wait(lambda: _ids(log) == ["s-3", "s-5"], 5), "an append did not trigger a run"
        assert sorted(_archived(vault)) == ["s-1", "s-2", "s-4"]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("the watcher did not stop on SIGINT")
    assert proc.returncode == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    processed = [e for e in events if e["event"] == "processed"]
    assert [(e["agent"], e["dropped"], e["archived"]) for e in processed] == [("sentinel", 2, 2), ("sentinel", 1, 1)]
    assert processed[0]["reasons"] == ["retain (on_write)"]
    assert events[-1]["event"] == "stopped"
    assert not [e for e in events if e["event"] == "process_error"]


EMBED_CONFIG = """embedding:
  provider: hash
session_history:
  sources:
    - path: ./.agents/{agent}/history.jsonl
  processors:
    - type: redact
    - type: embed
      trigger: on_write
"""


def test_watch_embeds_history_and_its_own_watcher_indexes_the_notes(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, ".companion/companion.yaml", EMBED_CONFIG)
    write(vault, "a.md", "alpha\n")
    now = datetime.now(UTC)
    secret = "sk-" + "Zq9Xw8Vu" * 4
    log = vault / ".agents" / "trader" / "history.jsonl"
    log.parent.mkdir(parents=True)
    entry = {"id": "t-1", "ts": now.isoformat(), "agent": "trader", "role": "user"}
    log.write_bytes(serialize({**entry, "content": f"Rebalance the quinoa futures; key {secret}"}) + b"\n")
    note = vault / "Memory" / "History" / "trader" / f"trader {now:%Y-%m-%d}.md"
    args = ["index", "--watch", "--json", "--trigger-interval", "0.3", "--vault", str(vault)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    events: list[dict[str, object]] = []
    assert proc.stdout is not None
    reader = threading.Thread(target=lambda: events.extend(json.loads(line) for line in proc.stdout or ()))
    reader.start()

    def indexed_by_the_watcher() -> bool:
        return any(e["event"] == "batch" and int(str(e["notes_indexed"])) >= 1 for e in list(events))

    try:
        assert _wait(note.exists, 15), "no history note was written"
        assert _wait(indexed_by_the_watcher, 15), "the watcher did not index the history note"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=15)
        reader.join(timeout=5)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    assert secret not in note.read_text(encoding="utf-8")
    found = subprocess.run(
        [sys.executable, "-m", "companion", "recall", "quinoa futures", "--json", "--vault", str(vault)],
        capture_output=True,
        text=True,
        check=True,
    )
    paths = [r["path"] for r in json.loads(found.stdout)["results"]]
    assert paths[:1] == [note.relative_to(vault).as_posix()]
