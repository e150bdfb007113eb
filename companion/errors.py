"""One error type per area, all under `CompanionError`.

Messages say what happened, to which file, and what to do about it, so the CLI can print them as they are.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path


class CompanionError(Exception):
    """Base of every error the companion raises on purpose."""

    exit_code = 1


class ConfigError(CompanionError):
    """The vault's `.companion/companion.yaml` (or another config file) is invalid."""

    exit_code = 2


class VaultError(CompanionError):
    """The vault cannot be found or read as a whole."""

    exit_code = 2


class NoteError(CompanionError):
    """One note cannot be read or parsed; the run goes on without it."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class ModelError(CompanionError):
    """The embedding model is missing, broken, or not the one the index was built with."""

    exit_code = 3


class StaleModelError(ModelError):
    """This process embeds with a model the index no longer holds (the config or the vault's languages moved it
    since the process started): a restart picks the index's."""


class StoreError(CompanionError):
    """The index store (Chroma or the lexical index) is unreachable, locked or corrupt."""

    exit_code = 4


class IndexLockedError(StoreError):
    """Another process already writes this vault's index."""

    exit_code = 5


class CurationError(CompanionError):
    """A curation (pin, retag, archive, delete, merge, undo) was refused or failed; the message says what to do."""


class NotConfirmedError(CurationError):
    """A curation that moves or removes notes was not confirmed (no terminal to ask on and no `--yes`)."""

    exit_code = 2


class NotFoundError(CurationError):
    """The note (or audit entry) a curation names does not exist, or its path cannot name a note in the vault (it
    climbs out with `..`, say): a bad argument."""

    exit_code = 2


class AmbiguousNoteError(NotFoundError):
    """The name given for a note (a title, an alias) is shared by several notes: a bad argument, which the message
    answers by naming them."""

    def __init__(self, message: str, paths: tuple[str, ...]) -> None:
        super().__init__(message)
        self.paths = paths
        """The notes that share the name, by vault path."""


class NothingToUndoError(CurationError):
    """`undo` found no curation left to undo: nothing was done (exit code 1, as for any refused curation)."""


class HistoryError(CompanionError):
    """A session history log cannot be read, or changed in a way a run cannot follow (truncated, replaced)."""

    exit_code = 6


class ProcessError(CompanionError):
    """A post-processing run was refused or failed; the message says what was (and was not) written."""

    exit_code = 7


class ArchiveError(CompanionError):
    """An archive file (`.jsonl.xz`) of the cold tier cannot be read; listings and searches skip it and go on."""

    exit_code = 8


class ContextError(CompanionError):
    """The context cannot be assembled (the policy and instruction alone exceed the budget)."""

    exit_code = 2


class ExtractError(CompanionError):
    """An extracted note cannot be read or updated; reported as a warning naming the note, not raised."""


class TranscriptError(CompanionError):
    """A history note cannot be updated (not ours, edited, unreadable); reported as a warning, never raised."""


class SummarizeError(CompanionError):
    """A model's reply is unusable or its endpoint unreachable, or the note cannot be updated; reported, not raised."""


class ForwardError(CompanionError):
    """A forward sink could not be reached or written, or its state file is damaged; reported, never raised out."""


class NoteChanged(ProcessError):
    """A derived note changed on disk between the run's read and its write (the user edited it meanwhile)."""


class ProcessStopped(ProcessError):
    """A post-processing run stopped midway (a full disk, an unwritable file): the message lists what was written,
    forwarded and archived before it, and what was not; the exit code is that of the error that stopped it."""

    def __init__(self, message: str, exit_code: int = ProcessError.exit_code) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class AgentInputError(CompanionError):
    """What an agent asked for is invalid: names the argument, so the agent can correct that one."""

    exit_code = 2

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        """The argument at fault (`path`, `hops`...)."""
        self.reason = message
        """What is wrong with it, and what would be accepted."""
        super().__init__(f"{field}: {message}")


class SessionImportError(CompanionError):
    """`companion import` has no sessions to read: the agent's folder (or the `--source` given) does not exist."""

    exit_code = 2


class BenchError(CompanionError):
    """A measure of `companion bench` could not finish (a process it ran failed, or a figure could not be taken)."""


class StorageError(CompanionError):
    """The operating system refused a file operation: no permission, no space left, a name too long, a read-only disk.

    Built from the `OSError` by `from_os_error`, so the message names the path and what to do, never a traceback.
    """

    exit_code = 9

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        """The file or folder the operation was on, when the system said."""


_DISK_FULL_WORDS = ("no space left on device", "disk is full", "disk quota exceeded")


def says_disk_full(message: str) -> bool:
    """Whether an error message from a library (SQLite, Chroma) means the disk or the quota is full.

    SQLite reports a full disk as "database or disk is full" and Chroma passes on its own storage's words, so the
    text is all a caller has to tell a full disk from a corrupt index.
    """
    text = message.casefold()
    return any(words in text for words in _DISK_FULL_WORDS)


def no_space_error(path: str | None, *, quota: bool = False) -> StorageError:
    """The error for a full disk (or a used-up quota) while writing under `path`."""
    what = "your disk quota is used up on the device" if quota else "no space left on the device"
    where = f" holding {path}" if path else ""
    return StorageError(
        f"{what}{where}: free some space and run the command again; nothing was half-written",
        path,
    )


def from_os_error(exc: OSError) -> StorageError:
    """One clear error for an `OSError`: what went wrong, on which path, and what to do about the common causes."""
    path = _path_text(exc.filename)
    other = _path_text(exc.filename2)
    shown = f"{path} (to {other})" if path and other else path
    code = exc.errno
    if code in (errno.ENOSPC, errno.EDQUOT):
        return no_space_error(shown, quota=code == errno.EDQUOT)
    at = f": {shown}" if shown else ""
    data_dir = "--data-dir keeps the companion's data (index, logs) in another folder"
    if code in (errno.EACCES, errno.EPERM):
        return StorageError(f"permission denied{at}: {_who_must_allow(path)}; {data_dir}", path)
    if code == errno.EROFS:
        return StorageError(f"read-only file system{at}: the device holding it cannot be written; {data_dir}", path)
    if code == errno.ENAMETOOLONG:
        return StorageError(
            f"file name too long{at}: a name in this path is longer than the file system allows (often 255 bytes); "
            "choose a shorter name, or a shorter --data-dir for the companion's data",
            path,
        )
    if code == errno.ENOTDIR or (code == errno.EEXIST and path and not os.path.isdir(path)):
        # `mkdir -p` through a plain file fails with one or the other, depending on where the file sits.
        blocking = _file_in_the_way(path)
        named = f" ({blocking})" if blocking and blocking != path else ""  # the path itself: named already
        return StorageError(
            f"not a folder{at}: a file stands where this path needs a folder{named}; move that file away, or choose "
            f"another folder: {data_dir}",
            path,
        )
    reason = exc.strerror or str(exc) or type(exc).__name__
    return StorageError(f"{reason[:1].lower()}{reason[1:]}{at}", path)


def _file_in_the_way(path: str | None) -> str | None:
    """The first part of `path` that exists and is not a folder: the file to move away (the error names the path
    that was asked for, which can be several folders below it)."""
    if not path:
        return None
    wanted = Path(path)
    for part in (*reversed(wanted.parents), wanted):
        try:
            if part.exists() and not part.is_dir():
                return str(part)
        except OSError:
            return None
    return None


def _path_text(name: object) -> str | None:
    """A path an `OSError` names, as text (it may be bytes, or a descriptor number, or missing)."""
    if isinstance(name, str | bytes | os.PathLike):
        return os.fsdecode(name)
    return None


def _who_must_allow(path: str | None) -> str:
    """Which file or folder must let this user in: an existing file itself, else the nearest existing folder (where a
    new file or folder is made)."""
    if not path:
        return "check the owner and mode of the files involved"
    current = os.path.abspath(path)
    if os.path.lexists(current) and not os.path.isdir(current):
        return f"the file {current} must be writable by this user (check its owner and mode)"
    while not os.path.isdir(current):
        parent = os.path.dirname(current)
        if parent == current:
            return "check the owner and mode of its folders"
        current = parent
    return f"the folder {current} must be writable by this user (check its owner and mode)"
