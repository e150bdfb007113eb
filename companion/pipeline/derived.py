"""Writing the notes a run derives from a log (summary, extracted and history day notes), never over a user's edit.

Each note is written atomically, and only when it is still what the run read: a model call can take a minute, and
what the user typed into the note meanwhile must not be overwritten. A note that cannot be written becomes a warning
in the run's report; the history itself is unaffected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol, TypeVar

from companion.atomic import make_folders, write_atomic
from companion.errors import NoteChanged
from companion.pipeline.extract import ExtractReport
from companion.pipeline.summarize import SummaryReport
from companion.pipeline.transcripts import EmbedReport
from companion.vault.audit import AuditLog, FileChange, sha256_hex
from companion.vault.paths import vault_relative


def _write_note(
    vault_root: Path,
    path: Path,
    before: bytes | None,
    content: bytes,
    audit: AuditLog | None,
    keep_copies: bool = True,
) -> FileChange:
    """Write one derived note atomically, with `keep_copies` its before and after states kept in the audit log (so it
    can show, and restore, what the note said); `OSError` when it cannot be written, `NoteChanged` when it is no
    longer what the run read (a model call can take a minute, and the user's edit of that minute must not be
    overwritten)."""
    try:
        now = path.read_bytes()
    except FileNotFoundError:
        now = None
    if now != before:
        raise NoteChanged(f"{path}: the note changed while the run was working, so it was left as it is")
    if audit is not None and keep_copies:
        if before is not None:
            audit.store_blob(before)
        audit.store_blob(content)
    make_folders(path.parent)
    write_atomic(path, content)
    return FileChange(
        vault_relative(vault_root, path), sha256_hex(before) if before is not None else None, sha256_hex(content)
    )


def _unwritten(path: Path, what: str, exc: OSError | NoteChanged) -> str:
    """The warning for a derived note that was not written."""
    if isinstance(exc, NoteChanged):
        return f"{exc}; the history is unaffected; run again to update the {what}"
    return (
        f"{path}: cannot write the {what} ({exc.strerror or exc}); the history is unaffected; check the folder is "
        "writable and run again"
    )


class _Derived(Protocol):
    @property
    def path(self) -> Path: ...
    @property
    def before(self) -> bytes | None: ...
    @property
    def content(self) -> bytes: ...


_Note = TypeVar("_Note", bound=_Derived)


def _write_notes(
    vault_root: Path, notes: Sequence[_Note], audit: AuditLog | None, what: str, keep_copies: bool = True
) -> tuple[list[FileChange], list[_Note], list[str]]:
    """Write each note (see `_write_note`); the written ones come back marked `written`, the others as warnings."""
    changes: list[FileChange] = []
    written: list[_Note] = []
    warnings: list[str] = []
    for note in notes:
        try:
            changes.append(_write_note(vault_root, note.path, note.before, note.content, audit, keep_copies))
        except (OSError, NoteChanged) as exc:
            warnings.append(_unwritten(note.path, what, exc))
            continue
        written.append(replace(note, written=True))  # type: ignore[type-var]
    return changes, written, warnings


def write_summaries(
    vault_root: Path, summaries: Sequence[SummaryReport], audit: AuditLog | None
) -> tuple[list[FileChange], tuple[SummaryReport, ...]]:
    """Write each summary note that changed; a note that cannot be written becomes a warning."""
    changes: list[FileChange] = []
    out: list[SummaryReport] = []
    for summary in summaries:
        if summary.action != "write":
            out.append(summary)
            continue
        done, written, problems = _write_notes(vault_root, [summary], audit, "summary note")
        changes += done
        if problems:
            summary = replace(summary, action="skip", reason="not written", warnings=(*summary.warnings, *problems))
        out.append(written[0] if written else summary)
    return changes, tuple(out)


def write_extracts(
    vault_root: Path, extracts: Sequence[ExtractReport], audit: AuditLog | None
) -> tuple[list[FileChange], tuple[ExtractReport, ...]]:
    """Write each extracted note; a failure becomes a warning."""
    changes: list[FileChange] = []
    out: list[ExtractReport] = []
    for report in extracts:
        done, written, problems = _write_notes(vault_root, report.notes, audit, "extracted note")
        changes += done
        out.append(replace(report, notes=tuple(written), warnings=(*report.warnings, *problems)))
    return changes, tuple(out)


def write_embeds(
    vault_root: Path, embeds: Sequence[EmbedReport], audit: AuditLog | None
) -> tuple[list[FileChange], tuple[EmbedReport, ...]]:
    """Write each history day note; a failure becomes a warning. No copies go to the audit log: a history note is
    rebuilt from the log, a copy of an earlier state may hold what redaction has since removed, and a copy per run
    of a growing note would add up to many times its size."""
    changes: list[FileChange] = []
    out: list[EmbedReport] = []
    for report in embeds:
        done, written, problems = _write_notes(vault_root, report.notes, audit, "history note", keep_copies=False)
        changes += done
        out.append(replace(report, notes=tuple(written), warnings=(*report.warnings, *problems)))
    return changes, tuple(out)
