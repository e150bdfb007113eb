"""Durable file writes: a temporary file in the same folder, fsync, rename, fsync the folder.

A reader (Obsidian, the indexer, a sync client) sees either the old bytes or the new ones, never half a file, and a
crash right after a write returns does not lose it.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable, Container
from pathlib import Path
from typing import BinaryIO


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries to disk, where the platform allows opening a folder."""
    # A rename or unlink is durable only once the folder entry is on disk.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        return
    finally:
        os.close(fd)


def make_folders(folder: Path) -> None:
    """Create `folder` and any missing parents, each made durable in its own parent."""
    missing: list[Path] = []
    current = folder
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            continue
        fsync_dir(path.parent)


def write_atomic(path: Path, data: bytes, before_replace: Callable[[BinaryIO], None] | None = None) -> None:
    """Replace (or create) `path` with `data` atomically; the parent folder must exist.

    An existing file keeps its permission bits; a new one gets the usual mode under the umask. `before_replace`, when
    given, is called with the temporary file (after `data`, before the fsync and rename) to append last-moment bytes;
    if it raises, the temporary file is removed and `path` is untouched.
    """
    try:
        mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    # A dot name: Obsidian and the indexer skip dot-files, so nobody reads the half-written temp file.
    tmp = path.parent / f".companion-{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if before_replace is not None:
                before_replace(handle)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def unused_path(first: Path, numbered: Callable[[int], Path], taken: Container[Path] = ()) -> Path:
    """`first` when no file is there (and it is not in `taken`), else the first free `numbered(2)`, `numbered(3)`…:
    a new file never overwrites another."""
    candidate, n = first, 1
    while candidate.exists() or candidate in taken:
        n += 1
        candidate = numbered(n)
    return candidate


def remove_durably(path: Path) -> None:
    """Delete a file and make the deletion durable; a file already gone is fine."""
    path.unlink(missing_ok=True)
    fsync_dir(path.parent)
