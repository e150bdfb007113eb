"""Recap questions: the sessions of the period a question names, and the recent sessions listed by time.

"What did we talk about last week / yesterday / in March / on 3 November?" asks for the sessions of that period.
Meaning cannot find them (a ski trip shares no word with "last week"), and a note that happens to say "last week"
must not come before them, so such a question lists the period's sessions first, newest first, each with its
one-line exchange (the user's message → the reply), then the other matches as ranked.

Which questions: a question naming a period (`find_date_range`) that is worded as a recap ("what did we talk about",
"recap", "what did we say", "what happened", see `is_recap` and `_PERIOD_RECAP`), or that is only about time once the
period's words are left out ("yesterday?"). A question that only leans on time around a topic ("the boiler
yesterday") stays ranked by meaning, with the date boost.

Which sessions: session summaries, conversation notes and imported agents' sessions, one entry per session (the
conversation note that carries a summary stands for both, see `companion.recall.sessionrefs`), from the period's
first day to the end of its last, never after the question's moment, within the question's scope. At most a bound
are listed (`recent_limit * 2` in a recall, the `limit` of `recall_recent`); how many more there were is counted.

With a topic ("what did we say about the boiler last week?"): the period's sessions about the topic come first
(those the meaning ranking found in its order, then those holding the topic's words, newest first), then the
period's other sessions, then the other matches. The period is what the question asks about and the topic
orders it: a session about the boiler last week answers it best, another session of last week still answers "what
did we say last week", and a note about the boiler from another month answers neither. It also keeps a word taken
for a topic that is none ("last week, Sentinel?") from burying the period under notes that merely share a word: it
can only reorder the period's sessions. A session is about the topic when its title or exchange holds one of the
topic's words (or a longer form of it: "boiler" in "boilers"), or when the meaning ranking found it a match.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from companion.errors import NoteError
from companion.recall.dates import DateRange
from companion.recall.results import RecallItem, Tier
from companion.recall.sessionrefs import SessionRef
from companion.recall.temporal import TemporalItem, is_recap, recap_boost, topic_words
from companion.secrets import redact_text
from companion.vault.dates import session_datetime
from companion.vault.reader import ObsidianVault
from companion.words import one_line

EXCHANGE_CHARS = 240
"""Longest one-line exchange of a listed session."""
USER_CHARS = 110
"""Longest share of the user's message in that line, so the reply always shows."""

# Recap wordings that only read as a recap with a period beside them ("what happened last week?").
_PERIOD_RECAP = re.compile(
    # "What did Maria and I talk about last week": the user may name who else was there.
    r"\bwhat (?:did|have|do) (?:[\w'-]+ and )?(?:we|i|you) (?:say|said|do|done|decide|decided|discuss|discussed|cover"
    r"|covered)\b"
    r"|\bwhat (?:did|have) [\w'-]+ and (?:we|i|you) (?:talk(?:ed)?|chat(?:ted)?) about\b"
    r"|\bwhat (?:was|were) (?:we|i|you) (?:saying|doing|talking|discussing)\b"
    r"|\bwhat happened\b",
    re.IGNORECASE,
)
_NOT_TOPIC = frozenset({"happened", "decide", "decided", "done", "doing", "saying", "month", "months", "weekend"})
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
# A turn of a conversation note: `**alice:** text` or `**alice**: text` (the indexer's turns, the import's notes).
_TURN = re.compile(r"^\s*(?:[-*]\s+)?(?:\*\*|__)(?P<who>[^*_\n:]{1,40}?)(?::(?:\*\*|__)|(?:\*\*|__):)\s*(?P<said>.*)$")
_NOT_PROSE = re.compile(r"#.*|(?:!\[\[[^\]]*\]\]\s*)+|-{3,}|%%.*%%|→ .*")


@dataclass(frozen=True)
class Listed:
    """One session of a period, as listed."""

    item: TemporalItem
    """Its time, people and one-line exchange (`summary`)."""
    ref: SessionRef
    """The session (its summary, the note carrying it, every note standing for it)."""


@dataclass(frozen=True)
class PeriodListing:
    """The sessions of a period, in the order a recap lists them."""

    period: DateRange
    """The period."""
    listed: tuple[Listed, ...]
    """The sessions listed: about the topic first, then the others, each part newest first."""
    more: int
    """Sessions of the period past the bound, not listed."""
    topic: tuple[str, ...] = ()
    """The question's topic words (empty for a question about time alone)."""

    @property
    def items(self) -> tuple[TemporalItem, ...]:
        """The listed sessions as temporal items."""
        return tuple(entry.item for entry in self.listed)

    @property
    def paths(self) -> frozenset[str]:
        """Every note standing for a listed session (a summary and its conversation note)."""
        return frozenset(p for entry in self.listed for p in entry.ref.paths)


def recap_period(query: str, date_range: DateRange | None) -> DateRange | None:
    """The period whose sessions the question asks for, or None when it is no recap of a period (see the module)."""
    if date_range is None:
        return None
    if is_recap(query) or _PERIOD_RECAP.search(query):
        return date_range
    return date_range if recap_boost(query) and not topic_of(query, date_range) else None


def topic_of(query: str, date_range: DateRange | None) -> tuple[str, ...]:
    """What a recap is about: its words once the period's, the recap wording's and stopwords are left out."""
    rest = query.replace(date_range.phrase, " ") if date_range is not None else query
    return tuple(w for w in topic_words(rest) if w not in _NOT_TOPIC)


def list_period(
    refs: Iterable[SessionRef],
    period: DateRange,
    vault: ObsidianVault,
    limit: int,
    *,
    topic: Sequence[str] = (),
    matches: Iterable[str] = (),
) -> PeriodListing:
    """The sessions of `refs` inside `period`, at most `limit` listed with their exchange: with a topic, those
    among `matches` first in that order (the meaning ranking's), then those holding its words, then the rest, each
    newest first; without one, all newest first."""
    inside = [r for r in refs if (w := r.summary.when) is not None and period.contains(w.date())]
    inside.sort(key=lambda r: (r.summary.when or dt.datetime.min, r.carrier), reverse=True)
    if topic:
        # The sessions the meaning ranking found come in its order: "what happened to John's job in August" is
        # answered by the session about it, not by the newest one that names John.
        rank = {path: n for n, path in enumerate(matches)}
        found = sorted(
            (r for r in inside if r.paths & rank.keys()), key=lambda r: min(rank[p] for p in r.paths & rank.keys())
        )
        first = {r.carrier for r in found}  # carriers, not refs: comparing frozen values field by field is O(n^2)
        holding = [r for r in inside if r.carrier not in first and _holds(r, topic)]
        first.update(r.carrier for r in holding)
        inside = found + holding + [r for r in inside if r.carrier not in first]
    shown = inside[:limit]
    listed = tuple(Listed(_temporal(r, exchange(r, vault)), r) for r in shown)
    return PeriodListing(period, listed, len(inside) - len(shown), tuple(topic))


def period_first(
    listing: PeriodListing, hot_paths: Iterable[str], matched: Sequence[RecallItem], floor: float
) -> list[RecallItem]:
    """A recap's results: the period's sessions as listed (a hot one labelled hot; one the ranking found a match
    keeps its score), then the other results as ranked."""
    hot = set(hot_paths)
    scored = {i.path: i for i in matched if i.explanation is not None and i.matches(floor)}
    first: list[RecallItem] = []
    for entry in listing.listed:
        tier: Tier = "hot" if entry.item.path in hot else "temporal"
        found = scored.get(entry.item.path)
        first.append(replace(found, tier=tier) if found is not None else _session_item(entry.ref, tier))
    paths = listing.paths
    return first + [i for i in matched if i.path not in paths]


def latest_first(
    hot: Sequence[SessionRef], temporal: Sequence[TemporalItem], matched: Sequence[RecallItem]
) -> list[RecallItem]:
    """A recap with no topic and no period: the recent sessions (hot ones labelled hot), newest first, then the
    matches."""
    when: dict[str, dt.datetime] = {t.path: t.when for t in temporal}
    for ref in hot:
        stamp = ref.summary.when or session_datetime(ref.summary.date, ref.summary.time)
        if stamp is not None:
            when[ref.carrier] = stamp
    latest = [_session_item(r, "hot") for r in hot] + [
        RecallItem(
            t.path, t.title, "temporal", 0.0, "conversation", "conversation", t.when.date().isoformat(), "", None
        )
        for t in temporal
    ]
    latest.sort(key=lambda i: (when.get(i.path, dt.datetime.min), i.path), reverse=True)
    paths = {i.path for i in latest}
    return latest + [i for i in matched if i.path not in paths]


def exchange(ref: SessionRef, vault: ObsidianVault, width: int = EXCHANGE_CHARS) -> str:
    """A session on one line, redacted: "the user's message → the reply", from the summary's or the note's
    properties, else from the note's first turns (an imported session's), else the start of its text."""
    s = ref.summary
    user, reply = s.user_msg.strip(), s.sentinel_msg.strip()
    body = ""
    if not (user and reply):
        body = s.body or _body(vault, ref.carrier)
        said = _first_turns(body)
        user, reply = user or said[0], reply or said[1]
    # Each part is redacted whole before it is cut: a cut could leave a secret no rule recognises.
    parts = [one_line(redact_text(p), USER_CHARS if n == 0 and reply else width) for n, p in enumerate((user, reply))]
    text = " → ".join(p for p in parts if p)
    if not text:
        prose = [line for line in body.splitlines() if line.strip() and not _NOT_PROSE.fullmatch(line.strip())]
        text = redact_text(" ".join(prose[:8]))
    return one_line(text, width)


def session_line(item: TemporalItem) -> str:
    """A listed session on one line: its day and time, who and which chat, and its exchange."""
    who = f"{item.user_id}/{item.chat_id}" if item.chat_id else item.user_id
    said = item.summary or item.title
    return " ".join(part for part in (f"{item.when:%Y-%m-%d %H:%M}", who, said) if part)


def _holds(ref: SessionRef, topic: Sequence[str]) -> bool:
    s = ref.summary
    words = _TOKEN.findall(" ".join((ref.title, s.user_msg, s.sentinel_msg)).casefold())
    return any(word.startswith(t) for t in topic for word in words)


def _first_turns(body: str) -> tuple[str, str]:
    """The first thing said in a conversation note and the first answer by someone else."""
    first: tuple[str, str] | None = None
    for line in body.splitlines():
        turn = _TURN.match(line)
        if turn is None or not turn["said"].strip() or turn["said"].lstrip().startswith("→"):
            continue
        who = turn["who"].strip().casefold()
        if first is None:
            first = (who, turn["said"])
        elif who != first[0]:
            return first[1], turn["said"]
    return (first[1], "") if first is not None else ("", "")


def _body(vault: ObsidianVault, path: str) -> str:
    try:
        return vault.read_note(path).body
    except NoteError as exc:
        vault.problems.append((exc.path, exc.reason))
        return ""


def _temporal(ref: SessionRef, said: str) -> TemporalItem:
    s = ref.summary
    assert s.when is not None  # listed sessions are placed in their period by it
    return TemporalItem(ref.carrier, ref.title, s.when, s.user_id, s.chat_id, said)


def _session_item(ref: SessionRef, tier: Tier) -> RecallItem:
    note_type = ref.note.note_type if ref.note is not None else None
    return RecallItem(ref.carrier, ref.title, tier, 0.0, ref.kind, note_type, ref.summary.date, "", None)
