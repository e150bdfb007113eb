"""Session summaries as the index holds them: the exchange without its boilerplate, or nothing at all.

A summary is indexed as the text of its exchange (the user's message, the reply, the body), not as its file: the
two messages live in its properties, which other notes' chunks leave out.

Each part that is boilerplate (`companion.vault.boilerplate`) is left out of that text, so it is neither embedded
nor searched; a summary with no part left is no note of the index at all. The verdicts depend on the whole vault,
so after a batch of summaries the index looks again at every recorded one (`changed`) and indexes anew those whose
verdict moved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from companion.errors import NoteError
from companion.vault.boilerplate import Boilerplate, ExchangeShapes, exchange_text, shapes_of
from companion.vault.notes import FileStat, Note
from companion.vault.sessions import read_session
from indexer import sessionshapes
from indexer.manifest import Manifest

_READ_AHEAD = 20_000  # summaries `foresee` keeps for the reading that follows (a few KiB each at most)


@dataclass(frozen=True)
class SummaryView:
    """A session summary as the index holds it."""

    note: Note | None
    """The note with its body made its exchange, boilerplate left out (what is embedded); None for a summary that
    is no candidate."""
    kept: str
    """The parts of its own exchange kept (see `Boilerplate.kept`)."""
    shapes: ExchangeShapes
    """Its parts' shapes."""
    words: str
    """What the full-text index holds of it: the same exchange (its properties hold the messages whole)."""


class Summaries:
    """Decides what of each session summary the index keeps, and records why."""

    def __init__(self, manifest: Manifest, min_sessions: int) -> None:
        self.manifest = manifest
        self.min_sessions = min_sessions
        """From how many summaries on a repeated text is boilerplate (0: none is)."""
        self._rule: Boilerplate | None = None
        self._read_ahead: dict[str, Note] = {}
        self._pending: list[tuple[str, FileStat, ExchangeShapes, str]] = []

    @property
    def rule(self) -> Boilerplate:
        """The boilerplate as last counted (counted on first use)."""
        if self._rule is None:
            self._rule = self.count()
        return self._rule

    def count(self) -> Boilerplate:
        """Count the recorded summaries' shapes again and keep the result as `rule`."""
        with self.manifest.transaction() as db:
            self._rule = sessionshapes.boilerplate(db, self.min_sessions)
        return self._rule

    def foresee(self, stats: dict[str, FileStat], read: Callable[[str], Note]) -> None:
        """Record the shapes of summaries about to be indexed before any is judged, so the first of many heartbeats
        read in one pass is already known for what it is (a summary that cannot be read is left to the reading that
        names it)."""
        rows: list[tuple[str, FileStat, ExchangeShapes]] = []
        for path, stat in stats.items():
            try:
                note = read(path)
            except NoteError:
                continue
            if path in self._read_ahead or len(self._read_ahead) < _READ_AHEAD:
                self._read_ahead[path] = note
            summary = read_session(path, note)
            rows.append((path, stat, shapes_of(summary.user_msg, summary.sentinel_msg, note.body)))
        with self.manifest.transaction() as db:
            for path, stat, shapes in rows:
                # Not judged yet: a restart reads it again, as no `notes` row and no empty verdict vouch for it.
                sessionshapes.record(db, path, stat, shapes, sessionshapes.UNJUDGED)
        self._rule = None

    def judge(self, note: Note) -> SummaryView:
        """What the index holds of a summary (see `SummaryView`); its properties and hash stay the file's."""
        summary = read_session(note.path, note)
        shapes = shapes_of(summary.user_msg, summary.sentinel_msg, note.body)
        kept = self.rule.kept(shapes)
        if not kept:
            return SummaryView(None, "", shapes, "")
        words = exchange_text(summary.user_msg, summary.sentinel_msg, note.body, kept)
        return SummaryView(replace(note, body=words, body_line=0), kept, shapes, words)

    def take(self, path: str) -> Note | None:
        """The summary `foresee` read already (once), if it kept it."""
        return self._read_ahead.pop(path, None)

    def remember(self, path: str, stat: FileStat, shapes: ExchangeShapes, kept: str) -> None:
        """Keep a summary's shapes and the parts it kept, to be recorded by the next `flush` (after anything the
        index dropped of it and with the batch that indexed it)."""
        self._pending.append((path, stat, shapes, kept))

    def forget(self, path: str) -> None:
        """Forget a summary that is gone."""
        with self.manifest.transaction() as db:
            sessionshapes.forget(db, path)

    def discard(self) -> None:
        """Let go of what a run that failed read ahead or kept to record: the next run reads those notes again."""
        self._read_ahead.clear()
        self._pending.clear()

    def flush(self) -> None:
        """Record what `remember` kept, in one transaction."""
        if not self._pending:
            return
        with self.manifest.transaction() as db:
            for path, stat, shapes, kept in self._pending:
                sessionshapes.record(db, path, stat, shapes, kept)
        self._pending.clear()

    def changed(self) -> list[str]:
        """Count again, and list the recorded summaries whose kept parts are no longer what they were indexed with."""
        rule = self.count()
        with self.manifest.transaction() as db:
            rows = sessionshapes.verdicts(db)
            # Indexed, but stopped before its verdict was recorded: read again, so it counts.
            unrecorded = sessionshapes.unrecorded(db)
        return sorted({path for path, shapes, kept in rows if rule.kept(shapes) != kept} | unrecorded)
