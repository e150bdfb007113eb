"""What the last import saw of each session's files, in the data directory (`imports/state.json`), so a session whose
files did not change is not read again, and a session keeps its note when its title would now be another."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.atomic import write_atomic
from companion.locations import PRIVATE_FILE_MODE, private_folder


@dataclass(frozen=True)
class Seen:
    """One session as the last import left it."""

    signature: tuple[tuple[str, int, int], ...]
    """Each of its files' path, size and modification time (nanoseconds), plus the rules it was rendered with."""
    note: str
    """Its note, vault-relative."""
    session_id: str
    """The agent's id of the session."""


def signature(files: list[Path], rules: str) -> tuple[tuple[str, int, int], ...]:
    """The files' stats and the rendering rules, as compared between imports."""
    stats: list[tuple[str, int, int]] = [(rules, 0, 0)]
    for path in files:
        try:
            info = path.stat()
        except OSError:
            continue  # gone meanwhile: the signature differs, and the session is read again
        stats.append((str(path), info.st_size, info.st_mtime_ns))
    return tuple(stats)


class ImportState:
    """The sessions the imports have seen, by agent and main file."""

    def __init__(self, path: Path, seen: dict[str, Seen]) -> None:
        self.path = path
        """The JSON file in the data directory."""
        self.seen = seen
        """Key (`agent` and main file) to what was seen."""

    @classmethod
    def load(cls, path: Path) -> ImportState:
        """The state saved at `path`; empty when missing or unreadable (every session is then read again, and each
        note found by its session id, so nothing is doubled)."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            sessions = raw["sessions"]
            seen = {
                key: Seen(tuple((str(p), int(s), int(m)) for p, s, m in item["signature"]), item["note"], item["id"])
                for key, item in sessions.items()
            }
        except (OSError, ValueError, KeyError, TypeError):
            return cls(path, {})
        return cls(path, seen)

    @staticmethod
    def key(agent: str, main: Path) -> str:
        """The key of a session: its agent and main file."""
        return f"{agent}\0{main}"

    def note_of(self, agent: str, session_id: str) -> str | None:
        """The note a session was imported into, when any."""
        prefix = f"{agent}\0"
        return next((s.note for k, s in self.seen.items() if k.startswith(prefix) and s.session_id == session_id), None)

    def save(self) -> None:
        """Write the state atomically, in a private folder, readable by its owner only; not when it is unchanged."""
        private_folder(self.path.parent)
        data: dict[str, Any] = {
            "version": 1,
            "sessions": {
                key: {"signature": [list(s) for s in seen.signature], "note": seen.note, "id": seen.session_id}
                for key, seen in sorted(self.seen.items())
            },
        }
        content = json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8")
        try:
            if self.path.read_bytes() == content:
                return  # an import that changed nothing leaves every file as it was, this one too
        except OSError:
            pass
        write_atomic(self.path, content, mode=PRIVATE_FILE_MODE)
