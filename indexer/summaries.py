"""Session summaries as the index holds them: the exchange without its boilerplate, or nothing at all.

A summary is indexed as the text of its exchange (the user's message, the reply, the body), not as its file: the
two messages live in its properties, which other notes' chunks leave out. What is embedded starts with the exchange
before it in its session (same day, same session key): one exchange is short, and its pronouns and follow-ups
("yes, that one") need it, as a conversation is embedded in windows of turns. That context is read redacted, and
the index keeps its stamp, so a summary is embedded again when the one before it changes, leaves or is no longer the
one before it (`sessionshapes.Before`). Its words are searched as its own exchange alone.

Each part that is boilerplate (`companion.vault.boilerplate`) is left out of that text, so it is neither embedded
nor searched; a summary with no part left is no note of the index at all. The verdicts depend on the whole vault,
so after a batch of summaries the index looks again at every recorded one (`changed`) and indexes anew those whose
verdict moved.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace

from companion.errors import NoteError
from companion.vault.boilerplate import Boilerplate, ExchangeShapes, exchange_text, shapes_of
from companion.vault.notes import FileStat, Note
from companion.vault.sessions import SessionSummary, read_session
from indexer import sessionshapes
from indexer.manifest import Manifest
from indexer.sessionshapes import Place

_READ_AHEAD = 20_000  # summaries `foresee` keeps for the reading that follows (a few KiB each at most)
_RECENT = 64  # summaries judged last, kept for the context of the next ones (read in path order: day, then time)


def _place(summary: SessionSummary) -> Place:
    when = summary.when
    if when is None:
        return Place()
    return Place(f"{when.date().isoformat()}|{summary.session_key}", when.isoformat())


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
    """What the full-text index holds of it: its own exchange (its properties hold the messages whole)."""
    place: Place
    """Its session and moment."""
    context: str = ""
    """The stamp of the exchange before it that its text starts with (empty: none)."""

    @property
    def verdict(self) -> str:
        """The parts kept and a short hash of the context: what changes its text though not its file."""
        if not self.context:
            return self.kept
        return f"{self.kept}:{hashlib.sha1(self.context.encode('utf-8')).hexdigest()[:12]}"


class Summaries:
    """Decides what of each session summary the index keeps, and records why."""

    def __init__(self, manifest: Manifest, min_sessions: int, read: Callable[[str], Note] | None = None) -> None:
        self.manifest = manifest
        self.min_sessions = min_sessions
        """From how many summaries on a repeated text is boilerplate (0: none is)."""
        self.read = read
        """How the exchange before a summary is read, redacted (None: summaries are embedded without it)."""
        self._rule: Boilerplate | None = None
        self._read_ahead: dict[str, Note] = {}
        self._pending: list[tuple[str, FileStat, SummaryView]] = []
        # The last summaries judged, by path: the exchange before the next one is usually among them.
        self._recent: dict[str, SessionSummary] = {}
        self._sessions: dict[str, dict[str, sessionshapes.Before]] = {}  # see `_befores`

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
        self._sessions.clear()
        return self._rule

    def foresee(self, stats: dict[str, FileStat], read: Callable[[str], Note]) -> None:
        """Record the shapes of summaries about to be indexed before any is judged, so the first of many heartbeats
        read in one pass is already known for what it is (a summary that cannot be read is left to the reading that
        names it)."""
        rows: list[tuple[str, FileStat, ExchangeShapes, Place]] = []
        for path, stat in stats.items():
            try:
                note = read(path)
            except NoteError:
                continue
            if path in self._read_ahead or len(self._read_ahead) < _READ_AHEAD:
                self._read_ahead[path] = note
            summary = read_session(path, note)
            rows.append((path, stat, shapes_of(summary.user_msg, summary.sentinel_msg, note.body), _place(summary)))
        with self.manifest.transaction() as db:
            for path, stat, shapes, place in rows:
                # Not judged yet: a restart reads it again, as no `notes` row and no empty verdict vouch for it.
                sessionshapes.record(db, path, stat, shapes, sessionshapes.UNJUDGED, place)
        self._rule = None
        self._sessions.clear()  # new places: the exchanges before them are found again

    def judge(self, note: Note) -> SummaryView:
        """What the index holds of a summary (see `SummaryView`); its properties and hash stay the file's."""
        summary = read_session(note.path, note)
        self._recent[note.path] = summary
        if len(self._recent) > _RECENT:
            del self._recent[next(iter(self._recent))]
        shapes = shapes_of(summary.user_msg, summary.sentinel_msg, note.body)
        kept = self.rule.kept(shapes)
        place = _place(summary)
        if not kept:
            return SummaryView(None, "", shapes, "", place)
        words = exchange_text(summary.user_msg, summary.sentinel_msg, note.body, kept)
        before = self._befores(place.session).get(note.path) if place.session and self.read is not None else None
        context = self._exchange(before) if before is not None else ""
        if before is None or not context:
            # No context used, none recorded: a previous summary unreadable for now is tried again at the next look.
            return SummaryView(replace(note, body=words, body_line=0), kept, shapes, words, place)
        text = f"{context}\n\n{words}"
        return SummaryView(replace(note, body=text, body_line=0), kept, shapes, words, place, before.stamp)

    def _befores(self, session: str) -> dict[str, sessionshapes.Before]:
        """The exchange before each summary of a session, computed once per session while the rule and the
        recorded places stand (a session of thousands of summaries is sorted once, not once a summary)."""
        found = self._sessions.get(session)
        if found is None:
            found = self._sessions[session] = self.manifest.befores(self.rule, session)
        return found

    def _exchange(self, before: sessionshapes.Before) -> str:
        """The sides kept of the exchange before a summary, read redacted; empty when it cannot be read (its own
        reading names it)."""
        summary = self._recent.get(before.path)
        if summary is None and self.read is not None:
            try:
                summary = read_session(before.path, self.read(before.path))
            except NoteError:
                return ""
        if summary is None:
            return ""
        return exchange_text(summary.user_msg, summary.sentinel_msg, "", before.kept)

    def take(self, path: str) -> Note | None:
        """The summary `foresee` read already (once), if it kept it."""
        return self._read_ahead.pop(path, None)

    def remember(self, path: str, stat: FileStat, view: SummaryView) -> None:
        """Keep what a summary was judged, to be recorded by the next `flush` (after anything the index dropped of it
        and with the batch that indexed it)."""
        self._pending.append((path, stat, view))

    def forget(self, path: str) -> None:
        """Forget a summary that is gone."""
        with self.manifest.transaction() as db:
            sessionshapes.forget(db, path)
        self._sessions.clear()

    def discard(self) -> None:
        """Let go of what a run that failed read ahead or kept to record: the next run reads those notes again."""
        self._read_ahead.clear()
        self._pending.clear()
        self._recent.clear()
        self._sessions.clear()

    def flush(self) -> None:
        """Record what `remember` kept, in one transaction."""
        if not self._pending:
            return
        with self.manifest.transaction() as db:
            for path, stat, view in self._pending:
                sessionshapes.record(db, path, stat, view.shapes, view.kept, view.place, view.context)
        self._pending.clear()

    def changed(self) -> list[str]:
        """Count again, and list the recorded summaries whose kept parts, or the exchange before them, are no longer
        what they were indexed with."""
        rule = self.count()
        with self.manifest.transaction() as db:
            moved = sessionshapes.moved(db, rule, contexts=self.read is not None)
            # Indexed, but stopped before its verdict was recorded: read again, so it counts.
            unrecorded = sessionshapes.unrecorded(db)
        return sorted(moved | unrecorded)
