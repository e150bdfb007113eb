"""Temporal recall: recent sessions by time, not by meaning, and the recap questions that need them.

"What did we talk about recently?" shares no words or meaning with a ski trip discussed yesterday, so semantic
search cannot find it. This module lists completed sessions newest first (`recent_items`), detects recap
questions (`is_recap`) and scores how much a question leans on recency (`temporal_recency`); the recall engine
boosts the temporal tier's budget, includes summaries and sorts by time when either fires.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from companion.secrets import redact_text
from companion.vault.sessions import SessionSummary
from companion.words import STOPWORDS

RECAP_PATTERNS = frozenset(
    {
        r"\brecap\b",
        r"\bcatch me up\b",
        r"\bsum(?:mary|marise|marize) of (?:our|the) (?:recent|last|latest)\b",
        r"\bwhat (?:did|have) (?:we|i|you) (?:talk(?:ed)?|discuss(?:ed)?|chat(?:ted)?|cover(?:ed)?) about\b",
        # To discuss and to cover take their topic directly: the bare question alone is a recap here ("what did we
        # discuss?"); with a topic ("what did we discuss with the landlord?") it asks for that topic, and with a
        # period ("what did we discuss last week?") for the period's sessions (`companion.recall.recap`).
        r"\bwhat (?:did|have) (?:we|i|you) (?:discuss(?:ed)?|cover(?:ed)?)(?: so far| recently| lately)?\s*[?.!]*\s*$",
        r"\bwhat (?:did|have) we (?:been )?(?:talking|discussing|working on)\b",
        r"\bwhere (?:did|were) we\b",
        r"\bwhere we left off\b",
        r"\blast time\b",
        r"\blast (?:conversation|session|chat)\b",
        r"\bprevious (?:conversation|session|chat)s?\b",
        r"\bremind me what\b",
    }
)
"""Explicit recap requests (a frozenset of patterns), matched case-insensitively."""

_RECAP = re.compile("|".join(f"(?:{p})" for p in sorted(RECAP_PATTERNS)), re.IGNORECASE)

# Words that lean on time; their weights sum to the recency signal, capped at 1.
_RECENCY_WORDS = {
    "recently": 0.6,
    "recent": 0.5,
    "lately": 0.6,
    "latest": 0.4,
    "last": 0.3,
    "earlier": 0.3,
    "yesterday": 0.6,
    "today": 0.5,
    "tonight": 0.5,
    "this morning": 0.6,
    "this week": 0.5,
    "so far": 0.3,
    "just now": 0.6,
    "ago": 0.3,
}
_WORD = re.compile(r"\b(" + "|".join(re.escape(w) for w in sorted(_RECENCY_WORDS, key=len, reverse=True)) + r")\b")


@dataclass(frozen=True)
class TemporalItem:
    """A recent session as the always-on tier shows it: a title and a time, a summary when boosted."""

    path: str
    """Vault-relative path of the note that carries the session (the conversation note when there is one)."""
    title: str
    """What the session was about: the note's title or the user's first message."""
    when: dt.datetime
    """When the session took place (naive local time)."""
    user_id: str
    """Who the session was with."""
    chat_id: str
    """Which chat."""
    summary: str
    """A short summary (the user's message and the agent's answer), empty when not asked for."""


def is_recap(text: str) -> bool:
    """True for an explicit recap question ("what did we talk about recently", "recap", "last time")."""
    return _RECAP.search(text) is not None


def temporal_recency(text: str) -> float:
    """How much a question leans on recency, 0..1 (the `temporal_recency` signal)."""
    lowered = text.lower()
    return min(1.0, sum(_RECENCY_WORDS[m.group(1)] for m in _WORD.finditer(lowered)))


def recap_boost(text: str) -> bool:
    """The trigger for the recap budget boost: a recap pattern, or `temporal_recency > 0.5`."""
    return is_recap(text) or temporal_recency(text) > 0.5


# Words of recap questions themselves: what is left once they and stopwords are gone is the question's topic.
_RECAP_VOCABULARY = frozenset(
    [
        "recap",
        "recaps",
        "catch",
        "talk",
        "talked",
        "talking",
        "discuss",
        "discussed",
        "discussing",
        "chat",
        "chatted",
        "chatting",
        "cover",
        "covered",
        "conversation",
        "conversations",
        "session",
        "sessions",
        "last",
        "time",
        "times",
        "previous",
        "recently",
        "recent",
        "lately",
        "latest",
        "remind",
        "said",
        "say",
        "left",
        "off",
        "summary",
        "summarise",
        "summarize",
        "please",
        "us",
        "again",
        "tell",
        "everything",
        "things",
        "stuff",
        "earlier",
        "today",
        "yesterday",
        "week",
        "days",
        "hours",
        "ago",
        "lot",
        "quick",
        "quickly",
    ]
)
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def topic_words(text: str) -> list[str]:
    """The words of a question that say what it is about (neither recap wording nor stopwords)."""
    return [w for w in _TOKEN.findall(text.lower()) if w not in STOPWORDS and w not in _RECAP_VOCABULARY]


def is_pure_recap(text: str) -> bool:
    """A recap with no topic ("what did we talk about recently?"): answered by time alone, newest first.

    "Remind me what we said last time about the boiler" is a recap wording around a topic; ranking it by time
    would bury the boiler under whatever came last, so it is ranked by relevance (the recap boost still widens
    the temporal tier).
    """
    return recap_boost(text) and len(topic_words(text)) <= 1


def recent_items(
    sessions: Iterable[tuple[SessionSummary, str, str]],
    moment: dt.datetime,
    *,
    hours: float = 48,
    limit: int = 10,
    timeout_minutes: int = 30,
    summaries: bool = False,
) -> list[TemporalItem]:
    """Completed sessions of the last `hours` before `moment`, newest first (`recall_recent`).

    Each input is (session, carrier path, title). A session counts as completed once `timeout_minutes` of
    inactivity have passed since it started (the session inactivity timeout); sessions after `moment` are left out.
    """
    cutoff = moment - dt.timedelta(hours=hours)
    done_before = moment - dt.timedelta(minutes=timeout_minutes)
    picked: list[TemporalItem] = []
    for session, carrier, title in sessions:
        when = session.when
        if when is None or when < cutoff or when > done_before:
            continue
        picked.append(
            TemporalItem(
                path=carrier,
                title=title,
                when=when,
                user_id=session.user_id,
                chat_id=session.chat_id,
                summary=summarise(session) if summaries else "",
            )
        )
    picked.sort(key=lambda item: (item.when, item.path), reverse=True)
    return picked[:limit]


def summarise(session: SessionSummary, width: int = 240) -> str:
    """One line for a session: "the user's message → the agent's answer", else the body's start; redacted (every
    reader of these lines is an agent or the command line), before the cut, which could end inside a secret."""
    parts = [p.strip() for p in (session.user_msg, session.sentinel_msg) if p.strip()]
    text = redact_text(" → ".join(parts) if parts else " ".join(session.body.split()))
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def temporal_json(t: TemporalItem) -> dict[str, Any]:
    """A temporal item as JSON."""
    return {
        "path": t.path,
        "title": t.title,
        "when": t.when.isoformat(timespec="minutes"),
        "user_id": t.user_id,
        "chat_id": t.chat_id,
        "summary": t.summary,
    }
