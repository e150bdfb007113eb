"""The watcher with real `watchfiles` events on a real vault folder."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.workspace import Workspace
from indexer.report import IndexReport
from indexer.watcher import watch
from tests.helpers.files import write
from tests.helpers.workspaces import workspace


class Watching:
    """A watcher running in a thread, its batches in a queue."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.indexer = ws.indexer()
        self.indexer.sync()
        self.batches: queue.Queue[IndexReport] = queue.Queue()
        self.stop = threading.Event()
        ready = threading.Event()
        self.thread = threading.Thread(
            target=watch,
            args=(self.indexer, self.stop, lambda report, n: self.batches.put(report)),
            kwargs={"debounce_ms": 800, "step_ms": 100, "on_ready": ready.set},
            daemon=True,
        )
        self.thread.start()
        assert ready.wait(30)

    def next_batch(self, timeout: float = 15) -> IndexReport:
        return self.batches.get(timeout=timeout)

    def quiet(self, seconds: float = 1.5) -> bool:
        try:
            self.batches.get(timeout=seconds)
        except queue.Empty:
            return True
        return False


@pytest.fixture
def watching(tmp_path: Path) -> Iterator[Watching]:
    vault = tmp_path / "vault"
    write(vault, "Notes/start.md", "first note\n")
    ws = workspace(vault)
    running = Watching(ws)
    yield running
    running.stop.set()
    running.thread.join(10)
    ws.close()


def test_a_new_note_becomes_searchable(watching: Watching) -> None:
    write(watching.ws.root, "Notes/ski.md", "Chamonix on the fourteenth of February\n")
    report = watching.next_batch()
    assert report.notes_indexed == 1
    assert watching.ws.searcher().search("Chamonix February", k=1)[0].path == "Notes/ski.md"


def test_an_atomic_save_is_one_update(watching: Watching) -> None:
    note = watching.ws.root / "Notes/start.md"
    # What editors do on save: write a temporary file beside the note, then rename it over the note.
    tmp = note.with_name(".start.md.tmp")
    tmp.write_text("first note, edited with new words\n", encoding="utf-8")
    os.replace(tmp, note)
    report = watching.next_batch()
    assert (report.notes_indexed, report.notes_deleted, report.notes_skipped) == (1, 0, 0)
    assert watching.quiet()
    assert {n.path for n in watching.ws.manifest.notes()} == {"Notes/start.md"}


def test_obsidian_settings_churn_is_ignored(watching: Watching) -> None:
    for i in range(5):
        write(watching.ws.root, ".obsidian/workspace.json", f'{{"n": {i}}}')
        write(watching.ws.root, ".trash/old.md", f"trashed {i}\n")
    assert watching.quiet(2.5)


def test_a_folder_rename_moves_notes_without_embedding(watching: Watching) -> None:
    write(watching.ws.root, "Trips/a.md", "alpha trip\n")
    write(watching.ws.root, "Trips/b.md", "beta trip\n")
    assert watching.next_batch().notes_indexed == 2
    (watching.ws.root / "Trips").rename(watching.ws.root / "Journeys")
    report = watching.next_batch()
    assert (report.notes_renamed, report.chunks_embedded) == (2, 0)
    assert {n.path for n in watching.ws.manifest.notes()} == {"Notes/start.md", "Journeys/a.md", "Journeys/b.md"}


def test_a_deleted_note_leaves_the_index(watching: Watching) -> None:
    (watching.ws.root / "Notes/start.md").unlink()
    assert watching.next_batch().notes_deleted == 1
    assert watching.ws.store().count() == 0


def test_watch_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    write(vault, "a.md", "alpha\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", "index", "--watch", "--json", "--vault", str(vault)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if '"event": "watching"' in line:
            break
    else:
        proc.kill()
        pytest.fail("the watcher never said it was watching")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert '"event": "stopped"' in out


def test_titles_waiting_for_vectors_are_embedded_while_the_vault_is_quiet(tmp_path: Path) -> None:
    # An index from before titles were embedded: every chunk has its vector, no title has one.
    vault = tmp_path / "vault"
    write(vault, "Notes/start.md", "first note\n")
    write(vault, "Notes/ski.md", "Chamonix on the fourteenth of February\n")
    ws = workspace(vault)
    indexer = ws.indexer()
    indexer.sync()
    with indexer.manifest.transaction() as db:
        db.execute("UPDATE notes SET title_vec = NULL")
    batches: queue.Queue[IndexReport] = queue.Queue()
    stop = threading.Event()
    thread = threading.Thread(
        target=watch,
        args=(indexer, stop, lambda report, n: batches.put(report)),
        kwargs={"debounce_ms": 800, "step_ms": 100},
        daemon=True,
    )
    thread.start()
    try:
        report = batches.get(timeout=30)  # no file changed: the quiet loop does it
        assert (report.titles_embedded, report.titles_left) == (2, 0)
        assert indexer.manifest.derived.untitled_count() == 0
    finally:
        stop.set()
        thread.join(10)
        ws.close()
