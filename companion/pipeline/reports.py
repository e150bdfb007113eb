"""What a run of an agent's processor list did (or, in a dry run, would do): the report `process` prints."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from companion.pipeline.extract import ExtractReport
from companion.pipeline.forward import ForwardReport
from companion.pipeline.processors import Artifact
from companion.pipeline.summarize import SummaryReport
from companion.pipeline.transcripts import EmbedReport


@dataclass(frozen=True)
class ArchiveWrite:
    """One archive file a run wrote (or would write)."""

    path: Path
    """The `.jsonl.xz` file."""
    entries: int
    """How many entries it holds."""


@dataclass(frozen=True)
class AgentReport:
    """What a run did (or, in a dry run, would do) to one agent's log."""

    agent: str
    """The agent."""
    source: Path
    """Its history log."""
    entries: int
    """Valid entries read."""
    kept: int
    """Entries left in the log (replaced ones included)."""
    dropped: tuple[str, ...]
    """Ids dropped from the log, in file order."""
    replaced: tuple[str, ...]
    """Ids rewritten in place (redaction), in file order."""
    archives: tuple[ArchiveWrite, ...]
    """Archive files written."""
    derived: tuple[Artifact, ...]
    """Other artifacts processors derived (none of the built processors make any yet)."""
    problems: tuple[str, ...]
    """Bad lines, each naming the file and line; they are kept in the log."""
    appended: int
    """Bytes appended to the log during the run and carried over."""
    dry_run: bool
    """True when nothing was written."""
    forwards: tuple[ForwardReport, ...] = ()
    """What each `forward` processor sent (or would send), with any failure to report."""
    summaries: tuple[SummaryReport, ...] = ()
    """What each `summarize` processor wrote (or would write, or left alone and why)."""
    extracts: tuple[ExtractReport, ...] = ()
    """What each `extract` processor wrote (or would write), with the notes it left alone."""
    embeds: tuple[EmbedReport, ...] = ()
    """What each `embed` processor wrote (or would write): the history day notes for the indexer."""
    redacted_lines: tuple[int, ...] = ()
    """Line numbers of bad lines (kept in the log) that redaction rewrote."""
    notes_left: tuple[str, ...] = ()
    """Session notes left as they are because they changed during the run (a session-notes source)."""
    held: str | None = None
    """Why nothing was dropped from the log this run although the list drops entries: something derived from them
    (a forward, a note) is not durable yet, and dropping them would lose it for good."""

    @property
    def embedded(self) -> tuple[Path, ...]:
        """The history notes this run wrote, for the indexer to embed now."""
        return tuple(n.path for e in self.embeds for n in e.notes if n.written)

    @property
    def warnings(self) -> tuple[str, ...]:
        """The forward failures and summary problems, each naming the sink or note and what to do."""
        return (
            tuple(f.problem for f in self.forwards if f.problem)
            + tuple(w for s in self.summaries for w in s.warnings)
            + tuple(w for x in self.extracts for w in x.warnings)
            + tuple(w for e in self.embeds for w in e.warnings)
            + self.notes_left
            + ((self.held,) if self.held else ())
        )
