"""What a parsed session is, whatever agent wrote it, and the streaming reader of JSONL transcripts.

A transcript is read line by line with a bound on each line, so a 200 MB file costs the memory of its longest line
and of the text kept, never of the whole file. A line that is not JSON, or not an object, is skipped with a message
naming the file and the line; a last line with no line break that does not parse is taken for one the agent is still
writing, and is read by the next import.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

MAX_LINE_BYTES = 32 * 1024 * 1024
"""The longest JSONL line read; a longer one (a huge tool output) is skipped with a message, unread."""

TurnKind = Literal["say", "tool", "summary"]


@dataclass(frozen=True)
class Turn:
    """One thing kept from a transcript: a text said, a tool call, or a compaction summary."""

    at: datetime | None
    """When it was recorded (timezone-aware), when the record says."""
    speaker: str
    """Who said it (`user`, the agent's name, `task` for a sub-agent's instructions)."""
    text: str
    """What was said; for a tool call, the tool and what it touched (`Read: src/app.py`)."""
    kind: TurnKind = "say"
    """A text said, a tool call, or a summary of what compaction dropped."""
    chain: str = ""
    """The sub-agent side chain it belongs to (empty: the session itself)."""


@dataclass
class Session:
    """A session as read from its files, before anything is redacted or written."""

    agent: str
    """`claude-code`, `codex` or `gemini`."""
    session_id: str
    """The agent's id of the session."""
    source: Path
    """The session's main file."""
    files: tuple[Path, ...] = ()
    """Every file it was read from (its sub-agents' files too)."""
    project: str = ""
    """The project's name (the working folder's name, when known)."""
    cwd: str = ""
    """The working folder."""
    branch: str = ""
    """The git branch, when recorded."""
    model: str = ""
    """The model that answered (the last one named)."""
    summary: str = ""
    """The agent's own one-line summary of the session, when it wrote one."""
    turns: list[Turn] = field(default_factory=list)
    """What was said and done, in record order (sorted by time when rendered)."""
    problems: list[str] = field(default_factory=list)
    """What could not be read, each naming the file and line."""

    def first_request(self) -> str:
        """The first thing the user asked in the session itself (not a sub-agent's instructions)."""
        return next((t.text for t in self.sorted_turns() if t.speaker == "user" and t.kind == "say"), "")

    def sorted_turns(self) -> list[Turn]:
        """The turns by time (a record without a time keeps the time of the one before it); ties keep file order."""
        last = datetime.min.replace(tzinfo=UTC)
        keyed: list[tuple[datetime, int, Turn]] = []
        for n, turn in enumerate(self.turns):
            last = turn.at or last
            keyed.append((last, n, turn))
        return [turn for _, _, turn in sorted(keyed, key=lambda k: (k[0], k[1]))]

    def started(self) -> datetime | None:
        """The earliest time any record gives."""
        times = [t.at for t in self.turns if t.at is not None]
        return min(times) if times else None

    def ended(self) -> datetime | None:
        """The latest time any record gives."""
        times = [t.at for t in self.turns if t.at is not None]
        return max(times) if times else None


class UnknownTypes:
    """Record types a parser does not know, counted per file so one message names each with its first line."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[int, int]] = {}

    def add(self, kind: str, line: int) -> None:
        """Count one record of type `kind` at `line`."""
        first, count = self._seen.get(kind, (line, 0))
        self._seen[kind] = (first, count + 1)

    def messages(self, path: Path) -> list[str]:
        """One message per unknown type."""
        return [
            f"{path}, line {first}: {count} record(s) of unknown type {kind!r} skipped (first at this line); the "
            "rest of the session was imported"
            for kind, (first, count) in sorted(self._seen.items(), key=lambda item: item[1][0])
        ]


def timestamp(value: Any) -> datetime | None:
    """An ISO 8601 time as the agents write it (`2025-11-30T11:09:33.123Z`), aware; none when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


INCOMPLETE_LINE = "the last line is incomplete (the agent may still be writing it); it is read by the next import"
"""What a transcript's unfinished last line is reported as: no damage while the agent is writing it."""


def read_jsonl(path: Path, problems: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each JSON object of a transcript with its line number; what cannot be read goes to `problems`, naming the
    file and the line, and reading goes on."""
    with path.open("rb") as handle:
        number = 0
        while True:
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                skipped = _skip_line(handle)
                problems.append(
                    f"{path}, line {number}: a record of more than {len(raw) + skipped:,} bytes (over the "
                    f"{MAX_LINE_BYTES // (1024 * 1024)} MiB bound) was skipped unread"
                )
                continue
            if not raw.strip():
                continue
            record = _parse(raw)
            if isinstance(record, dict):
                yield number, record
            elif not raw.endswith(b"\n") and record is None:
                problems.append(f"{path}, line {number}: {INCOMPLETE_LINE}")
            else:
                what = "not JSON" if record is None else "not a JSON object"
                problems.append(f"{path}, line {number}: {what}; the line was skipped")


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return None


def _skip_line(handle: Any) -> int:
    """Read past the rest of an over-long line in bounded pieces; the bytes skipped."""
    skipped = 0
    while True:
        piece = handle.readline(1024 * 1024)
        skipped += len(piece)
        if not piece or piece.endswith(b"\n"):
            return skipped


def text_of(content: Any, kinds: frozenset[str]) -> list[str]:
    """The texts of a message's content: a string, or the `text` of each block whose `type` is in `kinds`."""
    if isinstance(content, str):
        return [content] if content.strip() else []
    if not isinstance(content, list):
        return []
    out: list[str] = []
    for block in content:
        # A block with no `type` is a plain part (`{"text": ...}`, as Gemini writes them).
        typed = block.get("type", "text") if isinstance(block, dict) else None
        if isinstance(block, dict) and typed in kinds and isinstance(block.get("text"), str):
            if block["text"].strip():
                out.append(block["text"])
        elif isinstance(block, str) and block.strip():
            out.append(block)
    return out


def tool_line(name: Any, args: Any) -> str:
    """A tool call as one line: its name and what it touched (a file path, a pattern, a URL, or a command's first
    words); never its whole input, which may be a file's content."""
    tool = str(name or "tool").strip() or "tool"
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            args = {"command": args}
    if not isinstance(args, dict):
        return tool
    for key in ("file_path", "path", "absolute_path", "notebook_path", "dir_path", "directory", "url", "pattern"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return f"{tool}: {value.strip()[:200]}"
    command = args.get("command") or args.get("cmd")
    if isinstance(command, list):
        command = " ".join(str(part) for part in command)
    if isinstance(command, str) and command.strip():
        return f"{tool}: {_first_words(command)}"
    for key in ("query", "description", "prompt"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return f"{tool}: {_first_words(value, 8)}"
    return tool


def _first_words(text: str, count: int = 4) -> str:
    words = text.split()
    shown = " ".join(words[:count])[:160]
    return shown + (" …" if len(words) > count else "")
