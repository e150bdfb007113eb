"""Session summaries as typed values (seed 000) instead of raw Markdown strings.

The agent writes one summary per turn under `ops/sessions/<YYYY-MM-DD>/`; this module turns a parsed
note of that folder into a `SessionSummary`, so no caller parses frontmatter strings by hand again.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from companion.vault.dates import session_datetime
from companion.vault.notes import Note

_DATE_FOLDER = re.compile(r"(?:^|/)(\d{4}-\d{2}-\d{2})/[^/]+$")


@dataclass(frozen=True)
class SessionSummary:
    """One turn's summary, as seed 000 types it, plus the chat it belongs to (seed 001)."""

    date: str
    """The session's day, `YYYY-MM-DD` (from frontmatter, else the folder name)."""
    user_id: str
    """Who the agent was talking to."""
    time: str
    """The time of the turn as written in the note, such as `14:03`."""
    user_msg: str
    """What the user said."""
    sentinel_msg: str
    """What the agent answered."""
    path: str
    """Vault-relative path of the summary note."""
    body: str
    """The Markdown body of the note."""
    chat_id: str = ""
    """The chat within the user's sessions; empty when the agent has a single chat per user."""

    @property
    def session_key(self) -> str:
        """Seed 001's key `user_id + chat_id`: `user` alone, or `user:chat` with a chat."""
        return f"{self.user_id}:{self.chat_id}" if self.chat_id else self.user_id

    @cached_property
    def when(self) -> dt.datetime | None:
        """The turn's moment as a naive datetime (as written), or None if unreadable (parsed once: partitions
        sort thousands of sessions by it)."""
        return session_datetime(self.date, self.time)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "\n".join(_text(item) for item in value)
    return str(value)


def read_session(path: str, note: Note) -> SessionSummary:
    """A `SessionSummary` from a parsed session note; missing fields are empty strings."""
    fm = note.frontmatter
    date = _text(fm.get("date")).strip()
    if not date:
        folder = _DATE_FOLDER.search(path)
        date = folder.group(1) if folder else ""
    return SessionSummary(
        date=date,
        user_id=_text(fm.get("user_id")),
        time=_text(fm.get("time")),
        user_msg=_text(fm.get("user_msg")),
        sentinel_msg=_text(fm.get("sentinel_msg")),
        path=path,
        body=note.body,
        chat_id=_text(fm.get("chat_id")),
    )
