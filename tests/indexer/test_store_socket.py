"""The owner's socket under load: a crowd of readers is answered, an oversized request is refused plainly, and a
data directory whose path is too long for a socket finds a private runtime folder of its user's.

A real owner (a workspace holding the store, serving it from its thread) is asked over its real socket.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.errors import StoreError
from companion.workspace import Workspace
from indexer.remote import REQUEST_MAX_BYTES, RemoteStore, StoreUnavailable, ask, runtime_folder, socket_path
from tests.helpers.cli import run_companion
from tests.helpers.files import write
from tests.helpers.workspaces import workspace

NOBODY = 65534


@pytest.fixture
def owner(tmp_path: Path) -> Iterator[Workspace]:
    """A workspace holding its store (so serving it), over a vault of a few indexed notes."""
    vault = tmp_path / "vault"
    for i in range(5):
        write(vault, f"note {i}.md", f"# Note {i}\n\nkitchen boiler permit {i}\n")
    ws = workspace(vault, data_dir=tmp_path / "data")
    with ws.writing():
        ws.indexer().sync()
    assert ws.owner.owned
    yield ws
    ws.close()


def test_a_crowd_of_simultaneous_asks_is_answered_none_refused(owner: Workspace) -> None:
    crowd = 500
    expected = owner.store().count()
    start = threading.Barrier(crowd)
    answers: list[object] = []
    keep = threading.Lock()

    def one() -> None:
        start.wait()
        try:
            got: object = ask(owner.data_dir, {"op": "count"})
        except StoreError as exc:
            got = str(exc)
        with keep:
            answers.append(got)

    threads = [threading.Thread(target=one) for _ in range(crowd)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    refused = [a for a in answers if a != expected]
    assert refused == [], f"{len(refused)} of {crowd} refused, e.g. {refused[0]}"


def test_a_crowd_connecting_at_once_finds_room_in_the_owners_queue(owner: Workspace) -> None:
    path = str(socket_path(owner.data_dir))
    crowd: list[socket.socket] = []
    full = 0
    try:
        for _ in range(200):  # connections that never wait, nor try again: each is queued or refused
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.setblocking(False)
            crowd.append(conn)
            try:
                conn.connect(path)
            except BlockingIOError:
                full += 1
    finally:
        for conn in crowd:
            conn.close()
    assert full == 0
    assert ask(owner.data_dir, {"op": "count"}) == owner.store().count()


def test_a_reader_finding_the_queue_full_waits_for_its_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    data.mkdir()
    path = socket_path(data)
    retried = threading.Event()
    jitter = random.uniform

    def noted(low: float, high: float) -> float:  # drawn only before a connection is tried again
        retried.set()
        return jitter(low, high)

    monkeypatch.setattr(random, "uniform", noted)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as busy:
        busy.bind(str(path))
        busy.listen(0)  # an owner whose queue is full: it listens, and accepts nobody for now
        fillers: list[socket.socket] = []
        while True:
            filler = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            filler.setblocking(False)
            try:
                filler.connect(str(path))
            except BlockingIOError:
                filler.close()
                break
            filler.send(b'{"op": "count"}\n')
            fillers.append(filler)
        outcome: list[object] = []

        def reader() -> None:
            try:
                outcome.append(ask(data, {"op": "count"}))
            except StoreError as exc:
                outcome.append(exc)

        thread = threading.Thread(target=reader)
        thread.start()
        while not retried.wait(0.05) and thread.is_alive():
            pass
        for _ in range(len(fillers) + 1):  # the owner catches up: the queue first, then the reader
            conn, _ = busy.accept()
            with conn, conn.makefile("rb") as rfile:
                if rfile.readline():
                    conn.sendall(b'{"ok": 7}\n')
            if outcome:
                break
        thread.join(timeout=30)
        for filler in fillers:
            filler.close()
    assert outcome == [7]


def test_an_oversized_request_is_refused_plainly_and_the_owner_stays_up(owner: Workspace) -> None:
    path = socket_path(owner.data_dir)
    huge = json.dumps({"op": "embeddings", "ids": ["x" * 60] * (8 * REQUEST_MAX_BYTES // 64)}).encode() + b"\n"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(path))
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # refused before it was all sent
            conn.sendall(huge)
        with conn.makefile("rb") as rfile:
            reply = json.loads(rfile.readline())
    assert f"reads at most {REQUEST_MAX_BYTES:,} bytes a request" in reply["error"]
    assert "nothing was done" in reply["error"]
    count = owner.store().count()
    assert ask(owner.data_dir, {"op": "count"}) == count > 0

    with pytest.raises(StoreError, match="reads at most"):  # refused before sending, with the same words
        ask(owner.data_dir, {"op": "embeddings", "ids": ["x" * 60] * (2 * REQUEST_MAX_BYTES // 64)})


def test_a_reader_asks_for_many_vectors_and_a_full_check_in_requests_the_owner_accepts(owner: Workspace) -> None:
    real = sorted(owner.store().ids())
    reader = RemoteStore(owner.data_dir, model_id=owner.embedder().model_id, dim=owner.embedder().dim)
    absent = [f"Notes/a rather long folder name/absent note {i:06d}.md#heading" for i in range(40_000)]
    got = reader.embeddings(absent + real)
    assert sorted(got) == real
    health = reader.health([*real[1:], "gone.md#x"])
    assert health.missing == ["gone.md#x"] and health.orphans == real[:1]
    assert health.vectors == len(real) and health.unreadable == [] and health.search_error is None


@pytest.fixture
def short_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh temporary folder with a short path (a socket address holds ~100 bytes), made the temporary folder of
    this process and of the commands it runs, with no XDG_RUNTIME_DIR."""
    base = Path(tempfile.mkdtemp(prefix="vc"))
    monkeypatch.setattr(tempfile, "tempdir", str(base))
    monkeypatch.setenv("TMPDIR", str(base))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def _long_data_dir(tmp_path: Path) -> Path:
    data = tmp_path / ("a-data-directory-with-a-long-name-" * 3)
    assert len(str(data / "vaults" / "v-0123456789" / "store.sock")) > 108
    return data


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")


@needs_root
def test_a_runtime_folder_another_user_made_is_passed_over(short_tmp: Path, tmp_path: Path) -> None:
    planted = short_tmp / f"vault-companion-{os.getuid()}"
    planted.mkdir(mode=0o700)
    os.chown(planted, NOBODY, NOBODY)
    vault = tmp_path / "vault"
    write(vault, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    write(vault, "Notes/boiler.md", "# Boiler\n\nthe boiler permit came through\n")
    data = _long_data_dir(tmp_path)

    index = run_companion("index", "--vault", str(vault), "--data-dir", str(data))
    assert index.returncode == 0, index.stderr

    ws = Workspace.open(vault, data_dir=data)
    try:
        ws.store().count()  # this process holds the store now, and serves it to the recall below
        assert ws.owner.owned
        serving = socket_path(ws.data_dir)
        assert serving.parent == short_tmp / f"vault-companion-{os.getuid()}-2" and serving.is_socket()
        recall = run_companion("recall", "boiler", "--json", "--vault", str(vault), "--data-dir", str(data))
    finally:
        ws.close()
    assert recall.returncode == 0, recall.stderr
    answer = json.loads(recall.stdout)
    assert answer["results"][0]["path"] == "Notes/boiler.md"
    assert not answer.get("notice")  # the meaning side was asked of this process, not left out
    ours = short_tmp / f"vault-companion-{os.getuid()}-2"
    assert runtime_folder() == ours and ours.stat().st_uid == os.getuid()
    assert ours.stat().st_mode & 0o777 == 0o700
    assert planted.stat().st_uid == NOBODY and list(planted.iterdir()) == []


def test_a_runtime_folder_open_to_others_is_passed_over(short_tmp: Path) -> None:
    opened = short_tmp / f"vault-companion-{os.getuid()}"
    opened.mkdir()
    opened.chmod(0o777)
    assert runtime_folder() == short_tmp / f"vault-companion-{os.getuid()}-2"
    assert opened.stat().st_mode & 0o777 == 0o777  # not ours to judge what is in it: left as it is


def test_no_usable_runtime_folder_says_what_to_do(short_tmp: Path, tmp_path: Path) -> None:
    for n in range(1, 6):
        opened = short_tmp / (f"vault-companion-{os.getuid()}" + (f"-{n}" if n > 1 else ""))
        opened.mkdir()
        opened.chmod(0o777)
    with pytest.raises(StoreUnavailable) as refused:
        socket_path(_long_data_dir(tmp_path) / "vaults" / "v-0123456789")
    message = str(refused.value)
    assert f"{short_tmp}/vault-companion-{os.getuid()} is open to other users (mode 777)" in message
    assert "set XDG_RUNTIME_DIR to a folder only you can open" in message
