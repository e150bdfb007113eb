"""Gemini CLI's sessions: `~/.gemini/tmp/<project-hash>/chats/session-*.json`, one JSON document per session.

Kept: the user's messages, Gemini's answers, each tool call as one line, the session's `summary`. Left out: the
thoughts, tool results, token counts, and `info`, `error` and `warning` messages (the CLI's own notices). The whole
document must be parsed at once, so a file over `MAX_JSON_BYTES` is refused with a message rather than read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from companion.pipeline.imports.records import Session, Turn, text_of, timestamp, tool_line

AGENT = "gemini"
SPEAKER = "gemini"
MAX_JSON_BYTES = 32 * 1024 * 1024
"""The largest session file parsed (a JSON document is read whole)."""

_NOTICES = frozenset({"info", "error", "warning"})
_TEXT = frozenset({"text"})


def default_root(home: Path) -> Path:
    """Where Gemini CLI keeps its projects' chats."""
    return home / ".gemini" / "tmp"


def session_files(root: Path) -> Iterator[Path]:
    """Every session file under `root` (or `root` itself, a file)."""
    if root.is_file():
        yield root
        return
    yield from sorted(root.rglob("session-*.json"))


def read_session(path: Path) -> Session:
    """The session of one file; an unreadable or oversized one gives a session with no turns and a problem."""
    session = Session(AGENT, path.stem.removeprefix("session-"), path, files=(path,))
    session.project = _project(path)
    size = path.stat().st_size
    if size > MAX_JSON_BYTES:
        session.problems.append(
            f"{path}: {size:,} bytes, over the {MAX_JSON_BYTES // (1024 * 1024)} MiB a Gemini session file may have "
            "to be read whole; it was not imported (split the session with /chat save, or import the others)"
        )
        return session
    try:
        document = json.loads(path.read_bytes().decode("utf-8", "replace"))
    except ValueError as exc:
        session.problems.append(
            f"{path}: not a complete JSON document ({exc}); Gemini may still be writing it, it is read by the next "
            "import"
        )
        return session
    if not isinstance(document, dict):
        session.problems.append(f"{path}: not a Gemini session (expected a JSON object); skipped")
        return session
    if isinstance(document.get("sessionId"), str) and document["sessionId"]:
        session.session_id = document["sessionId"]
    if isinstance(document.get("summary"), str):
        session.summary = document["summary"].strip()
    messages = document.get("messages")
    for n, message in enumerate(messages if isinstance(messages, list) else [], 1):
        if isinstance(message, dict):
            _message(session, message, n, path)
        else:
            session.problems.append(f"{path}, message {n}: not a JSON object; skipped")
    return session


def _project(path: Path) -> str:
    """The project's folder name where the CLI recorded it (`.project_root` beside `chats/`), else its hash's start."""
    folder = path.parent.parent if path.parent.name == "chats" else path.parent
    try:
        root = (folder / ".project_root").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        root = ""
    return Path(root).name if root else f"gemini-{folder.name[:8]}"


def _message(session: Session, message: dict[str, Any], n: int, path: Path) -> None:
    kind = message.get("type")
    at = timestamp(message.get("timestamp"))
    if kind in _NOTICES:
        return
    if kind not in ("user", "gemini", "model"):
        session.problems.append(f"{path}, message {n}: unknown message type {kind!r}; skipped")
        return
    speaker = "user" if kind == "user" else SPEAKER
    session.turns.extend(Turn(at, speaker, text) for text in text_of(message.get("content"), _TEXT))
    if speaker == SPEAKER:
        if isinstance(message.get("model"), str) and message["model"]:
            session.model = message["model"]
        calls = message.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                session.turns.append(Turn(at, SPEAKER, tool_line(call.get("name"), call.get("args")), "tool"))
