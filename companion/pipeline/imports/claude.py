"""Claude Code's transcripts: `~/.claude/projects/<project>/<session-id>.jsonl`, one JSON record per line.

Kept: the user's messages, the assistant's text, each tool call as one line, the compaction summaries (a user record
marked `isCompactSummary`) and the session's own `summary` record (its title). Side chains (`isSidechain`: a
sub-agent's task) are kept under their agent. Left out: tool results, thinking, file-history snapshots, queue and
progress records, system records and meta messages (command output, caveats), none of which is something said.
Sub-agents written to files of their own (`<session-id>/subagents/agent-*.jsonl`, or `agent-*.jsonl` beside the
session naming it in `sessionId`) are read with their session.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from companion.pipeline.imports.records import Session, Turn, UnknownTypes, read_jsonl, text_of, timestamp, tool_line

AGENT = "claude-code"
SPEAKER = "claude"

_SKIPPED = frozenset({"file-history-snapshot", "queue-operation", "progress", "system", "attachment"})
_TEXT = frozenset({"text"})
# User messages Claude Code writes itself around a slash command: what it ran and printed, not what was said.
_META_PREFIXES = ("<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>")


def default_root(home: Path) -> Path:
    """Where Claude Code keeps its projects' transcripts."""
    return home / ".claude" / "projects"


def session_files(root: Path) -> Iterator[Path]:
    """The main transcript of each session under `root` (a project folder, the projects folder, or one file)."""
    if root.is_file():
        yield root
        return
    for path in sorted(root.rglob("*.jsonl")):
        if path.name.startswith("agent-") or "subagents" in path.parts[len(root.parts) :]:
            continue
        yield path


def side_files(main: Path, session_id: str) -> list[Path]:
    """The sub-agent transcripts of a session: its `subagents/` folder, and `agent-*.jsonl` beside it naming it."""
    found = sorted((main.parent / main.stem / "subagents").glob("*.jsonl"))
    for path in sorted(main.parent.glob("agent-*.jsonl")):
        if _names_session(path, session_id):
            found.append(path)
    return found


def _names_session(path: Path, session_id: str) -> bool:
    try:
        with path.open("rb") as handle:
            for _ in range(20):
                line = handle.readline(1024 * 1024)
                if not line:
                    return False
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and "sessionId" in record:
                    return bool(record["sessionId"] == session_id)
    except OSError:
        return False
    return False


def read_session(main: Path) -> Session:
    """The session of a main transcript, its sub-agents' files folded in."""
    session = Session(AGENT, main.stem, main)
    _read_file(session, main, chain=None)
    sides = side_files(main, session.session_id)
    for path in sides:
        _read_file(session, path, chain=path.stem)
    session.files = (main, *sides)
    if not session.project:
        session.project = main.parent.name.rsplit("-", 1)[-1] or main.parent.name
    return session


def _read_file(session: Session, path: Path, chain: str | None) -> None:
    unknown = UnknownTypes()
    for number, record in read_jsonl(path, session.problems):
        kind = record.get("type")
        if kind == "summary":
            if isinstance(record.get("summary"), str) and record["summary"].strip():
                session.summary = record["summary"].strip()
            continue
        if kind in _SKIPPED:
            continue
        if kind not in ("user", "assistant"):
            unknown.add(str(kind), number)
            continue
        _context(session, record)
        side = chain if chain is not None else _side_chain(record)
        if kind == "user":
            session.turns.extend(_user(record, side))
        else:
            session.turns.extend(_assistant(session, record, side))
    session.problems.extend(unknown.messages(path))


def _side_chain(record: dict[str, Any]) -> str:
    if record.get("isSidechain") is not True:
        return ""
    agent_id = record.get("agentId")
    return f"agent-{agent_id}" if isinstance(agent_id, str) and agent_id else "side chain"


def _context(session: Session, record: dict[str, Any]) -> None:
    cwd = record.get("cwd")
    if isinstance(cwd, str) and cwd and not session.cwd:
        session.cwd = cwd
        session.project = Path(cwd).name or cwd
    branch = record.get("gitBranch")
    if isinstance(branch, str) and branch:
        session.branch = branch


def _user(record: dict[str, Any], chain: str) -> list[Turn]:
    at = timestamp(record.get("timestamp"))
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    texts = text_of(content, _TEXT)
    if record.get("isCompactSummary") is True:
        return [Turn(at, "summary", text, "summary", chain) for text in texts]
    if record.get("isMeta") is True or "toolUseResult" in record:
        return []
    texts = [t for t in texts if not t.lstrip().startswith(_META_PREFIXES)]
    speaker = "task" if chain else "user"
    return [Turn(at, speaker, text, "say", chain) for text in texts]


def _assistant(session: Session, record: dict[str, Any], chain: str) -> list[Turn]:
    at = timestamp(record.get("timestamp"))
    message = record.get("message")
    if not isinstance(message, dict):
        return []
    model = message.get("model")
    if isinstance(model, str) and model and not model.startswith("<") and not chain:
        session.model = model
    content = message.get("content")
    if isinstance(content, str):
        return [Turn(at, SPEAKER, content, "say", chain)] if content.strip() else []
    turns: list[Turn] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            turns.append(Turn(at, SPEAKER, block["text"], "say", chain))
        elif block.get("type") == "tool_use":
            turns.append(Turn(at, SPEAKER, tool_line(block.get("name"), block.get("input")), "tool", chain))
    return turns
