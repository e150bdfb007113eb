"""Codex CLI's transcripts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` (`~/.codex` by default).

Each line is `{"timestamp", "type", "payload"}`. Kept: `session_meta` (id, working folder, git branch),
`turn_context` (the model), messages of the user and the assistant, each tool call (`function_call`,
`custom_tool_call`, `local_shell_call`, `web_search_call`) as one line, and `compacted` summaries. Left out: tool
output, reasoning, ghost snapshots and every `event_msg` (token counts, and copies of the messages already kept), as
are the instructions and environment Codex sends as user messages. Older transcripts, whose lines are the items
themselves with a first line of session metadata, are read too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from companion.pipeline.imports.records import Session, Turn, UnknownTypes, read_jsonl, text_of, timestamp, tool_line

AGENT = "codex"
SPEAKER = "codex"

_TEXT = frozenset({"input_text", "output_text", "text"})
_TOOLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "web_search_call"})
_SKIPPED_ITEMS = frozenset(
    {"function_call_output", "custom_tool_call_output", "reasoning", "ghost_snapshot", "compaction"}
)
_SKIPPED = frozenset({"event_msg", "state"})
# What Codex sends as the user's first messages: the repository's instructions and the shell's environment.
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>")


def default_root(home: Path, environ: Mapping[str, str]) -> Path:
    """Where Codex keeps its sessions: `$CODEX_HOME/sessions`, `~/.codex/sessions` without it."""
    codex_home = environ.get("CODEX_HOME")
    base = Path(codex_home).expanduser() if codex_home else home / ".codex"
    return base / "sessions"


def session_files(root: Path) -> Iterator[Path]:
    """Every rollout file under `root` (or `root` itself, a file)."""
    if root.is_file():
        yield root
        return
    yield from sorted(root.rglob("rollout-*.jsonl"))


def read_session(path: Path) -> Session:
    """The session of one rollout file."""
    session = Session(AGENT, path.stem.removeprefix("rollout-"), path, files=(path,))
    unknown = UnknownTypes()
    for number, record in read_jsonl(path, session.problems):
        at = timestamp(record.get("timestamp"))
        kind = record.get("type")
        payload = record.get("payload")
        if not isinstance(payload, dict):
            # The older layout: the line is the item itself, the first one the session's metadata.
            if kind is None and "id" in record and number <= 2:
                _meta(session, record)
                continue
            payload, kind = record, "response_item"
        if kind == "session_meta":
            _meta(session, payload)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str) and payload["model"]:
                session.model = payload["model"]
        elif kind == "compacted":
            message = payload.get("message")
            if isinstance(message, str) and message.strip():
                session.turns.append(Turn(at, "summary", message, "summary"))
        elif kind == "response_item":
            _item(session, payload, at, number, unknown)
        elif kind in _SKIPPED or record.get("record_type") == "state":
            continue
        else:
            unknown.add(str(kind), number)
    session.problems.extend(unknown.messages(path))
    if not session.project:
        session.project = Path(session.cwd).name if session.cwd else "codex"
    return session


def _meta(session: Session, payload: dict[str, Any]) -> None:
    if isinstance(payload.get("id"), str) and payload["id"]:
        session.session_id = payload["id"]
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd:
        session.cwd = cwd
        session.project = Path(cwd).name or cwd
    git = payload.get("git")
    if isinstance(git, dict) and isinstance(git.get("branch"), str):
        session.branch = git["branch"]


def _item(session: Session, item: dict[str, Any], at: Any, number: int, unknown: UnknownTypes) -> None:
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        texts = text_of(item.get("content"), _TEXT)
        if role == "user":
            texts = [t for t in texts if not t.lstrip().startswith(_INJECTED)]
            session.turns.extend(Turn(at, "user", t) for t in texts)
        elif role == "assistant":
            session.turns.extend(Turn(at, SPEAKER, t) for t in texts)
        return  # developer and system messages are the agent's instructions, not the conversation
    if kind in _TOOLS:
        name = item.get("name") or ("shell" if kind == "local_shell_call" else "web_search")
        args = item.get("arguments") or item.get("input") or item.get("action") or {}
        session.turns.append(Turn(at, SPEAKER, tool_line(name, args), "tool"))
        return
    if kind not in _SKIPPED_ITEMS:
        unknown.add(f"response_item/{kind}", number)
