"""What one sync or update of the index did: counted as it goes, printed by `companion index`, dumped by `--json`."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class IndexReport:
    """What one sync or update did; the CLI prints it and `--json` dumps it."""

    notes_seen: int = 0
    """Indexable notes found in the vault (or touched by the events) in this run."""
    notes_indexed: int = 0
    """New or changed notes written to the index."""
    notes_unchanged: int = 0
    """Notes whose stat changed but whose bytes did not."""
    notes_renamed: int = 0
    """Notes recognised as moved or renamed (vectors carried over)."""
    notes_deleted: int = 0
    """Notes removed from the index."""
    sessions_left_out: int = 0
    """Session summaries read in this run that are no recall candidate: both sides of the exchange boilerplate."""
    notes_skipped: int = 0
    """Notes that could not be read; listed in `skipped`."""
    chunks_embedded: int = 0
    """Chunks sent to the embedding model."""
    titles_embedded: int = 0
    """Note titles sent to the embedding model (recall compares a question's meaning with each title's)."""
    chunks_queued: int = 0
    """Chunks of new or changed text queued for embedding (their words are searchable at once)."""
    titles_left: int = 0
    """Note titles still waiting for their vector when the run ended (a time-bounded pass leaves some)."""
    chunks_left: int = 0
    """Chunks still waiting for their vector when the run ended (a time-bounded catch-up leaves some)."""
    left_s: float | None = None
    """The time embedding those would take at the rate measured in this process, when one was measured."""
    chunks_reused: int = 0
    """Chunks whose vectors were carried over from an earlier text (renames, moved paragraphs)."""
    chunks_deleted: int = 0
    """Chunk vectors removed."""
    recovered: int = 0
    """Chunk ids undone after an interrupted run."""
    elapsed_s: float = 0.0
    """Wall time of the run."""
    embed_s: float = 0.0
    """Time spent inside the embedding model."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(path, reason) of every note skipped in this run."""
    problems: list[tuple[str, str]] = field(default_factory=list)
    """(path, reason) of every note indexed in this run with a problem its author should fix (its properties are not
    valid YAML and were read line by line); such a note is indexed, not skipped."""

    @property
    def waiting(self) -> int:
        """Chunks and titles still waiting for their vectors."""
        return self.chunks_left + self.titles_left

    def merge(self, other: IndexReport) -> None:
        """Add another report's counts to this one (batches of a watch session)."""
        # Every field is a count or a duration except the lists of notes: derive, don't list them.
        for f in fields(self):
            if f.name not in ("skipped", "problems", "chunks_left", "titles_left", "left_s"):
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        # Levels, not counts: the latest run's.
        self.chunks_left, self.titles_left, self.left_s = other.chunks_left, other.titles_left, other.left_s
        self.skipped.extend(other.skipped)
        self.problems.extend(other.problems)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        data = dict(self.__dict__)
        data["elapsed_s"] = round(self.elapsed_s, 4)
        data["embed_s"] = round(self.embed_s, 4)
        data["left_s"] = None if self.left_s is None else round(self.left_s, 1)
        data["skipped"] = [{"path": p, "reason": r} for p, r in self.skipped]
        data["problems"] = [{"path": p, "reason": r} for p, r in self.problems]
        return data
