"""The vault's session notes as a source of session entries: `<sessions folder>/<YYYY-MM-DD>/*.md`.

Each session note is one entry: its id is the note's vault-relative path, its moment the note's date and time (in
local time, as the agent writes them), and its data the user's message, the agent's answer and the note's body
under `note` (what summaries, extracted notes, history notes and forward sinks see), plus the whole file's text
under `markdown`, which is what an archive keeps (so an archived note can be restored byte for byte) and what
redaction rewrites.

Applying a run's result to the notes: a dropped note is removed (after the pipeline wrote its archive), a replaced
(redacted) note is rewritten atomically with the redacted text. A note that changed since it was read is left as it
is, with a warning: the agent may be writing it right now. `restore_note` puts an archived note back.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from companion.atomic import make_folders, remove_durably, write_atomic
from companion.errors import NoteError, ProcessError
from companion.folderlock import folder_lock
from companion.pipeline.history import BadLine, Entry, HistoryLog, serialize
from companion.specs import output_problems
from companion.vault.audit import AuditLog, FileChange, sha256_hex
from companion.vault.parse import parse_note
from companion.vault.paths import inside_vault
from companion.vault.sessions import read_session

MARKDOWN_KEY = "markdown"
"""The field holding a session note's whole text in its entry."""

SESSION_NOTE_KEY = "session_note"
"""The field (`true`) that marks an entry, in the log or an archive, as a session note whose id is its path."""

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class NotesRead:
    """The session notes as read: the entries (as a `HistoryLog` the pipeline runs over) and each file's bytes."""

    log: HistoryLog
    """The entries, in time order; unreadable notes are its bad lines (reported, never touched)."""
    files: Mapping[str, bytes]
    """Each entry's note bytes as read, by id (its vault-relative path)."""


def read_notes(vault_root: Path, folder: Path, agent: str) -> NotesRead:
    """Every session note under `folder`'s day folders, as entries of `agent`; a note that cannot be read, or that
    leads out of the vault through a symlink, is a bad line naming it (and is never touched)."""
    entries: list[Entry] = []
    bad: list[BadLine] = []
    files: dict[str, bytes] = {}

    def refuse(path: Path, problem: str) -> None:
        rel = path.relative_to(vault_root).as_posix()
        bad.append(BadLine(len(bad) + 1, rel.encode("utf-8"), f"{path}: {problem}; the session note was left as it is"))

    try:
        days = sorted(d for d in os.listdir(folder) if _DAY.fullmatch(d))
    except FileNotFoundError:
        days = []
    except OSError as exc:
        raise ProcessError(f"{folder}: cannot read the session notes' folder ({exc.strerror or exc})") from exc
    for day in days:
        if not inside_vault(vault_root, folder / day):
            refuse(folder / day, "the day folder leads out of the vault (a symlink), or in a loop")
            continue
        if not (folder / day).is_dir():
            continue
        for path in sorted((folder / day).glob("*.md")):
            rel = path.relative_to(vault_root).as_posix()
            if path.is_symlink() and not inside_vault(vault_root, path):
                refuse(path, "the note leads out of the vault (a symlink), or in a loop")
                continue
            try:
                raw = path.read_bytes()
                text = raw.decode("utf-8")
                # Strict: a run may rewrite or drop the note, which it never does from properties read line by line.
                summary = read_session(rel, parse_note(rel, raw, strict=True))
                when = summary.when
                # Agents write local time without a zone.
                moment = when.astimezone() if when is not None else None
            except OSError as exc:
                refuse(path, f"cannot read the note ({exc.strerror or exc})")
                continue
            except UnicodeDecodeError:
                refuse(path, "the note is not UTF-8")
                continue
            except NoteError as exc:
                refuse(path, exc.reason)
                continue
            except (ValueError, OverflowError):
                refuse(path, "the note's date is out of range")
                continue
            if moment is None:
                refuse(path, f"the note has no readable date and time (date {summary.date!r}, time {summary.time!r})")
                continue
            data = {
                "id": rel,
                "ts": moment.isoformat(),
                "agent": agent,
                SESSION_NOTE_KEY: True,
                "user_id": summary.user_id,
                "chat_id": summary.chat_id,
                "messages": [
                    {"role": "user", "content": summary.user_msg},
                    {"role": agent, "content": summary.sentinel_msg},
                ],
                "note": summary.body,
                MARKDOWN_KEY: text,
            }
            entries.append(Entry(rel, moment, agent, data, serialize(data)))
            files[rel] = raw
    entries.sort(key=lambda e: (e.ts, e.id))
    log = HistoryLog(path=folder, agent=agent, lines=(*entries, *bad), size=0, notes=True)
    return NotesRead(log, files)


def markdown_changed(read: NotesRead, entry: Entry) -> bool:
    """Whether redaction changed the note's text itself (not only fields parsed from it, as a secret written with a
    YAML escape would be): only then is the note rewritten."""
    text = entry.data.get(MARKDOWN_KEY)
    return isinstance(text, str) and text.encode("utf-8") != read.files.get(entry.id)


@dataclass(frozen=True)
class NotesApplied:
    """What applying a run to the session notes changed."""

    changes: tuple[FileChange, ...]
    """One per note removed or rewritten."""
    warnings: tuple[str, ...]
    """Notes left as they are because they changed since the read."""


def apply_to_notes(vault_root: Path, read: NotesRead, dropped: set[str], replaced: Mapping[str, Entry]) -> NotesApplied:
    """Remove the dropped notes and rewrite the replaced ones, each only if it is still what the run read."""
    changes: list[FileChange] = []
    warnings: list[str] = []
    for rel in sorted(dropped | set(replaced)):
        path = vault_root / rel
        before = read.files[rel]
        try:
            now = path.read_bytes()
        except FileNotFoundError:
            now = None
        if now != before:
            warnings.append(
                f"{path}: the session note changed (or went) while the run was working, so it was left as it is; "
                "run again to process it" + ("; a copy of the text it had is in the archive" if rel in dropped else "")
            )
            continue
        if rel in dropped:
            remove_durably(path)
            changes.append(FileChange(rel, sha256_hex(before), None))
            with contextlib.suppress(OSError):
                path.parent.rmdir()  # an emptied day folder goes too
        else:
            text = replaced[rel].data.get(MARKDOWN_KEY)
            if not isinstance(text, str) or text.encode("utf-8") == before:
                continue
            after = text.encode("utf-8")
            write_atomic(path, after)
            changes.append(FileChange(rel, sha256_hex(before), sha256_hex(after)))
    return NotesApplied(tuple(changes), tuple(warnings))


@dataclass(frozen=True)
class RestoredNote:
    """A session note put back from an archive (or that a dry run would put back)."""

    path: Path
    """The note, where it was archived from."""
    content: bytes
    """Its bytes, as archived."""
    already: bool = False
    """True when the note was there already with these very bytes (nothing written)."""


def restore_note(vault_root: Path, entry: Entry, audit: AuditLog | None, *, dry_run: bool = False) -> RestoredNote:
    """Put an archived session note back at its path, byte for byte, recorded in the audit log (so `companion undo`
    takes it out again); `ProcessError` for an entry that is no session note, a path outside the vault, or a file in
    the way."""
    text, rel = entry.data.get(MARKDOWN_KEY), entry.id
    if not isinstance(text, str) or entry.data.get(SESSION_NOTE_KEY) is not True:
        raise ProcessError(
            f"archived entry {entry.id!r} is a history-log entry, not a session note, so there is no note to restore; "
            f"`companion archives search {entry.id!r} --json` shows it whole"
        )
    problems = output_problems(rel)
    path = vault_root / rel
    if not problems and not inside_vault(vault_root, path.parent):
        problems = ["the folder leads out of the vault (a symlink)"]
    if problems:
        raise ProcessError(f"archived entry {entry.id!r}: cannot restore to {rel!r}: {problems[0]}; nothing written")
    content = text.encode("utf-8")
    with folder_lock(vault_root):  # curation's lock: restores and curations take turns
        if path.exists():
            if path.read_bytes() == content:
                return RestoredNote(path, content, already=True)
            raise ProcessError(
                f"{path}: a note is there already, with other text, so it was left as it is; move it away and restore "
                "again"
            )
        if dry_run:
            return RestoredNote(path, content)
        if audit is not None:
            audit.store_blob(content)
        make_folders(path.parent)
        write_atomic(path, content)
        if audit is not None:
            audit.record(
                source="cli",
                action="restore",
                summary=f"Restored the session note {rel} from the archive",
                changes=[FileChange(rel, None, sha256_hex(content))],
            )
    return RestoredNote(path, content)
