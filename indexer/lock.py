"""One writer per vault index, enforced with an OS file lock.

Chroma's embedded store is thread-safe but not process-safe, and two indexers on one manifest would undo each
other's work. The writer takes an exclusive `flock` on a file in the vault's data directory and writes who it is
into it; a second writer fails at once (never waits) with a message naming the holder. The kernel releases the
lock when the holder dies, even by `kill -9`, so a crash never leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import time
from pathlib import Path
from types import TracebackType

from companion.errors import IndexLockedError
from companion.locations import PRIVATE_FILE_MODE, DataPaths, private_folder


class WriterLock:
    """An exclusive, non-blocking lock on a vault's index; use as a context manager."""

    def __init__(self, data_dir: Path, purpose: str | None = None, *, long_lived: bool = False) -> None:
        self.path = DataPaths(data_dir).writer_lock
        self.purpose = purpose or " ".join(["companion", *sys.argv[1:]])
        self.long_lived = long_lived
        """Whether the holder runs until stopped (a writer does not wait for it to finish)."""
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise `IndexLockedError` naming the process that holds it."""
        private_folder(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise IndexLockedError(self._held_message()) from None
        info = {"pid": os.getpid(), "purpose": self.purpose, "since": time.time(), "long_lived": self.long_lived}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode("utf-8"), 0)
        except OSError as exc:
            os.close(fd)  # and with it the lock: nothing was written under it
            # A write on a descriptor names no file: name the lock file, so a full disk says where it is full.
            raise OSError(exc.errno, exc.strerror, str(self.path)) from exc
        self._fd = fd

    def release(self) -> None:
        """Give the lock back."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def holder(self) -> dict[str, object] | None:
        """Who holds the lock, as written by the holder, or None when nobody says."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "null")
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    @staticmethod
    def prepare(data_dir: Path) -> None:
        """Create the data directory and the lock file when missing, without taking the lock.

        Raises the `OSError` a writer would meet (a read-only folder, a file where a folder goes, a name too long),
        so a command that serves for long (the app, the MCP server) fails at its start with one clear message rather
        than later in a background thread.
        """
        path = DataPaths(data_dir).writer_lock
        private_folder(path.parent)
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE))

    @staticmethod
    def held(data_dir: Path) -> bool:
        """Whether another process holds the lock now (a follower polls this to know when to take over).

        Only the `flock` is tried: the file's contents (who holds it) are never touched, and a missing file means
        nobody holds it.
        """
        try:
            fd = os.open(DataPaths(data_dir).writer_lock, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # closing the descriptor also drops the probe's own lock
        return False

    def holder_summary(self) -> str:
        """`pid N (`command`, since T)`: who holds the lock, for status lines and messages."""
        info = self.holder() or {}
        since = info.get("since")
        when = (
            time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(since)))
            if isinstance(since, int | float)
            else "an unknown time"
        )
        return f"pid {info.get('pid', '?')} (`{info.get('purpose', 'companion')}`, since {when})"

    def holder_short(self) -> str:
        """`pid N since HH:MM` (the day too when it is not today): who holds the lock, for a status line."""
        info = self.holder() or {}
        since = info.get("since")
        if not isinstance(since, int | float):
            return f"pid {info.get('pid', '?')}"
        moment = time.localtime(float(since))
        today = time.localtime()
        shown = "%H:%M" if moment[:3] == today[:3] else "%Y-%m-%d %H:%M"
        return f"pid {info.get('pid', '?')} since {time.strftime(shown, moment)}"

    def _held_message(self) -> str:
        return (
            f"The index in {self.path.parent} is already being written by {self.holder_summary()}. "
            "Only one process may write it: stop that one, or let it keep the index fresh. Read-only commands "
            "(recall, doctor, the app, the MCP server) may run beside it: they ask it for what they need."
        )

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
