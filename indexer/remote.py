"""The embedded store shared between processes: its owner answers everyone else's reads over a local socket.

Chroma's embedded store is not safe for two processes, readers included: a reader that opens it while another
process writes can leave vectors unreadable. So one process at a time opens it, the one holding the writer lock
(the owner), and it answers the reads of every other process (nearest neighbours, stored vectors, counts, a health
check) over a Unix socket in the vault's data directory. A reader never opens the folder while another process
holds the lock; an owner that is only reading hands the store over when a writer asks (`release`).

The protocol is one JSON request line and one JSON reply line per connection; vectors travel as base64 float32.
Only the user who runs the owner may connect (the socket is mode 600 and the peer's uid is checked).
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import json
import logging
import os
import socket
import socketserver
import stat
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from companion.errors import ModelError, StoreError
from indexer.store import StoreHealth, VectorStore

log = logging.getLogger(__name__)

REQUEST_TIMEOUT_S = 10.0
"""How long a reader waits for the owner's answer to one request (a health check of a big store waits longer)."""
CONNECT_TIMEOUT_S = 2.0
"""How long a reader waits to be accepted by the owner."""
_MAX_LINE = 1 << 30  # a reply listing every id of a 50k-note store is ~15 MB; a request is far smaller
_SUN_PATH_MAX = 100  # sockaddr_un holds 108 bytes on Linux, fewer on other systems


class StoreUnavailable(StoreError):
    """Another process owns the embedded store and cannot be asked (not serving, or not answering)."""


def socket_path(data_dir: Path) -> Path:
    """Where the owner of `data_dir`'s store listens: in the data directory, or, when that path is too long for a
    socket address, in a private runtime folder named after it."""
    here = data_dir / "store.sock"
    if len(os.fsencode(str(here))) <= _SUN_PATH_MAX:
        return here
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()) / f"vault-companion-{os.getuid()}"
    base.mkdir(mode=0o700, exist_ok=True)
    info = base.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
        # A folder another user made (or opened up) could hold a socket of theirs: serve nothing through it.
        raise OSError(errno.EPERM, "not a private folder of this user", str(base))
    digest = hashlib.sha1(str(data_dir).encode("utf-8")).hexdigest()[:20]
    return base / f"{digest}.sock"


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
        self._server: socketserver.ThreadingUnixStreamServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Listen (replacing a socket file a dead owner left behind: the caller holds the writer lock)."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        outer = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                outer._handle(self.connection, self.rfile, self.wfile)

        server = socketserver.ThreadingUnixStreamServer(str(self.path), Handler)
        os.chmod(self.path, 0o600)  # and every request checks the peer's uid, also in the moment before this
        server.daemon_threads = True
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
        # Requests run in threads of their own, so even a `release` request may wait here for the loop to end.
        server.shutdown()
        server.server_close()

    def _handle(self, conn: socket.socket, rfile: Any, wfile: Any) -> None:
        uid = _peer_uid(conn)
        if uid is not None and uid not in (os.getuid(), 0):
            return  # another user: no answer at all
        conn.settimeout(REQUEST_TIMEOUT_S)
        try:
            request = json.loads(rfile.readline(_MAX_LINE) or b"null")
            reply = {"ok": self._answer(request)}
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
                return store.health([str(i) for i in request["expected"]]).as_dict()
        raise ValueError(f"unknown request {op!r}")


def ask(data_dir: Path, request: dict[str, Any], timeout: float = REQUEST_TIMEOUT_S) -> Any:
    """Send one request to the owner of `data_dir`'s store and return its answer.

    Raises `StoreUnavailable` when nobody listens or the owner does not answer within `timeout`, `StoreError`
    with the owner's message when it answered with an error.
    """
    path = socket_path(data_dir)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(CONNECT_TIMEOUT_S)
        try:
            conn.connect(str(path))
        except OSError as exc:
            raise StoreUnavailable(f"the process that holds the index does not answer at {path} ({exc})") from exc
        conn.settimeout(timeout)
        try:
            conn.sendall(json.dumps(request).encode("utf-8") + b"\n")
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
                f"{model_id!r} ({dim}) is configured. Configure the same model again, or run "
                "`companion index --rebuild` to re-embed."
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
        """The stored vectors of the ids that exist."""
        got = ask(self.data_dir, {"op": "embeddings", "ids": list(ids)})
        return {str(k): _decode(v) for k, v in got.items()}

    def health(self, expected: Sequence[str]) -> StoreHealth:
        """The owner's check that every expected vector is there and readable."""
        got = ask(self.data_dir, {"op": "health", "expected": list(expected)}, timeout=REQUEST_TIMEOUT_S * 20)
        return StoreHealth.from_dict(got)
