"""The import's measure: `companion import` over generated Claude Code sessions, the first time, again with nothing
changed, and after one running session grew (what following an agent costs on each change)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from companion.errors import BenchError
from companion.pipeline.imports.run import ImportRequest, import_sessions

FOLDER = "Agents/{agent}/{project}"
TOOL_OUTPUT_KB = 4
"""What one tool call's output holds (read, then left out of the note): most of a real transcript's bytes."""


def _record(kind: str, session: str, n: int, content: Any, project: str) -> str:
    minute, second = divmod(n, 60)
    record = {
        "type": kind,
        "uuid": f"{session}-{n}",
        "sessionId": session,
        "timestamp": f"2026-03-10T{9 + minute // 60:02d}:{minute % 60:02d}:{second:02d}.000Z",
        "cwd": f"/home/dev/work/{project}",
        "gitBranch": "main",
        "version": "2.0.75",
        "isSidechain": False,
        "message": {"role": kind, "content": content},
    }
    return json.dumps(record) + "\n"


def _exchange(session: str, n: int, project: str) -> str:
    """One turn of a working agent: a request, a tool call, its output, and the answer."""
    ask = f"Step {n}: check why the {project} export job {n} rounds totals differently on the staging server."
    call = [{"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": f"src/{project}/job_{n}.py"}}]
    output = [{"type": "tool_result", "tool_use_id": f"t{n}", "content": f"line {n}: total = round(x, 2)\n" * 140}]
    answer = [
        {
            "type": "text",
            "text": f"Job {n} rounds with banker's rounding; staging has an older decimal context. I changed it to "
            "ROUND_HALF_UP and added a test for 0.125.",
        }
    ]
    return (
        _record("user", session, 4 * n, ask, project)
        + _record("assistant", session, 4 * n + 1, call, project)
        + _record("user", session, 4 * n + 2, output, project)
        + _record("assistant", session, 4 * n + 3, answer, project)
    )


def write_sessions(root: Path, sessions: int, turns: int) -> Path:
    """`sessions` Claude Code transcripts of `turns` exchanges each, in ten projects, under `root/projects`."""
    projects = root / "projects"
    for i in range(sessions):
        project = f"service-{i % 10}"
        folder = projects / f"-home-dev-work-{project}"
        folder.mkdir(parents=True, exist_ok=True)
        session = f"{i:08x}-0000-4000-8000-000000000000"
        with (folder / f"{session}.jsonl").open("w", encoding="utf-8") as handle:
            for n in range(turns):
                handle.write(_exchange(session, n, project))
    return projects


def import_speed(root: Path, sessions: int, turns: int) -> dict[str, Any]:
    """Import `sessions` generated sessions into an empty vault (sessions/s, MB/s of transcript read), import again
    with nothing changed (only stats), then again after one session grew by an exchange."""
    source = write_sessions(root / "claude", sessions, turns)
    vault, data = root / "vault", root / "data"
    vault.mkdir(parents=True, exist_ok=True)
    files = sorted(source.rglob("*.jsonl"))
    size = sum(path.stat().st_size for path in files)
    request = [ImportRequest("claude-code", source, FOLDER)]

    started = time.perf_counter()
    first = import_sessions(vault, data, request)
    first_s = time.perf_counter() - started
    if len(first.written) != sessions:
        raise BenchError(f"The import wrote {len(first.written)} notes of {sessions}: {first.problems}")

    started = time.perf_counter()
    again = import_sessions(vault, data, request)
    again_s = time.perf_counter() - started

    grown = files[len(files) // 2]
    with grown.open("a", encoding="utf-8") as handle:
        handle.write(_exchange(grown.stem, turns, "service-grown"))
    started = time.perf_counter()
    one = import_sessions(vault, data, request)
    one_s = time.perf_counter() - started
    notes = sum(path.stat().st_size for path in (vault / note for note in first.written))
    return {
        "sessions": sessions,
        "turns_per_session": turns,
        "transcripts_mb": round(size / 2**20, 1),
        "notes_mb": round(notes / 2**20, 1),
        "seconds": round(first_s, 2),
        "sessions_per_s": round(sessions / first_s, 1),
        "mb_per_s": round(size / 2**20 / first_s, 1),
        "again_unchanged_s": round(again_s, 3),
        "again_not_read": again.not_read,
        "one_session_grown_s": round(one_s, 3),
        "one_session_grown_written": len(one.written),
    }
