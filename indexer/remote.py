"""The embedded store shared between processes: its owner answers everyone else's reads over a local socket.

Chroma's embedded store is not safe for two processes, readers included: a reader that opens it while another
process writes can leave vectors unreadable. So one process at a time opens it, the one holding the writer lock
(the owner), and it answers the reads of every other process (nearest neighbours, stored vectors, counts, a health
check) over a Unix socket in the vault's data directory. A reader never opens the folder while another process
holds the lock; an owner that is only reading hands the store over when a writer asks (`release`).

The protocol is one JSON request line and one JSON reply line per connection; vectors travel as base64 float32.
Only the user who runs the owner may connect (the socket is mode 600 and the peer's uid is checked). A crowd of
readers waits in the socket's queue (and a reader finding even that full tries again), while the owner works on a
few requests at a time, each at most `REQUEST_MAX_BYTES` long: its memory stays bounded whoever asks.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import json
import logging
import os
import random
import socket
import socketserver
import stat
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from companion.errors import ModelError, StoreError
from indexer.lock import WriterLock
from indexer.store import StoreHealth, VectorStore

log = logging.getLogger(__name__)

REQUEST_TIMEOUT_S = 10.0
"""How long a reader waits for the owner's answer to one request (a health check of a big store waits longer)."""
CONNECT_TIMEOUT_S = 2.0
"""How long a reader tries to reach an owner that holds the lock but does not listen yet (one that listens and is
busy is waited for up to the request's own timeout)."""
REQUEST_MAX_BYTES = 1 << 20
"""The longest request line the owner reads: a vector, or ids in batches of `_IDS_PER_REQUEST_BYTES`."""
CONCURRENT_REQUESTS = 8
"""How many requests the owner works on at once; the rest wait in the socket's queue, costing it nothing."""
_MAX_LINE = 1 << 30  # a reply listing every id of a 50k-note store is ~15 MB; a request is far smaller
_IDS_PER_REQUEST_BYTES = REQUEST_MAX_BYTES // 2
_SUN_PATH_MAX = 100  # sockaddr_un holds 108 bytes on Linux, fewer on other systems
_RUNTIME_NAMES = 5  # folders tried per base folder for sockets whose data-dir path is too long


class StoreUnavailable(StoreError):
    """Another process owns the embedded store and cannot be asked (not serving, or not answering)."""


def socket_path(data_dir: Path) -> Path:
    """Where the owner of `data_dir`'s store listens: in the data directory, or, when that path is too long for a
    socket address, in a private runtime folder (`runtime_folder`) named after it."""
    here = data_dir / "store.sock"
    if len(os.fsencode(str(here))) <= _SUN_PATH_MAX:
        return here
    digest = hashlib.sha1(str(data_dir).encode("utf-8")).hexdigest()[:20]
    return runtime_folder() / f"{digest}.sock"


def runtime_folder() -> Path:
    """This user's private folder for sockets: `vault-companion-<uid>` in `$XDG_RUNTIME_DIR`, else in the temporary
    folder; one that another user made, or that others may open, is passed over for `vault-companion-<uid>-2` and
    so on. Raises `StoreUnavailable` saying what to do when none of them is usable."""
    uid = os.getuid()
    bases = [Path(b) for b in (os.environ.get("XDG_RUNTIME_DIR"), tempfile.gettempdir()) if b]
    refused: list[str] = []
    for base in dict.fromkeys(bases):
        for n in range(1, _RUNTIME_NAMES + 1):
            folder = base / (f"vault-companion-{uid}" if n == 1 else f"vault-companion-{uid}-{n}")
            why = _unusable(folder, uid)
            if why is None:
                return folder
            refused.append(f"{folder} {why}")
    raise StoreUnavailable(
        "the data directory's path is too long for a socket, and no private folder for one is at hand ("
        + "; ".join(refused[:3])
        + "): set XDG_RUNTIME_DIR to a folder only you can open, remove those folders, or use a shorter --data-dir"
    )


def _unusable(folder: Path, uid: int) -> str | None:
    """Why `folder` cannot hold this user's sockets (None when it can), making it when missing."""
    try:
        folder.mkdir(mode=0o700)
        os.chmod(folder, 0o700)  # the umask may have taken the owner's own bits
    except FileExistsError:
        pass
    except OSError as exc:
        return f"cannot be made ({exc.strerror or exc})"
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode):
        return "is not a folder"
    # A folder another user made, or others may write in, could hold a socket of theirs: serve nothing through it.
    if info.st_uid != uid:
        return f"belongs to another user (uid {info.st_uid})"
    if stat.S_IMODE(info.st_mode) & 0o077:
        return f"is open to other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def _encode(vector: npt.NDArray[np.float32]) -> str:
    return base64.b64encode(np.ascontiguousarray(vector, dtype=np.float32).tobytes()).decode("ascii")


def _decode(text: str) -> npt.NDArray[np.float32]:
    return np.frombuffer(base64.b64decode(text), dtype=np.float32).copy()


def _peer_uid(conn: socket.socket) -> int | None:
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return None
    return int(struct.unpack("3i", creds)[1])


class _Listener(socketserver.ThreadingUnixStreamServer):
    """A threaded Unix socket server with a queue for a crowd and at most `CONCURRENT_REQUESTS` handler threads."""

    request_queue_size = socket.SOMAXCONN  # a crowd of readers waits to be accepted rather than being refused
    daemon_threads = True

    def __init__(self, path: str, handler: type[socketserver.BaseRequestHandler]) -> None:
        self.slots = threading.BoundedSemaphore(CONCURRENT_REQUESTS)
        self.stopping = threading.Event()
        super().__init__(path, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Start a thread for the request once one of the slots is free (the accepting loop waits for it, and the
        connections behind this one wait in the kernel's queue)."""
        while not self.slots.acquire(timeout=0.1):
            if self.stopping.is_set():
                self.shutdown_request(request)
                return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """Answer one request, then free its slot."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class StoreServer:
    """Answers other processes' reads of the store this process owns, from a daemon thread.

    `store` opens (or returns) the owner's store; `release` is called when a writer asks this owner to hand the
    store over, and returns whether it did (an owner that is writing refuses).
    """

    def __init__(
        self,
        data_dir: Path,
        store: Callable[[], contextlib.AbstractContextManager[VectorStore]],
        release: Callable[[], bool],
        purpose: str,
    ) -> None:
        self.path = socket_path(data_dir)
        self._store = store
        self._release = release
        self._purpose = purpose
        self._server: _Listener | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Listen (replacing a socket file a dead owner left behind: the caller holds the writer lock)."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        outer = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                outer._handle(self.connection, self.rfile, self.wfile)

        server = _Listener(str(self.path), Handler)
        os.chmod(self.path, 0o600)  # and every request checks the peer's uid, also in the moment before this
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="store-server", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop answering and remove the socket."""
        server, self._server = self._server, None
        if server is None:
            return
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # no new reader finds it
        server.stopping.set()  # an accepting loop waiting for a free slot gives up
        # Requests run in threads of their own, so even a `release` request may wait here for the loop to end.
        server.shutdown()
        server.server_close()

    def _handle(self, conn: socket.socket, rfile: Any, wfile: Any) -> None:
        uid = _peer_uid(conn)
        if uid is not None and uid not in (os.getuid(), 0):
            return  # another user: no answer at all
        conn.settimeout(REQUEST_TIMEOUT_S)
        try:
            line = rfile.readline(REQUEST_MAX_BYTES + 1)
            if len(line) > REQUEST_MAX_BYTES and not line.endswith(b"\n"):
                # The rest is never read: the refusal goes back at once and the connection is closed.
                reply = {"error": _too_long(REQUEST_MAX_BYTES + 1)}
            else:
                reply = {"ok": self._answer(json.loads(line or b"null"))}
        except TimeoutError:
            reply = {"error": f"the request did not arrive whole within {REQUEST_TIMEOUT_S:.0f} s"}
        except (StoreError, ModelError) as exc:
            reply = {"error": str(exc)}
        except Exception as exc:  # a bad request must never take the owner down
            log.debug("store request failed", exc_info=True)
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        with contextlib.suppress(OSError):
            wfile.write(json.dumps(reply).encode("utf-8") + b"\n")
            wfile.flush()

    def _answer(self, request: Any) -> Any:
        if not isinstance(request, dict):
            raise ValueError("a request is a JSON object")
        op = request.get("op")
        if op == "release":
            return {"released": self._release()}
        with self._store() as store:
            if op == "hello":
                return {"pid": os.getpid(), "purpose": self._purpose, "model_id": store.model_id, "dim": store.dim}
            if op == "count":
                return store.count()
            if op == "ids":
                return sorted(store.ids())
            if op == "nearest":
                return store.nearest(_decode(request["vector"]), int(request["n"]))
            if op == "embeddings":
                return {k: _encode(v) for k, v in store.embeddings([str(i) for i in request["ids"]]).items()}
            if op == "health":
                if "expected" in request:  # asked by an older reader
                    return store.health([str(i) for i in request["expected"]]).as_dict()
                # The expected ids would make the request as long as the index: the reader compares the ids itself.
                held = sorted(store.ids())
                return {**store.health(held).as_dict(), "ids": held}
        raise ValueError(f"unknown request {op!r}")


def _too_long(size: int) -> str:
    return (
        f"the request is {size:,} bytes or more, and the process that holds the index reads at most "
        f"{REQUEST_MAX_BYTES:,} bytes a request: nothing was done (ask for fewer ids at a time)"
    )


def ask(data_dir: Path, request: dict[str, Any], timeout: float = REQUEST_TIMEOUT_S) -> Any:
    """Send one request to the owner of `data_dir`'s store and return its answer.

    An owner with a crowd of requests queued is waited for (within `timeout`). Raises `StoreUnavailable` when nobody
    listens or the owner does not answer within `timeout`, `StoreError` with the owner's message when it answered
    with an error (a request too long is refused here before it is sent).
    """
    payload = json.dumps(request).encode("utf-8") + b"\n"
    if len(payload) > REQUEST_MAX_BYTES + 1:
        raise StoreError(_too_long(len(payload) - 1))
    path = socket_path(data_dir)
    with _connect(data_dir, path, timeout) as conn:
        conn.settimeout(timeout)
        line = b""
        try:
            # An owner that hung up before reading everything may have left its refusal to read below.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                conn.sendall(payload)
            with conn.makefile("rb") as rfile:
                line = rfile.readline(_MAX_LINE)
        except TimeoutError as exc:
            raise StoreUnavailable(
                f"the process that holds the index did not answer within {timeout:.0f} s ({path})"
            ) from exc
        except OSError as exc:
            raise StoreUnavailable(f"the process that holds the index hung up ({exc})") from exc
    if not line:
        raise StoreUnavailable("the process that holds the index closed the connection without an answer")
    try:
        reply = json.loads(line)
        if "error" in reply:
            raise StoreError(f"the process that holds the index answered: {reply['error']}")
        return reply["ok"]
    except (ValueError, KeyError, TypeError) as exc:
        raise StoreUnavailable(f"the process that holds the index answered something unreadable ({exc})") from exc


def _connect(data_dir: Path, path: Path, timeout: float) -> socket.socket:
    """A connection to the owner's socket. While its queue is full (`EAGAIN`) the owner is there but busy: tried
    again, with growing pauses, for up to `timeout`; while it refuses (`ECONNREFUSED`) but holds the lock, it is
    about to listen: tried again for up to `CONNECT_TIMEOUT_S`."""
    started = time.monotonic()
    pause = 0.005
    while True:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(CONNECT_TIMEOUT_S)
        try:
            conn.connect(str(path))
            return conn
        except OSError as exc:
            conn.close()
            waited = time.monotonic() - started
            busy = exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK)
            starting = exc.errno == errno.ECONNREFUSED and waited < CONNECT_TIMEOUT_S and WriterLock.held(data_dir)
            if not (busy and waited < timeout) and not starting:
                raise StoreUnavailable(
                    f"the process that holds the index does not answer at {path} ({exc})"
                    + (f", busy for {waited:.0f} s" if busy else "")
                ) from exc
        # Random pauses, so a crowd told to wait does not come back all at once.
        time.sleep(pause * random.uniform(0.5, 1.5))
        pause = min(pause * 2, 0.2)


class RemoteStore:
    """The store as a reader sees it while another process owns it: the same reads, asked of the owner (only the
    owner writes)."""

    def __init__(self, data_dir: Path, *, model_id: str, dim: int, wait_s: float = 3.0) -> None:
        """Greet the owner (retrying for up to `wait_s` while it starts listening) and check its model."""
        self.data_dir = data_dir
        deadline = time.monotonic() + wait_s
        while True:
            try:
                hello = ask(data_dir, {"op": "hello"})
                break
            except StoreUnavailable:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.1)
        self.owner_pid = int(hello["pid"])
        """The process that owns the store."""
        self.owner_purpose = str(hello["purpose"])
        """What the owner is (`companion index --watch`...), for messages."""
        self.location = f"pid {self.owner_pid} ({self.owner_purpose})"
        if hello["model_id"] != model_id or int(hello["dim"]) != dim:
            raise ModelError(
                f"The index was built with the model {hello['model_id']!r} ({hello['dim']} dimensions), but "
                f"{model_id!r} ({dim}) is configured. Restart a process started before the change, configure that "
                "model again, or run `companion index` to embed every note again with this one (the words index is "
                "kept)."
            )
        self.model_id = model_id
        self.dim = dim

    def count(self) -> int:
        """How many chunk vectors the owner's store holds."""
        return int(ask(self.data_dir, {"op": "count"}))

    def ids(self) -> set[str]:
        """Every id in the owner's store."""
        return {str(i) for i in ask(self.data_dir, {"op": "ids"}, timeout=REQUEST_TIMEOUT_S * 4)}

    def nearest(self, vector: npt.NDArray[np.float32], n: int) -> list[tuple[str, float]]:
        """Nearest chunk ids with their cosine similarity, best first, as the owner's store finds them."""
        rows = ask(self.data_dir, {"op": "nearest", "vector": _encode(vector), "n": n})
        return [(str(i), float(s)) for i, s in rows]

    def embeddings(self, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The stored vectors of the ids that exist (asked in batches short enough for one request each)."""
        found: dict[str, npt.NDArray[np.float32]] = {}
        for batch in _batches(ids):
            got = ask(self.data_dir, {"op": "embeddings", "ids": batch})
            found.update((str(k), _decode(v)) for k, v in got.items())
        return found

    def health(self, expected: Sequence[str]) -> StoreHealth:
        """The owner's check that every vector it holds is readable, compared here with the expected ids."""
        got = ask(self.data_dir, {"op": "health"}, timeout=REQUEST_TIMEOUT_S * 20)
        held = {str(i) for i in got["ids"]}
        want = set(expected)
        return StoreHealth(
            vectors=int(got["vectors"]),
            missing=sorted(want - held),
            orphans=sorted(held - want),
            unreadable=[str(i) for i in got["unreadable"] if i in want],
            search_error=got.get("search_error"),
        )


def _batches(ids: Sequence[str]) -> Iterator[list[str]]:
    """`ids` in runs whose JSON fits well inside one request."""
    batch: list[str] = []
    size = 0
    for i in ids:
        cost = len(json.dumps(i)) + 2
        if batch and size + cost > _IDS_PER_REQUEST_BYTES:
            yield batch
            batch, size = [], 0
        batch.append(str(i))
        size += cost
    if batch:
        yield batch
