"""Which parts of a session summary are worth recalling: the agent's boilerplate is recognised by repetition.

An agent that writes a summary per exchange also writes its chatter there: heartbeat polls answered `HEARTBEAT_OK`,
"Got it!", status replies. Nothing marks them, and their wording differs from agent to agent, but they share one
trait no real exchange has: they are written the same way again and again. So a part of a summary (the user's
message, the reply, the body) is boilerplate when its *shape* (the text with case, digits, punctuation and spacing
ignored, so `HEARTBEAT_OK 14:00` and `heartbeat ok 09:30` are one shape) occurs in at least `min_sessions`
summaries of the vault. Boilerplate is neither embedded nor searched; a summary whose user side and reply are both
boilerplate is no recall candidate at all, whatever its body holds.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

_NOT_LETTER = re.compile(r"[\W\d_]+", re.UNICODE)
_SHAPE_CHARS = 2000  # a body's opening decides its shape: a long body that repeats is repeated from its start


def shape(text: str) -> str:
    """A text's shape as a short hash: its letters' words, case folded, with everything else ignored; empty for a
    text with no letters."""
    words = _NOT_LETTER.sub(" ", text[:_SHAPE_CHARS].casefold()).strip()
    if not words:
        return ""
    return hashlib.sha1(words.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class ExchangeShapes:
    """The shapes of a summary's three parts (empty for a part with no letters)."""

    user: str
    """The user's message."""
    reply: str
    """The agent's reply."""
    body: str
    """The note's body."""


def shapes_of(user_msg: str, sentinel_msg: str, body: str) -> ExchangeShapes:
    """The shapes of a summary's parts."""
    return ExchangeShapes(shape(user_msg), shape(sentinel_msg), shape(body))


@dataclass(frozen=True)
class Boilerplate:
    """The vault's boilerplate: shapes written in at least `min_sessions` summaries (0 turns the rule off)."""

    counts: Mapping[str, int]
    """How many summaries hold each shape (in any part); shapes under the limit may be left out."""
    min_sessions: int = 5
    """From how many summaries on a shape is boilerplate."""

    def repeated(self, part: str) -> bool:
        """Whether a part's shape is boilerplate."""
        return self.min_sessions > 0 and bool(part) and self.counts.get(part, 0) >= self.min_sessions

    def kept(self, shapes: ExchangeShapes) -> str:
        """The parts of a summary recall keeps, as letters: `u` (user), `r` (reply), `b` (body), in that order;
        empty when the summary is no candidate (both sides boilerplate, or nothing with letters left)."""
        user, reply = self.repeated(shapes.user), self.repeated(shapes.reply)
        if user and reply:
            return ""
        letters = [
            letter
            for letter, part in (("u", shapes.user), ("r", shapes.reply), ("b", shapes.body))
            if part and not self.repeated(part)
        ]
        return "".join(letters)


def exchange_text(user_msg: str, sentinel_msg: str, body: str, kept: str = "urb") -> str:
    """A summary as recall reads it: the user's message, the reply and the body, each on lines of its own, with the
    parts not in `kept` left out."""
    parts = [
        text.strip()
        for letter, text in (("u", user_msg), ("r", sentinel_msg), ("b", body))
        if letter in kept and text.strip()
    ]
    return "\n\n".join(parts)
