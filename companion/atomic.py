"""Durable file writes: a temporary file in the same folder, fsync, rename, fsync the folder.

A reader (Obsidian, the indexer, a sync client) sees either the old bytes or the new ones, never half a file, and a
crash right after a write returns does not lose it.

Writes into the vault go through a `HeldFolder`: each folder on the way is opened by file descriptor, one name at a
time and never through a symbolic link, and the file is then written by name inside the folder held open. A path is
looked up once, when the folder is opened, so a folder swapped for a symbolic link after a check cannot send the
write anywhere else (a check of the path, then a write by path, leaves that moment open).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
import tempfile
import unicodedata
from collections.abc import Callable, Container
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

NAME_BYTES = 255
"""The longest file or folder name the usual file systems (ext4, APFS, NTFS) accept, in bytes of UTF-8."""

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC


class LinkRefused(OSError):
    """A symbolic link where a `HeldFolder` expected a real folder or file: it is not followed.

    `filename` is the link's path relative to the folder the walk started from (the vault root).
    """

    def __init__(self, path: str) -> None:
        super().__init__(errno.ELOOP, f"'{path}' is a symbolic link, which is never followed", path)


class HeldFolder:
    """A folder held open by file descriptor; names are read, written and removed inside it, not along a path.

    Made by `HeldFolder.inside` (a folder under a root, every step without following a link) or `HeldFolder.at` (a
    folder by its path, as for the data directory). Close it, or use it in a `with` block.
    """

    def __init__(self, fd: int, created: tuple[str, ...] = ()) -> None:
        """Hold the open folder descriptor `fd` (closed by `close`); `created` lists the folders made to reach it."""
        self.fd = fd
        """The open folder's descriptor."""
        self.created = created
        """Folders created on the way (relative to the root, parents first), for an undo to remove again."""

    @classmethod
    def at(cls, folder: Path) -> HeldFolder:
        """The folder at `folder`, symbolic links on its path followed (the data directory may live behind one)."""
        return cls(os.open(folder, _FOLDER_FLAGS))

    @classmethod
    def inside(cls, root: Path, folder: str, *, create: bool = False) -> HeldFolder:
        """The folder `folder` (relative POSIX path, "" for `root` itself) under `root`, each step opened in the one
        before it without following a symbolic link.

        A link on the way raises `LinkRefused`, a missing folder `FileNotFoundError` unless `create` is set, when it
        is made (durably) and named in `created`.
        """
        parts = [part for part in folder.split("/") if part] if folder else []
        if any(part in (".", "..") or "\x00" in part for part in parts):
            raise OSError(errno.EINVAL, "not a plain relative folder path", folder)
        fd = os.open(root, _FOLDER_FLAGS)
        made: list[str] = []
        try:
            for depth, part in enumerate(parts):
                shown = "/".join(parts[: depth + 1])
                try:
                    step = _open_step(fd, part, shown)
                except FileNotFoundError:
                    if not create:
                        raise
                    # Made meanwhile by someone else, the folder is opened below like any other, and is not ours.
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o777, dir_fd=fd)
                        made.append(shown)
                        _sync(fd)
                    step = _open_step(fd, part, shown)
                os.close(fd)
                fd = step
        except BaseException:
            os.close(fd)
            raise
        return cls(fd, tuple(made))

    def close(self) -> None:
        """Let go of the folder (idempotent)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> HeldFolder:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def read(self, name: str) -> tuple[bytes, int] | None:
        """The bytes and permission bits of the file `name`, or None when there is none.

        A symbolic link raises `LinkRefused`; anything but a regular file (a folder, a pipe) `IsADirectoryError`.
        """
        try:
            # O_NONBLOCK: a named pipe under a note's name must not hang the read.
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC, dir_fd=self.fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LinkRefused(name) from exc
            raise
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise IsADirectoryError(errno.EISDIR, "not a regular file", name)
            return handle.read(), stat.S_IMODE(info.st_mode)

    def write(
        self,
        name: str,
        data: bytes,
        *,
        mode: int | None = None,
        before_replace: Callable[[BinaryIO], None] | None = None,
    ) -> None:
        """Replace (or create) the file `name` in this folder with `data`, atomically and durably.

        The file gets the permission bits `mode` when given; otherwise an existing file keeps its own and a new one
        gets the usual mode under the umask. A symbolic link under the name is replaced, never followed.
        `before_replace`, when given, is called with the temporary file (after `data`, before the fsync and rename)
        to append last-moment bytes; if it raises, the temporary file is removed and `name` is untouched.
        """
        if mode is None:
            try:
                info = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
            except FileNotFoundError:
                pass
            else:
                mode = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None
        # A dot name: Obsidian and the indexer skip dot-files, so nobody reads the half-written temp file.
        tmp = f".companion-{secrets.token_hex(8)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC, 0o666, dir_fd=self.fd)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                if before_replace is not None:
                    before_replace(handle)
                handle.flush()
                if mode is not None:
                    os.fchmod(handle.fileno(), mode)
                os.fsync(handle.fileno())
            os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            # Gone already when the rename went through before the failure.
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=self.fd)
            raise
        _sync(self.fd)

    def remove(self, name: str) -> bool:
        """Delete the file (or link) `name` durably; False when there was none."""
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            return False
        _sync(self.fd)
        return True

    def remove_folder(self, name: str) -> bool:
        """Delete the folder `name` when it is empty (durably); False when it is gone, not empty or not a folder."""
        try:
            os.rmdir(name, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                return False
            raise
        _sync(self.fd)
        return True


def fit_name(stem: str, tail: str = "", limit: int = NAME_BYTES) -> str:
    """`stem + tail`, the stem cut at a character boundary so the whole takes at most `limit` bytes of UTF-8.

    For names made automatically (a numbered copy, a title from a sentence): the tail (` 2.md`) is kept whole.
    """
    room = limit - len(tail.encode("utf-8"))
    raw = stem.encode("utf-8")
    if len(raw) <= room:
        return stem + tail
    cut = raw[: max(room, 0)].decode("utf-8", errors="ignore")
    # A character whose accent or joiner would be cut away goes with them, as does a joiner left at the end.
    while cut and (_clings(stem[len(cut)]) or _clings(cut[-1])):
        cut = cut[:-1]
    return cut + tail


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries to disk, where the platform allows opening a folder."""
    # A rename or unlink is durable only once the folder entry is on disk.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        _sync(fd)
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


def write_atomic(
    path: Path,
    data: bytes,
    before_replace: Callable[[BinaryIO], None] | None = None,
    *,
    root: Path | None = None,
    mode: int | None = None,
) -> None:
    """Replace (or create) `path` with `data` atomically; the parent folder must exist.

    With `root`, `path` is relative to it and every folder on the way is opened without following a symbolic link
    (`HeldFolder.inside`), as writes into the vault must be; without, the parent folder is opened by its path. See
    `HeldFolder.write` for `mode` and `before_replace`.
    """
    if root is not None:
        rel = path.relative_to(root) if path.is_absolute() else path
        held = HeldFolder.inside(root, rel.parent.as_posix() if rel.parent != Path() else "")
    else:
        if mode is None:
            # Outside the vault a file may be a link the user keeps (a config in a dotfiles folder): the file it
            # points to decides the mode, and the link is replaced by the new file as before.
            with contextlib.suppress(FileNotFoundError):
                mode = stat.S_IMODE(os.stat(path).st_mode)
        held = HeldFolder.at(path.parent)
    with held:
        try:
            held.write(path.name, data, mode=mode, before_replace=before_replace)
        except LinkRefused:
            raise
        except OSError as exc:
            # Inside the held folder an error names a bare or temporary name, or none (a full disk): name the file.
            raise OSError(exc.errno, exc.strerror, str(root / path if root is not None else path)) from exc


def unused_path(first: Path, numbered: Callable[[int], Path], taken: Container[Path] = ()) -> Path:
    """`first` when no file is there (and it is not in `taken`), else the first free `numbered(2)`, `numbered(3)`…:
    a new file never overwrites another."""
    candidate, n = first, 1
    while candidate.exists() or candidate in taken:
        n += 1
        candidate = numbered(n)
    return candidate


def replace_folder(work: Path, dest: Path) -> None:
    """Put the finished folder `work` at `dest`, whole: an older `dest` is moved aside first and removed after, so a
    reader finds the old folder, the new one, or (for a moment) none, never half of either. Raises OSError when the
    rename fails (another process put its own `dest` there meanwhile, say)."""
    old: Path | None = None
    if dest.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-", dir=dest.parent))
        os.replace(dest, old / dest.name)
    try:
        os.rename(work, dest)
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def remove_durably(path: Path) -> None:
    """Delete a file and make the deletion durable; a file already gone is fine."""
    path.unlink(missing_ok=True)
    fsync_dir(path.parent)


def _open_step(parent: int, name: str, shown: str) -> int:
    """Open the folder `name` in the folder `parent` without following a link; `shown` names it in errors."""
    try:
        return os.open(name, _FOLDER_FLAGS | os.O_NOFOLLOW, dir_fd=parent)
    except OSError as exc:
        # Linux says "not a directory" for a link opened this way, other systems "too many levels of links".
        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
            try:
                info = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except OSError:
                raise exc from None
            if stat.S_ISLNK(info.st_mode):
                raise LinkRefused(shown) from exc
        raise


def _clings(char: str) -> bool:
    """Whether a character belongs to the one before it: a combining accent, a joiner, a variation selector or an
    emoji skin tone."""
    return unicodedata.combining(char) != 0 or char in "\u200d\ufe0e\ufe0f" or "\U0001f3fb" <= char <= "\U0001f3ff"


def _sync(fd: int) -> None:
    # Some file systems refuse fsync on a folder; the write itself has happened, so that is not an error.
    try:
        os.fsync(fd)
    except OSError:
        return
