"""What a curation will write, planned before anything is: the plan, its writes, and reading notes for an edit."""

from __future__ import annotations

from dataclasses import dataclass

from companion.errors import CurationError, NoteError
from companion.vault.notes import Note
from companion.vault.parse import parse_note


@dataclass(frozen=True)
class PlannedWrite:
    """One file a plan writes or removes."""

    path: str
    """Vault-relative POSIX path."""
    expected: str | None
    """SHA-256 of the bytes the plan was computed from; None when the file must not exist yet."""
    content: bytes | None
    """The new bytes; None to remove the file."""
    like: str | None = None
    """For a file that another one of the plan moves here (archive, the trash), that file's path: the new file gets
    its permission bits, so a private note stays private wherever it goes."""


@dataclass(frozen=True)
class Plan:
    """What a curation will do, computed from the vault as it was; nothing is written until `Curator.apply`."""

    action: str
    """`pin`, `unpin`, `tag`, `type`, `supersede`, `relink`, `archive`, `delete` or `merge`."""
    summary: str
    """One line saying what will happen, for a confirmation (and later the audit log)."""
    destructive: bool
    """True for curations that move or remove notes (delete, merge, archive): ask before applying."""
    writes: tuple[PlannedWrite, ...]
    """Every file written or removed; empty when there is nothing to change."""
    done: str = ""
    """What happened, said once it has (for the audit log and the note after applying), where the summary speaks of
    what will happen ("will be moved to .trash/"); empty when the summary reads right before and after."""

    @property
    def outcome(self) -> str:
        """The line to say once the plan is applied: `done`, else the summary."""
        return self.done or self.summary

    @property
    def changes_nothing(self) -> bool:
        """True when applying would change no file (the note is already as asked)."""
        return not self.writes


def decode_note(rel: str, raw: bytes) -> str:
    """A note's bytes as text; `CurationError` when they are not UTF-8 (such a note is never edited)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CurationError(f"{rel}: is not valid UTF-8 text, so it cannot be edited; re-save it as UTF-8") from exc


def parse_for_edit(rel: str, raw: bytes) -> Note:
    """A note parsed whatever its size (an edit must see all of it); `CurationError` when it cannot be read, or when
    its frontmatter is not valid YAML (an edit made from properties read line by line could lose what that reading
    left out)."""
    try:
        return parse_note(rel, raw, max_bytes=max(len(raw), 1), strict=True)
    except NoteError as exc:
        raise CurationError(f"{exc}; nothing was written") from exc
