"""The audit log of curations: what changed in the vault, when, by whom, and the bytes needed to undo it.

It lives in the companion's data directory for the vault, never in the vault. File contents are kept once each,
named by their SHA-256 (`audit/blobs/<sha256>`), and every curation is one JSON line of `audit/log.jsonl`; a blob is
on disk before the line that names it, so every recorded curation can be undone. Nothing is created until the first
record, so opening the log in read-only mode writes nothing.

One kind of record cannot be undone, on purpose: a history-log rewrite by `companion process` (source `process`,
action `process`) keeps only the SHA-256 of the log before and after, and no blob of either. A copy of the log before
would keep the unredacted text (secrets, e-mail addresses) that redaction just removed, so the record notes that the
log changed without keeping what it said. `last_undoable` passes these records over, so a plain `undo` goes on to the
newest curation; naming one by id is refused with nothing written (the earlier copy of the log is not there to put
back), and that holds for the whole record, notes and archives it lists included. The way back from such a run is the
archive it wrote, when its list has an `archive` processor. A run that only wrote notes (action `summarize` or
`extract`) keeps copies of them like any curation, and `undo` takes it back like one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from companion.atomic import fsync_dir, make_folders, write_atomic
from companion.errors import CurationError
from companion.locations import DataPaths, private_folder

_SHA = re.compile(r"[0-9a-f]{64}")
_MODE = re.compile(r"[0-7]{3,4}")
_FORMAT = 1
_clock = threading.Lock()
_last_moment = datetime.min.replace(tzinfo=UTC)


def _moment() -> datetime:
    """Now in UTC, strictly later than the previous call in this process, so ids sort in the order entries are made
    even when the clock stands still or steps back."""
    global _last_moment
    with _clock:
        now = datetime.now(UTC)
        if now <= _last_moment:
            now = _last_moment + timedelta(microseconds=1)
        _last_moment = now
        return now


def sha256_hex(content: bytes) -> str:
    """The SHA-256 hex digest of some bytes: the name of their blob and the state of a file in a change."""
    return hashlib.sha256(content).hexdigest()


@dataclass(frozen=True)
class FileChange:
    """One file's change: its state before and after, as SHA-256 hex digests of its bytes."""

    path: str
    """Vault-relative POSIX path."""
    before: str | None
    """SHA-256 of the bytes before; None when the file did not exist."""
    after: str | None
    """SHA-256 of the bytes after; None when the file no longer exists."""
    mode: int | None = None
    """The file's permission bits before (when it existed and they were noted), which an undo that brings the file
    back gives it again: a private note stays private through a delete and its undo."""


@dataclass(frozen=True)
class AuditEntry:
    """One recorded curation (or the undo of one)."""

    id: str
    """Unique, and sorts by time: `<UTC timestamp to the microsecond>-<random hex>`."""
    at: str
    """When it was recorded, ISO-8601 in UTC."""
    source: str
    """Who made the change: `app` or `cli` for curations, `process` for `companion process` and the triggers."""
    action: str
    """What was done: `pin`, `unpin`, `tag`, `type`, `merge`, `archive`, `delete` or `undo`; for `process` records,
    `process` (a history log rewritten: hashes only, never undoable), `summarize`, `extract` or `forward`."""
    summary: str
    """One human line saying what happened."""
    changes: tuple[FileChange, ...]
    """Every file written, moved into place or removed. A history log rewritten by `process` appears with its hashes
    only: there is no blob of it (see the module's docstring)."""
    undoes: str | None = None
    """For an `undo` entry, the id of the entry it undid."""
    details: tuple[tuple[str, str], ...] = ()
    """More about who and why, as (name, value): for an agent's write, the client's name and version and the
    prompt and model versions it passed; for a refused write (action `refused`), the reason."""
    folders: tuple[str, ...] = ()
    """Vault folders the change created (parents first), which its undo removes again when they are empty."""


class AuditLog:
    """The audit log of one vault, under `<data_dir>/audit/`."""

    def __init__(self, data_dir: Path) -> None:
        """Point at the vault's data directory; nothing is read or created yet."""
        self.folder = DataPaths(data_dir).audit
        """`<data_dir>/audit`, created on the first record."""
        self.log_path = self.folder / "log.jsonl"
        """The JSON-lines log, one entry a line, oldest first."""
        self.blob_folder = self.folder / "blobs"
        """Content-addressed copies of every file state an entry names."""

    # -- blobs
    # -----------------------------------------------------------------------------------------------------------

    def store_blob(self, content: bytes) -> str:
        """Keep a copy of `content` (durably, once per distinct content) and return its SHA-256."""
        sha = sha256_hex(content)
        path = self.blob_folder / sha
        try:
            if path.stat().st_size == len(content):
                return sha
        except FileNotFoundError:
            pass
        private_folder(self.folder)  # the copies of notes: only this user may read them
        make_folders(self.blob_folder)
        write_atomic(path, content)
        return sha

    def has_blob(self, sha: str) -> bool:
        """Whether a blob with this digest is stored."""
        return bool(_SHA.fullmatch(sha)) and (self.blob_folder / sha).is_file()

    def blob(self, sha: str) -> bytes:
        """The bytes stored under `sha`; `CurationError` when the blob is missing or damaged."""
        if not _SHA.fullmatch(sha):
            raise CurationError(f"{self.log_path}: {sha!r} is not a SHA-256 digest; the audit log is damaged")
        path = self.blob_folder / sha
        try:
            content = path.read_bytes()
        except FileNotFoundError as exc:
            raise CurationError(
                f"{path}: the saved copy of a file is missing from the audit log, so this change cannot be undone"
            ) from exc
        except OSError as exc:
            raise CurationError(f"{path}: cannot read the saved copy of a file ({exc.strerror or exc})") from exc
        if sha256_hex(content) != sha:
            raise CurationError(
                f"{path}: the saved copy of a file is damaged (its digest does not match), so it cannot be restored"
            )
        return content

    # -- entries
    # ---------------------------------------------------------------------------------------------------------

    def record(
        self,
        *,
        source: str,
        action: str,
        summary: str,
        changes: Iterable[FileChange],
        undoes: str | None = None,
        details: Iterable[tuple[str, str]] = (),
        folders: Iterable[str] = (),
    ) -> AuditEntry:
        """Append an entry (flushed and fsynced) and return it.

        The caller stores first the blob of every state an undo must restore. A history-log rewrite by `process` is
        recorded with hashes whose blobs are never stored, since they would keep text redaction removed; such a
        record cannot be undone.
        """
        now = _moment()
        entry = AuditEntry(
            id=f"{now:%Y%m%dT%H%M%S%f}Z-{secrets.token_hex(4)}",
            at=now.isoformat(timespec="microseconds").replace("+00:00", "Z"),
            source=source,
            action=action,
            summary=summary,
            changes=tuple(changes),
            undoes=undoes,
            details=tuple((str(k), str(v)) for k, v in details),
            folders=tuple(folders),
        )
        line = json.dumps(_to_json(entry), ensure_ascii=False, separators=(",", ":")) + "\n"
        private_folder(self.folder)
        created = not self.log_path.exists()
        data = line.encode("utf-8")
        if not created and not self._ends_with_newline():
            # A crash once cut the last line short: start a fresh line so this entry stays readable.
            data = b"\n" + data
        fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            fsync_dir(self.folder)
        return entry

    def _ends_with_newline(self) -> bool:
        with self.log_path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return True
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) == b"\n"

    def entries(self) -> list[AuditEntry]:
        """Every readable entry, oldest first; a line cut short by a crash (or otherwise unreadable) is skipped."""
        try:
            raw = self.log_path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise CurationError(f"{self.log_path}: cannot read the audit log ({exc.strerror or exc})") from exc
        found: list[AuditEntry] = []
        for line in raw.split(b"\n"):
            if not line.strip():
                continue
            entry = _from_json(line)
            if entry is not None:
                found.append(entry)
        return found

    def find(self, entry_id: str) -> AuditEntry | None:
        """The entry with this id, or None."""
        for entry in self.entries():
            if entry.id == entry_id:
                return entry
        return None

    def undone_ids(self) -> set[str]:
        """The ids of entries an `undo` entry has undone."""
        return {entry.undoes for entry in self.entries() if entry.undoes is not None}

    def last_undoable(self) -> AuditEntry | None:
        """The newest entry a plain `undo` would undo, or None: not itself an undo, not undone already, and not a
        history-log rewrite by `process` (action `process`), which keeps hashes but no copies and cannot be undone.

        `forward` records are skipped too: they change no file (what was sent stays sent), so undoing one would do
        nothing; so are `embed` records, whose history notes are rebuilt from the log and keep no copies. Other
        `process` records are not skipped: undoing a `summarize` or `extract` record restores the notes from their
        copies.
        """
        entries = self.entries()
        undone = {entry.undoes for entry in entries if entry.undoes is not None}
        for entry in reversed(entries):
            # Pipeline runs are recorded here too, but are not curations: their way back is the archive they wrote.
            if entry.action not in _NOT_UNDOABLE and entry.undoes is None and entry.id not in undone:
                return entry
        return None

    def nothing_to_undo(self) -> str:
        """Why a plain undo finds nothing, said plainly: no curation was ever made, or every one is undone already."""
        if any(entry.action not in _NOT_UNDOABLE and entry.undoes is None for entry in self.entries()):
            return "nothing to undo: every curation of this vault has been undone already"
        return "nothing to undo: no curation of this vault has been done yet"


_NOT_UNDOABLE = ("undo", "process", "forward", "embed", "refused")


def _to_json(entry: AuditEntry) -> dict[str, Any]:
    return {
        "v": _FORMAT,
        "id": entry.id,
        "at": entry.at,
        "source": entry.source,
        "action": entry.action,
        "summary": entry.summary,
        "changes": [_change_json(c) for c in entry.changes],
        "undoes": entry.undoes,
        **({"details": dict(entry.details)} if entry.details else {}),
        **({"folders": list(entry.folders)} if entry.folders else {}),
    }


def _change_json(change: FileChange) -> dict[str, Any]:
    data: dict[str, Any] = {"path": change.path, "before": change.before, "after": change.after}
    if change.mode is not None:
        # Octal, as `ls -l` and `chmod` people read it.
        data["mode"] = f"{change.mode:03o}"
    return data


def _from_json(line: bytes) -> AuditEntry | None:
    """An entry from one log line, or None when the line is not a whole, well-formed entry."""
    try:
        data = json.loads(line.decode("utf-8"))
    except ValueError:  # also UnicodeDecodeError
        return None
    if not isinstance(data, dict):
        return None
    texts = [data.get(name) for name in ("id", "at", "source", "action", "summary")]
    raw_changes = data.get("changes")
    undoes = data.get("undoes")
    if not all(isinstance(text, str) for text in texts) or not isinstance(raw_changes, list):
        return None
    if undoes is not None and not isinstance(undoes, str):
        return None
    changes: list[FileChange] = []
    for item in raw_changes:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            return None
        before, after = item.get("before"), item.get("after")
        if not all(state is None or (isinstance(state, str) and _SHA.fullmatch(state)) for state in (before, after)):
            return None
        changes.append(FileChange(path=item["path"], before=before, after=after, mode=_mode(item.get("mode"))))
    raw_folders = data.get("folders") or []
    if not isinstance(raw_folders, list) or not all(isinstance(folder, str) for folder in raw_folders):
        return None
    raw_details = data.get("details") or {}
    if not isinstance(raw_details, dict):
        return None
    details = tuple((str(k), str(v)) for k, v in raw_details.items())
    entry_id, at, source, action, summary = (str(text) for text in texts)
    return AuditEntry(
        id=entry_id,
        at=at,
        source=source,
        action=action,
        summary=summary,
        changes=tuple(changes),
        undoes=undoes,
        details=details,
        folders=tuple(raw_folders),
    )


def _mode(raw: object) -> int | None:
    """Permission bits written as octal digits, or None (an entry made before modes were noted, or a damaged one:
    the undo then gives the file the usual mode, which is no reason to lose the whole entry)."""
    if isinstance(raw, str) and _MODE.fullmatch(raw):
        return int(raw, 8)
    return None
