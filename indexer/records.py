"""What the index remembers of a note and of its chunks, as values read from its SQLite file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

NOTE_COLUMNS = "path, mtime_ns, size, content_hash, meta_hash, kind, note_type, title, date, fields, links"
"""The `notes` columns a `NoteRecord` is made of, in its fields' order."""


@dataclass(frozen=True)
class NoteRecord:
    """What the manifest remembers of one indexed note."""

    path: str
    """Vault-relative POSIX path."""
    mtime_ns: int
    """Modification time when indexed."""
    size: int
    """Size in bytes when indexed."""
    content_hash: str
    """SHA-256 of the bytes indexed; empty when the note must be indexed again."""
    meta_hash: str
    """Hash of the chunk metadata derived from frontmatter, to notice frontmatter-only edits."""
    kind: str
    """Note kind (`conversation`, `memory`, `note`)."""
    note_type: str | None
    """Frontmatter `type`, when a single string."""
    title: str
    """File name without `.md`."""
    date: str | None
    """Frontmatter `date`, when present."""
    fields_json: str = "{}"
    """The note's frontmatter as JSON (dates as ISO strings), for filters and recall without reading the file."""
    links_json: str = "[]"
    """The targets of the note's links as written (no heading, block or alias), as a JSON list."""

    @property
    def frontmatter(self) -> dict[str, Any]:
        """The frontmatter as a dict (empty when it was not a mapping)."""
        value = json.loads(self.fields_json or "{}")
        return value if isinstance(value, dict) else {}

    @property
    def link_targets(self) -> list[str]:
        """The link targets as written."""
        value = json.loads(self.links_json or "[]")
        return [str(v) for v in value] if isinstance(value, list) else []


@dataclass(frozen=True)
class ChunkRecord:
    """One chunk id as recorded: enough to decide whether its vector can be kept or reused."""

    id: str
    """`path#anchor`."""
    path: str
    """The note's path."""
    anchor: str
    """The id's anchor part."""
    text_hash: str
    """SHA-1 of the embedded text."""
    start_line: int
    """First line of the chunk's content in the file."""
    end_line: int
    """Line after the chunk's content."""
    ord: int
    """Position of the chunk in the note."""


@dataclass(frozen=True)
class Unembedded:
    """A chunk whose words are indexed and whose vector is still to be made."""

    id: str
    """The chunk id."""
    path: str
    """Its note."""
    text: str
    """The text the model is to embed."""
    meta_json: str
    """The metadata stored with its vector, as JSON."""
    tokens: int
    """How many model tokens the text is (for time estimates)."""

    @property
    def metadata(self) -> dict[str, str | int]:
        """The metadata stored with its vector."""
        value = json.loads(self.meta_json)
        return value if isinstance(value, dict) else {}
