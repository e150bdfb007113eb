"""Sessions as recall sees them: summaries under `ops/sessions/` and conversation notes, one entry per session.

An agent may write both a summary (`ops/sessions/<day>/...`) and a durable conversation note for the same turn;
the conversation note names its summary in `session:` (or shares its date, time and session key), and the two are
one session, reported under the conversation note (the summary folder is not indexed).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from companion.recall.candidates import NoteIndex, NoteInfo
from companion.recall.scope import COLUMN_FIELDS, Scope
from companion.vault.reader import ObsidianVault
from companion.vault.sessions import SessionSummary

_BUILT_CACHE = 8192  # summaries built from conversation notes, kept between questions
_DAY_RANGES = 4  # day ranges whose sessions are kept: the hot window, a period asked about, a batch's few others


@dataclass(frozen=True)
class SessionRef:
    """A session as recall sees it: its summary and the note reported for it."""

    summary: SessionSummary
    """The session (from `ops/sessions/` or built from a conversation note's frontmatter)."""
    carrier: str
    """The note reported for the session: the conversation note when there is one, else the summary."""
    title: str
    """The carrier's title."""
    paths: frozenset[str]
    """Every note that stands for this session (summary and conversation note)."""
    kind: str
    """The carrier's kind: `conversation`, or `session` for a summary with no conversation note."""
    note: NoteInfo | None = None
    """The conversation note, when there is one (its frontmatter answers `--where` filters)."""


class SessionCache:
    """A vault's sessions by day range, kept between questions until the index or the session summaries change, so
    questions asked one after another (a batch, an agent's turns) only filter them by moment and scope."""

    def __init__(self, vault: ObsidianVault, index: NoteIndex) -> None:
        self.vault = vault
        """Where the session summaries are read."""
        self.index = index
        """Where the conversation notes are read, and whose generation says when the kept sessions are stale."""
        self._built: dict[str, tuple[str, SessionSummary, str]] = {}  # see `collect_sessions`
        self._ranges: dict[tuple[object, ...], list[SessionRef]] = {}
        self._chatter: tuple[object, frozenset[str]] | None = None  # see `spoken`

    def since(
        self, first_day: dt.date, moment: dt.datetime, scope: Scope | None = None, *, until: dt.date | None = None
    ) -> list[SessionRef]:
        """Sessions from `first_day` up to `moment`, and no later than the end of `until` when given.

        A summary's day is its own `date`, which its folder's name may not match (an agent naming folders by UTC
        day, its summaries by local time), so a bounded read takes one folder more than the days asked; and a
        conversation note written the day after may carry a summary of the last day, so it is read too.
        """
        last = moment.date() if until is None else min(until, moment.date())
        beyond = None if until is None else last + dt.timedelta(days=1)
        summaries = tuple(self.vault.sessions(since=first_day, until=beyond))
        key = (first_day, last, self.index.generation(), summaries)
        refs = self._ranges.get(key)
        if refs is None:
            end_of_day = dt.datetime.combine(last, dt.time.max)
            refs = collect_sessions(
                self.vault, self.index, first_day, end_of_day, None, self._built, summaries, carriers_until=beyond
            )
            if len(self._ranges) >= _DAY_RANGES:
                self._ranges.clear()
            self._ranges[key] = refs
        kept = [r for r in refs if (w := r.summary.when) is not None and w <= moment]
        if scope is not None and not scope.empty:
            kept = [r for r in kept if ref_in_scope(r, scope)]
        return kept

    def spoken(self, refs: Sequence[SessionRef]) -> list[SessionRef]:
        """The sessions that are conversations: summaries the index left out as boilerplate (heartbeats, status
        polls) are not listed by time either (the hot tier keeps them: it is the agent's last turns, whatever they
        were)."""
        key = self.index.generation()
        if self._chatter is None or self._chatter[0] != key:
            self._chatter = (key, self.index.chatter())
        chatter = self._chatter[1]
        return [r for r in refs if not chatter or r.kind != "session" or r.carrier not in chatter]


def collect_sessions(
    vault: ObsidianVault,
    index: NoteIndex,
    first_day: dt.date,
    moment: dt.datetime,
    scope: Scope | None = None,
    built: dict[str, tuple[str, SessionSummary, str]] | None = None,
    summaries: Sequence[SessionSummary] | None = None,
    carriers_until: dt.date | None = None,
) -> list[SessionRef]:
    """Sessions from `first_day` up to `moment`: summaries under `ops/sessions/` and conversation notes, one
    entry per session (a conversation note naming its summary in `session:`, or sharing its date, time and
    key, is the same session).

    `built` keeps the summaries made from conversation notes between calls, keyed by path and checked against
    the note's frontmatter, so a busy window is not decoded again for every question. `summaries` are the
    vault's session summaries since `first_day`, when the caller has read them already. Conversation notes dated
    after `moment` up to `carriers_until` count only as the carrier of a summary before it.
    """
    built = {} if built is None else built
    listed = vault.sessions(since=first_day) if summaries is None else summaries
    summaries = [s for s in listed if (w := s.when) is not None and w <= moment]
    notes = [n for n in index.dated(first_day, carriers_until or moment.date()) if n.kind == "conversation"]
    by_path = {s.path: s for s in summaries}
    # Matched by moment and key, not by the strings as written: "03:00" and "03:00:00" are the same turn.
    by_stamp = {_stamp(s): s for s in summaries}
    refs: list[SessionRef] = []
    claimed: set[str] = set()
    for note in notes:
        known = built.get(note.path)
        if known is not None and known[0] == note.fields_json:
            made, session = known[1], known[2]
        else:
            made, session = summary_from_note(note), str(note.frontmatter.get("session") or "")
            if len(built) >= _BUILT_CACHE:
                built.clear()
            built[note.path] = (note.fields_json, made, session)
        if made.when is None or (made.when > moment and carriers_until is None):
            continue
        twin = by_path.get(session) or by_stamp.get(_stamp(made))
        if made.when > moment and (twin is None or twin.path in claimed):
            continue  # after the range, and carrying no summary of it
        if twin is not None and twin.path not in claimed:
            claimed.add(twin.path)
            refs.append(
                SessionRef(twin, note.path, note.title, frozenset({twin.path, note.path}), "conversation", note)
            )
        else:
            refs.append(SessionRef(made, note.path, note.title, frozenset({note.path}), "conversation", note))
    for summary in summaries:
        if summary.path not in claimed:
            title = summary.user_msg.strip() or summary.path.rsplit("/", 1)[-1].removesuffix(".md")
            refs.append(SessionRef(summary, summary.path, title, frozenset({summary.path}), "session"))
    if scope is not None and not scope.empty:
        refs = [r for r in refs if ref_in_scope(r, scope)]
    return refs


def summary_from_note(note: NoteInfo) -> SessionSummary:
    """A `SessionSummary` from a conversation note's frontmatter (its body is read only when needed)."""
    fm = note.frontmatter
    return SessionSummary(
        date=str(fm.get("date") or note.date or ""),
        user_id=str(fm.get("user_id") or ""),
        time=str(fm.get("time") or ""),
        user_msg=str(fm.get("user_msg") or ""),
        sentinel_msg=str(fm.get("sentinel_msg") or ""),
        path=note.path,
        body="",
        chat_id=str(fm.get("chat_id") or ""),
    )


_OWN_FIELDS = frozenset({"user_id", "chat_id", *COLUMN_FIELDS})


def ref_in_scope(ref: SessionRef, scope: Scope) -> bool:
    """Whether a session passes a scope (its conversation note's frontmatter answers other fields)."""
    s = ref.summary
    when = s.when
    # A replay's scope is mostly a date bound: decode the note's frontmatter only for fields a session lacks.
    needs_note = ref.note is not None and any(key not in _OWN_FIELDS for key, _ in scope.where)
    fields = {**(ref.note.frontmatter if needs_note and ref.note else {}), "user_id": s.user_id, "chat_id": s.chat_id}
    note_type = ref.note.note_type if ref.note else None
    return scope.matches(ref.carrier, ref.kind, note_type, when.date() if when else None, fields)


def _stamp(s: SessionSummary) -> tuple[dt.datetime | None, str, str]:
    return s.when, s.user_id.casefold(), s.chat_id.casefold()


def carriers(index: NoteIndex, summaries: Sequence[NoteInfo]) -> dict[str, NoteInfo]:
    """Summary path to the conversation note that carries the same exchange (its `session:` names the summary, or it
    has the same moment and session key), for the summaries that have one: recall lists the carrier, never both."""
    days = sorted({s.day for s in summaries if s.day is not None})
    if not days:
        return {}
    notes = [n for day in days for n in index.dated(day, day) if n.kind == "conversation"]
    if not notes:
        return {}
    by_session = {str(n.frontmatter.get("session") or ""): n for n in notes}
    by_stamp = {_stamp(summary_from_note(n)): n for n in notes}
    out: dict[str, NoteInfo] = {}
    for info in summaries:
        carrier = by_session.get(info.path)
        if carrier is None and info.frontmatter.get("time"):  # without a time, a day and a user say too little
            carrier = by_stamp.get(_stamp(summary_from_note(info)))
        if carrier is not None:
            out[info.path] = carrier
    return out
