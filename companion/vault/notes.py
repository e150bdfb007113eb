"""The typed values a parsed note is made of.

Parsing lives in `companion.vault.parse`; this module only names the values, so every layer can share them
without importing a parser.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

NoteKind = Literal["session", "conversation", "memory", "note"]
"""What a note is to the companion: a session summary under `ops/sessions/`, a durable conversation note,
a typed memory note, or any other note."""

MEMORY_TYPE_NAMES = ("fact", "entity", "experience", "belief", "reflection", "recipe")
"""The types of memory notes, in the order they are offered (`remember`'s choices)."""
MEMORY_TYPES = frozenset(MEMORY_TYPE_NAMES)
"""The typed memory notes (`type:` in frontmatter), as `remember` writes them."""
PIPELINE_TYPES = frozenset({"decision", "task", "summary", "history"})
"""The types of the notes the session pipeline writes: extracted decisions and tasks, summaries, history notes."""
STATEMENT_TYPES = MEMORY_TYPES | {"decision"}
"""Types of notes that state something which can change (a fact, a decision): two alike notes of one such type that
say different things make a changed fact."""
KNOWN_TYPES = MEMORY_TYPES | PIPELINE_TYPES | {"conversation"}
"""Every type the companion writes or offers: a note in the memory folder with another type (or none) is pointed
out for a type to be set."""
OFFERED_TYPES = (*MEMORY_TYPE_NAMES, *sorted(KNOWN_TYPES - MEMORY_TYPES))
"""The known types as a person is offered them: the memory types first, then the others."""


@dataclass(frozen=True)
class Link:
    """One link as written in a note: `[[target#heading|alias]]`, `![[embed]]`, or a frontmatter property."""

    target: str
    """The link path as written, without `#heading`, `#^block` or `|alias`; empty for a same-note link."""
    heading: str | None = None
    """The heading after `#`, if any."""
    block: str | None = None
    """The block id after `#^`, if any."""
    alias: str | None = None
    """The display text after `|`, if any."""
    embed: bool = False
    """True for `![[...]]` embeds."""
    line: int = 0
    """0-based line in the file where the link stands (the frontmatter line for property links)."""
    property: str | None = None
    """The frontmatter property holding the link, or None for a link in the body."""


@dataclass(frozen=True)
class Heading:
    """A Markdown heading of a note."""

    level: int
    """1 to 6."""
    text: str
    """The heading text, inline markup kept as written."""
    line: int
    """0-based line in the file."""


@dataclass(frozen=True)
class Note:
    """A parsed note: frontmatter, body and everything the graph and the indexer need from it."""

    path: str
    """Vault-relative POSIX path, with the `.md` suffix."""
    title: str
    """The file name without `.md`, as Obsidian shows it."""
    body: str
    """The Markdown after the frontmatter."""
    body_line: int
    """0-based line of the file where the body starts (0 when there is no frontmatter)."""
    content_hash: str
    """SHA-256 hex digest of the file's bytes."""
    kind: NoteKind = "note"
    """What the note is to the companion (see `NoteKind`)."""
    note_type: str | None = None
    """The frontmatter `type` when it is a single string, lower-cased."""
    frontmatter: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """Frontmatter with JSON-safe values (dates as ISO strings)."""
    links: tuple[Link, ...] = ()
    """Every link in the body and in frontmatter properties, in file order; none from code."""
    tags: tuple[str, ...] = ()
    """Tags from the body (`#tag`) and the `tags` property, without `#`, de-duplicated, in order."""
    aliases: tuple[str, ...] = ()
    """The `aliases` property."""
    headings: tuple[Heading, ...] = ()
    """Headings in file order."""
    block_ids: tuple[str, ...] = ()
    """Block ids (`^id` at the end of a block)."""
    frontmatter_problem: str | None = None
    """Set when the frontmatter is not valid YAML and `frontmatter` was read line by line: what is wrong and on which
    file line, for the user to fix. Such a note is indexed and recalled, but its properties are never edited."""


@dataclass(frozen=True)
class FileStat:
    """What a cheap `stat` says of a file: enough to skip unchanged notes without reading them."""

    mtime_ns: int
    """Modification time in nanoseconds."""
    size: int
    """Size in bytes."""
