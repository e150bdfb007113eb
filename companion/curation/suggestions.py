"""What a review proposes: one suggestion, the notes it is about, its evidence, and the curation it would apply.

Suggestions are values computed from what the index knows of each note (`NoteFacts`), never from the files, so a
queue over a large vault costs no file reads. Applying one is an ordinary curation, planned and applied by the
`Curator`: atomic, audited, undoable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Kind = Literal["duplicate", "changed_fact", "broken_link", "missing_type", "stale", "orphan"]
"""What a suggestion is about."""

KINDS: tuple[Kind, ...] = ("duplicate", "changed_fact", "broken_link", "missing_type", "stale", "orphan")
"""Every kind, in the order a review lists them when their values tie."""

KIND_NAMES: dict[str, str] = {
    "duplicate": "near-duplicate",
    "changed_fact": "changed fact",
    "broken_link": "broken link",
    "missing_type": "missing type",
    "stale": "stale",
    "orphan": "orphan",
}
"""How each kind is named to a person."""

Action = Literal["merge", "supersede", "relink", "set_type", "archive", "none"]
"""The curation a suggestion applies: `none` for one that only points something out."""


@dataclass(frozen=True)
class NoteFacts:
    """What a review needs to know of one indexed note, read from the index."""

    path: str
    """Vault-relative POSIX path."""
    title: str
    """File name without `.md`."""
    kind: str
    """`conversation`, `memory` or `note`."""
    note_type: str | None
    """Frontmatter `type`, when one string."""
    text: str
    """The note's body as indexed (secrets redacted), or its first few thousand characters."""
    content_hash: str
    """SHA-256 of the note's bytes when indexed: a suggestion about it holds while this does."""
    changed: datetime
    """When the file last changed (timezone-aware)."""
    frontmatter: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """The note's frontmatter as JSON-safe data."""
    links: tuple[str, ...] = ()
    """The targets of its links as written."""
    aliases: tuple[str, ...] = ()
    """Its `aliases`."""

    @property
    def day(self) -> str | None:
        """The day the note is about or was made (`date`, else `created`), as `YYYY-MM-DD`, or None."""
        for key in ("date", "created"):
            value = self.frontmatter.get(key)
            if isinstance(value, str) and len(value) >= 10 and value[4] == "-" and value[7] == "-":
                return value[:10]
        return None

    @property
    def pinned(self) -> bool:
        """The user pinned it: never proposed for archiving."""
        return self.frontmatter.get("pinned") is True

    @property
    def superseded(self) -> bool:
        """It is marked as replaced by a newer note already."""
        return bool(self.frontmatter.get("superseded_by"))

    @property
    def confidence(self) -> float | None:
        """Its `confidence` (0-1), when it has one."""
        value = self.frontmatter.get("confidence")
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    @property
    def stamp(self) -> str:
        """The note's own moment as written (`date`, else `created`, with its time when it has one), or empty: what
        tells two notes of one day apart before their files' times do."""
        for key in ("date", "created"):
            value = self.frontmatter.get(key)
            if isinstance(value, str) and value:
                return value
        return ""

    @property
    def moment(self) -> str:
        """How the note sorts in time: its day, else the day its file changed."""
        return self.day or self.changed.date().isoformat()


@dataclass(frozen=True)
class Usage:
    """How a note has been used, as recall's access statistics and decay say."""

    last_used: datetime | None
    """When it was last used (opened, read by an agent, put in a context), or None if never."""
    uses: int
    """How many times."""
    decay: float
    """Its decay multiplier now."""
    at_floor: bool
    """The decay has reached the policy's floor: the note has faded from use."""


@dataclass(frozen=True)
class Proposal:
    """The curation a suggestion would apply."""

    action: Action
    """What it does."""
    path: str = ""
    """The note it changes (the one merged away, superseded, relinked, typed or archived)."""
    other: str = ""
    """The second note: the one kept by a merge, the newer one of a supersede, the link's new target."""
    value: str = ""
    """The type to set, or the link target to replace."""

    def describe(self) -> str:
        """One line saying what accepting it will do."""
        if self.action == "merge":
            return f"merge {self.path} into {self.other}"
        if self.action == "supersede":
            return f"mark {self.path} as superseded by {self.other} (it stays, and ranks below it in recall)"
        if self.action == "relink":
            return f"in {self.path}, point the links to [[{self.value}]] at {self.other}"
        if self.action == "set_type":
            return f"set the type of {self.path} to {self.value}"
        if self.action == "archive":
            return f"archive {self.path}"
        return "nothing to apply: open the note and decide"


@dataclass(frozen=True)
class Suggestion:
    """One thing a review proposes, with why."""

    kind: Kind
    """What it is about."""
    paths: tuple[str, ...]
    """The notes involved, the one the proposal changes first."""
    summary: str
    """One line for a list."""
    evidence: tuple[str, ...]
    """Why, one fact a line (a similarity, the values that differ, days unused...)."""
    proposal: Proposal
    """What accepting it applies."""
    value: float
    """How much acting on it is worth (0-1): the queue is ranked by it."""
    fingerprint: str
    """A digest of the involved notes' contents: a skipped suggestion stays skipped while it holds."""

    @property
    def id(self) -> str:
        """A short stable id: the same kind, notes and proposal give the same id in every run."""
        key = "\0".join((self.kind, *self.paths, self.proposal.action, self.proposal.other, self.proposal.value))
        return hashlib.sha1(key.encode("utf-8")).hexdigest()[:10]

    def as_dict(self) -> dict[str, Any]:
        """The suggestion as JSON-ready data (`review --json`)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "paths": list(self.paths),
            "summary": self.summary,
            "evidence": list(self.evidence),
            "action": self.proposal.action,
            "proposal": self.proposal.describe(),
            "value": round(self.value, 3),
        }


def fingerprint(notes: Mapping[str, NoteFacts], paths: tuple[str, ...]) -> str:
    """A digest of the given notes' contents (a missing note counts as empty)."""
    joined = "\0".join(f"{p}\1{notes[p].content_hash if p in notes else ''}" for p in sorted(paths))
    return hashlib.sha1(joined.encode("utf-8")).hexdigest()[:16]
