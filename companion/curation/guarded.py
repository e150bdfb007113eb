"""Replacing, moving and removing a note only while it still holds what the plan read, checked through the file itself.

A check of a note's bytes followed by a write by name leaves a moment in which an editor (Obsidian, an agent, a
script appending a line) can change the note, and the write then drops that edit. So each operation here opens the
note once, keeps that descriptor, and checks through it, as close to the rename as the system allows:

- a replace writes and flushes the new file first, then re-reads the note through the held descriptor and checks that
  the name still leads to that same file, and swaps the two names in one step (Linux, macOS): the file displaced is
  then checked once more, and if it is not the note as read (an edit came in between, or an editor saved a new file
  under the name) it is swapped back. Where no swap is possible, the new file is renamed over the note and the old
  file, still held open, is read once more: an edit that reached it in between goes back under the name at once;
- a move (to the trash, the archive) renames the note first and then checks the file that moved: the moved file is
  the note itself, so an edit that lands during the move travels with it, and one that came before is caught and
  the note is put back where it was;
- a removal renames the note to a hidden name in its folder, checks it the same way, and only then deletes it.

A refusal raises `NoteChanged`, naming the file and what happened to it; nothing of that operation stays applied.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import secrets
import stat
import sys
from collections.abc import Callable

from companion.atomic import HeldFolder, LinkRefused, fit_name
from companion.errors import CurationError

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
# The system call that renames with flags, where the C library offers one, and its flags: rename only when the new
# name is free, and swap two names.
_RENAME_CALLS = {
    "linux": ("renameat2", {"no replace": 1, "exchange": 2}),
    "darwin": ("renameatx_np", {"no replace": 4, "exchange": 2}),
}
# A file system that cannot rename so says it with one of these; then a plain rename does, with a look first.
_UNSUPPORTED = (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP)


class NoteChanged(CurationError):
    """A note is not what the plan read any more (or a file appeared where the plan creates one): refused.

    Nothing of the operation stays applied. `kept` names the file that holds text which could not be put back
    under its own name (a file written there again meanwhile), or is None.
    """

    def __init__(self, name: str, how: str, kept: str | None = None) -> None:
        """`name` is the file's name in its folder, `how` what happened (`changed`, `was moved or deleted`, …)."""
        super().__init__(f"{name}: {how}")
        self.name = name
        """The file's name in its folder."""
        self.how = how
        """What happened to it, as a sentence's verb phrase."""
        self.kept = kept
        """Where text that could not go back under its name was kept (a name in the same folder), or None."""


def replace(held: HeldFolder, name: str, data: bytes, *, expected: bytes | None, mode: int | None) -> None:
    """Write `data` as the file `name` in `held`, when the file holds exactly `expected` (None: when there is none).

    The file gets the permission bits `mode`, else keeps its own (a new one: the usual under the umask).
    """
    if expected is None:
        _create(held, name, data, mode)
        return
    fd, info = _open(held, name)
    try:
        tmp, staged = _staged(held, data, stat.S_IMODE(info.st_mode) if mode is None else mode)
        try:
            _check(held, name, fd, info, expected)
            # Swapped where the system can: the file displaced is then at hand, to be checked after the fact.
            swapped = _renameat(held, tmp, held, name, "exchange")
            if not swapped:
                # Without a swap, a file an editor renamed over the note since the check would be lost to the
                # rename: look once more, as late as can be (a window of microseconds stays).
                if not _same_file(held, name, info):
                    raise NoteChanged(name, "changed", None)
                os.replace(tmp, name, src_dir_fd=held.fd, dst_dir_fd=held.fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=held.fd)
            raise
        if swapped:
            # `tmp` names the file that stood under `name` until the swap: the one checked, holding what it did?
            if not _same_file(held, tmp, info) or _read_all(fd) != expected:
                kept = _swap_back(held, tmp, name, staged)
                raise NoteChanged(name, "changed", kept)
            os.unlink(tmp, dir_fd=held.fd)
        else:
            # The old file is ours through the descriptor: an edit it received just before the rename is in it still.
            late = _read_all(fd)
            if late != expected:
                kept = _put_back_text(held, name, late, stat.S_IMODE(os.fstat(fd).st_mode), data)
                raise NoteChanged(name, "changed", kept)
        _sync(held.fd)
    finally:
        os.close(fd)


def move(
    src: HeldFolder, name: str, dst: HeldFolder, dst_name: str, *, expected: bytes, mode: int | None = None
) -> None:
    """Move the file `name` of `src` to `dst_name` in `dst` (which must not exist), when it holds exactly `expected`.

    With `mode`, the moved file gets these permission bits.
    """
    fd, info = _open(src, name)
    try:
        _check(src, name, fd, info, expected)
        try:
            _rename_no_replace(src, name, dst, dst_name)
        except FileExistsError as exc:
            raise NoteChanged(dst_name, "appeared") from exc
        if not _same_file(dst, dst_name, info) or _read_all(fd) != expected:
            # Changed between the check and the rename (or another file took its name): it goes back unmoved.
            kept = _move_back(dst, dst_name, src, name)
            raise NoteChanged(name, "changed", kept)
        if mode is not None and stat.S_IMODE(info.st_mode) != mode:
            os.fchmod(fd, mode)
        _sync(dst.fd)
        _sync(src.fd)
    finally:
        os.close(fd)


def remove(held: HeldFolder, name: str, *, expected: bytes) -> None:
    """Delete the file `name` of `held` when it holds exactly `expected`."""
    fd, info = _open(held, name)
    try:
        _check(held, name, fd, info, expected)
        hidden = f".companion-{secrets.token_hex(8)}.removed"
        os.rename(name, hidden, src_dir_fd=held.fd, dst_dir_fd=held.fd)
        if not _same_file(held, hidden, info) or _read_all(fd) != expected:
            kept = _move_back(held, hidden, held, name)
            raise NoteChanged(name, "changed", kept)
        os.unlink(hidden, dir_fd=held.fd)
        _sync(held.fd)
    finally:
        os.close(fd)


def exists(held: HeldFolder, name: str) -> bool:
    """Whether anything (a file, a folder, a link) has the name `name` in `held`."""
    try:
        os.stat(name, dir_fd=held.fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


# -- the parts
# -------------------------------------------------------------------------------------------------------------


def _open(held: HeldFolder, name: str) -> tuple[int, os.stat_result]:
    """The note's descriptor and its status; `NoteChanged` when it is gone, `LinkRefused` for a link."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=held.fd)
    except FileNotFoundError as exc:
        raise NoteChanged(name, "was moved or deleted") from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LinkRefused(name) from exc
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise IsADirectoryError(errno.EISDIR, "not a regular file", name)
    return fd, info


def _check(held: HeldFolder, name: str, fd: int, info: os.stat_result, expected: bytes) -> None:
    """Refuse unless the name still leads to the file held open and that file holds exactly `expected`."""
    if not _same_file(held, name, info):
        # Saved by an editor that writes a new file and renames it over the old one, or moved away.
        raise NoteChanged(name, "was replaced by another file" if exists(held, name) else "was moved or deleted")
    if _read_all(fd) != expected:
        raise NoteChanged(name, "changed")


def _same_file(held: HeldFolder, name: str, info: os.stat_result) -> bool:
    try:
        now = os.stat(name, dir_fd=held.fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return (now.st_dev, now.st_ino) == (info.st_dev, info.st_ino)


def _read_all(fd: int) -> bytes:
    """Everything the file holds now, read from its start through the descriptor (its offset is not used)."""
    chunks: list[bytes] = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _staged(held: HeldFolder, data: bytes, mode: int | None) -> tuple[str, os.stat_result]:
    """A hidden new file in `held` holding `data`, flushed to disk: its name and status."""
    # A dot name: Obsidian and the indexer skip dot-files, so nobody reads it before it is renamed.
    tmp = f".companion-{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC, 0o666, dir_fd=held.fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
            info = os.fstat(handle.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=held.fd)
        raise
    return tmp, info


def _create(held: HeldFolder, name: str, data: bytes, mode: int | None) -> None:
    """A new file `name`; `NoteChanged` when a file of that name appeared meanwhile (it is left as it is)."""
    tmp, _ = _staged(held, data, mode)
    try:
        _rename_no_replace(held, tmp, held, name)
    except FileExistsError as exc:
        raise NoteChanged(name, "appeared") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=held.fd)
    _sync(held.fd)


def _rename_no_replace(src: HeldFolder, name: str, dst: HeldFolder, dst_name: str) -> None:
    """Rename, raising `FileExistsError` (and renaming nothing) when `dst_name` exists in `dst`."""
    if _renameat(src, name, dst, dst_name, "no replace"):
        return
    # Without that call a file could appear between the look and the rename and be replaced; the names renamed to
    # are new hidden ones, the trash and the archive, where nobody else writes at that moment.
    if exists(dst, dst_name):
        raise FileExistsError(errno.EEXIST, "already exists", dst_name)
    os.rename(name, dst_name, src_dir_fd=src.fd, dst_dir_fd=dst.fd)


def _renameat(src: HeldFolder, name: str, dst: HeldFolder, dst_name: str, how: str) -> bool:
    """Rename as `how` says (`no replace`, `exchange`); False when the system or the file system cannot."""
    call = _rename_call()
    if call is None:
        return False
    function, flags = call
    if function(src.fd, os.fsencode(name), dst.fd, os.fsencode(dst_name), flags[how]) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), dst_name)


@functools.cache
def _rename_call() -> tuple[Callable[[int, bytes, int, bytes, int], int], dict[str, int]] | None:
    found = _RENAME_CALLS.get(sys.platform)
    if found is None:
        return None
    try:
        function = getattr(ctypes.CDLL(None, use_errno=True), found[0])
    except (OSError, AttributeError):  # an older C library
        return None
    function.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    function.restype = ctypes.c_int
    return function, found[1]


def _swap_back(held: HeldFolder, tmp: str, name: str, staged: os.stat_result) -> str | None:
    """Swap the displaced file (now `tmp`) back under `name`; the file written, back under `tmp`, is deleted.

    When `name` was written again in the meantime, that version is not deleted but kept beside it under a free name,
    which is returned (None otherwise).
    """
    if not _renameat(held, tmp, held, name, "exchange"):
        raise OSError(errno.EIO, "the swap back failed", name)
    if _same_file(held, tmp, staged):
        os.unlink(tmp, dir_fd=held.fd)
        _sync(held.fd)
        return None
    kept = _free_name(held, name)
    _rename_no_replace(held, tmp, held, kept)
    _sync(held.fd)
    return kept


def _move_back(src: HeldFolder, name: str, dst: HeldFolder, dst_name: str) -> str | None:
    """Rename a file back to where it was; when that name is taken again, keep it beside it under a free name.

    Returns that other name, or None when the file went back.
    """
    try:
        _rename_no_replace(src, name, dst, dst_name)
    except FileExistsError:
        kept = _free_name(dst, dst_name)
        _rename_no_replace(src, name, dst, kept)
        return kept
    _sync(src.fd)
    _sync(dst.fd)
    return None


def _put_back_text(held: HeldFolder, name: str, text: bytes, mode: int, written: bytes) -> str | None:
    """Put `text` (the note with an edit it received during the rename) back under `name`, where `written` now is.

    When the name was written again meanwhile too, `text` goes to a new file beside it; returns that file's name,
    or None when the text went back under its own name.
    """
    try:
        replace(held, name, text, expected=written, mode=mode)
    except NoteChanged:
        kept = _free_name(held, name)
        _create(held, kept, text, mode)
        return kept
    return None


def _free_name(held: HeldFolder, name: str) -> str:
    """`Name (edited meanwhile).md`, numbered when that is taken too: where a note's other text is kept."""
    stem, dot, suffix = name.rpartition(".")
    stem, suffix = (stem, dot + suffix) if dot and stem else (name, "")
    number = 1
    while True:
        tail = " (edited meanwhile)" if number == 1 else f" (edited meanwhile {number})"
        candidate = fit_name(stem, tail + suffix)
        if not exists(held, candidate):
            return candidate
        number += 1


def _sync(fd: int) -> None:
    # Some file systems refuse fsync on a folder; the change itself has happened, so that is not an error.
    try:
        os.fsync(fd)
    except OSError:
        return
