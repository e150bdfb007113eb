"""Agents' append-only session logs, `history.jsonl`: one JSON object a line with at least `id`, `ts` and `agent`.

Reading never loses a byte: every line is kept exactly as it was (`Entry.raw`, `BadLine.raw`), a line that is not a
valid entry is reported with its file and line number and stays in the log, and a last line without its newline
(the recorder may be writing it right now) is left out of the read, so a rewrite copies it over untouched.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from companion.atomic import write_atomic
from companion.errors import ConfigError, HistoryError
from companion.specs import SourceConfig
from companion.vault.paths import inside_vault


@dataclass(frozen=True)
class Entry:
    """One session history entry."""

    id: str
    """The entry's id, unique within its log."""
    ts: datetime
    """When it was recorded (always timezone-aware)."""
    agent: str
    """The `agent` field of the entry."""
    data: dict[str, Any]
    """The whole JSON object, every field as it is."""
    raw: bytes
    """The line's exact bytes, without its newline."""


@dataclass(frozen=True)
class BadLine:
    """A line that is not a valid entry: reported, and kept in the log byte for byte."""

    line: int
    """1-based line number."""
    raw: bytes
    """The line's exact bytes, without its newline."""
    reason: str
    """Why it is not an entry (empty for a blank line, which is kept but not reported)."""


@dataclass(frozen=True)
class HistoryLog:
    """One log as read: its lines in order, and how many bytes of the file the read covered."""

    path: Path
    """The log file."""
    agent: str
    """The agent the source path names."""
    lines: tuple[Entry | BadLine, ...]
    """Every whole line, in file order."""
    size: int
    """Bytes read: up to and including the last newline; anything after it is a line still being written."""
    length: int = 0
    """How many bytes the file had when read (including an unfinished last line)."""
    digest: str = ""
    """The SHA-256 (hex) of the file's bytes as read, for the audit log."""
    identity: tuple[int, int] = (0, 0)
    """The file's device and inode when read, to notice it being replaced (rotated) during a run."""
    notes: bool = False
    """True when the entries are the vault's session notes (`companion.pipeline.sessionnotes`), `path` their folder."""

    @property
    def entries(self) -> tuple[Entry, ...]:
        """The valid entries, in file order."""
        return tuple(line for line in self.lines if isinstance(line, Entry))

    @property
    def problems(self) -> tuple[str, ...]:
        """One message per bad line, naming the file and line."""
        if self.notes:
            return tuple(line.reason for line in self.lines if isinstance(line, BadLine))
        return tuple(
            f"{self.path}, line {line.line}: {line.reason}; the line is kept in the log"
            for line in self.lines
            if isinstance(line, BadLine) and line.reason
        )


@dataclass(frozen=True)
class Source:
    """One agent's log found on disk."""

    agent: str
    """The name `{agent}` matched (or `session_notes` named)."""
    path: Path
    """The log file (or the session notes' folder)."""
    notes: bool = False
    """True for the vault's session notes, one entry per note."""
    origin: str = ""
    """The config's name for where it was found (its path pattern, or `session_notes`): stable however the vault is
    reached, so it can tell the entries of two sources apart."""


def parse_entry(raw: bytes, shared: dict[str, str] | None = None) -> Entry:
    """One line as an entry; `ValueError` saying what is wrong otherwise. Long strings equal to one in `shared` are
    replaced by it (and added to it): a log repeats its agent's system prompt in every entry."""
    try:
        data = json.loads(raw.decode("utf-8"))
        if shared is not None:
            data = _share(data, shared)
    except RecursionError:
        raise ValueError("nested too deeply to read (hundreds of levels)") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    for name in ("id", "ts", "agent"):
        if not isinstance(data.get(name), str) or not data[name]:
            raise ValueError(f"'{name}' is missing or not a non-empty string")
    try:
        ts = datetime.fromisoformat(data["ts"])
    except ValueError:
        raise ValueError(f"'ts' {data['ts']!r} is not an ISO-8601 moment") from None
    if ts.tzinfo is None or ts.utcoffset() is None:
        # A moment without a zone is ambiguous by hours; guessing could drop or keep the wrong entries.
        raise ValueError(f"'ts' {data['ts']!r} has no time zone (add Z or +00:00)")
    return Entry(id=data["id"], ts=ts, agent=data["agent"], data=data, raw=raw)


_SHARED_CHARS = 1024


def _share(value: Any, shared: dict[str, str]) -> Any:
    if isinstance(value, str):
        return shared.setdefault(value, value) if len(value) >= _SHARED_CHARS else value
    if isinstance(value, list):
        return [_share(item, shared) for item in value]
    if isinstance(value, dict):
        return {key: _share(item, shared) for key, item in value.items()}
    return value


def _parse(raws: Iterable[bytes]) -> tuple[Entry | BadLine, ...]:
    """Whole lines (each with its newline) as entries and bad lines, in order."""
    lines: list[Entry | BadLine] = []
    seen: dict[str, int] = {}
    shared: dict[str, str] = {}
    for number, line in enumerate(raws, start=1):
        raw = line[:-1]
        if not raw.strip():
            lines.append(BadLine(number, raw, ""))
            continue
        try:
            entry = parse_entry(raw, shared)
        except ValueError as exc:
            lines.append(BadLine(number, raw, str(exc)))
            continue
        if entry.id in seen:
            # Processors address entries by id: a second entry with the same id is kept but never touched.
            lines.append(BadLine(number, raw, f"id {entry.id!r} is used already on line {seen[entry.id]}"))
            continue
        seen[entry.id] = number
        lines.append(entry)
    return tuple(lines)


def read_log(path: Path, agent: str) -> HistoryLog:
    """Read one log, a line at a time (a 400 MB log is never held twice); `HistoryError` when the file cannot be read
    at all."""
    digest = hashlib.sha256()
    size = length = 0

    def lines(handle: BinaryIO) -> Iterator[bytes]:
        nonlocal size, length
        for line in handle:
            digest.update(line)
            length += len(line)
            if not line.endswith(b"\n"):
                return  # the recorder is writing this one now: a rewrite copies it over untouched
            size += len(line)
            yield line

    try:
        with path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            parsed = _parse(lines(handle))
    except OSError as exc:
        raise HistoryError(f"{path}: cannot read the history log ({exc.strerror or exc})") from exc
    return HistoryLog(
        path=path,
        agent=agent,
        lines=parsed,
        size=size,
        length=length,
        digest=digest.hexdigest(),
        identity=(info.st_dev, info.st_ino),
    )


def serialize(data: dict[str, Any]) -> bytes:
    """An entry's JSON as one line's bytes (for entries a processor rewrote)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def find_sources(
    vault_root: Path, sources: tuple[SourceConfig, ...], sessions_folder: str = "ops/sessions"
) -> list[Source]:
    """Every log the configured paths match, `{agent}` standing for one path part, and the session notes' folder when
    a source names it and it exists; sorted by agent, then path."""
    found: dict[Path, Source] = {}
    named = {s.session_notes for s in sources if s.session_notes is not None}
    if len(named) > 1:
        raise ConfigError(
            "session_history.sources: the vault's session notes are named for more than one agent "
            f"({', '.join(sorted(named))}); they are one folder, so name one agent"
        )
    for source in sources:
        if source.session_notes is not None:
            folder = vault_root / sessions_folder.strip("/")
            if not inside_vault(vault_root, folder):
                raise ConfigError(
                    f"sessions.folder {sessions_folder!r} leads out of the vault (or into a symlink loop), so its "
                    "notes are not processed; name a folder inside the vault"
                )
            if folder.is_dir():
                found.setdefault(folder, Source(source.session_notes, folder, notes=True, origin="session_notes"))
            continue
        pattern = source.path
        assert pattern is not None
        base = Path(pattern) if Path(pattern).is_absolute() else vault_root / pattern
        parts = base.parts
        # Walk the fixed prefix, then glob the rest with `{agent}` as `*` and read the names back with a regex.
        fixed = next(i for i, part in enumerate(parts) if "{agent}" in part)
        root = Path(*parts[:fixed])
        rest = "/".join(parts[fixed:])
        matcher = _matcher(parts[fixed:])
        for path in sorted(root.glob(rest.replace("{agent}", "*"))):
            if not path.is_file():
                continue
            match = matcher.fullmatch(path.relative_to(root).as_posix())
            if match is not None:
                found.setdefault(path, Source(match.group("agent"), path, origin=pattern))
    return sorted(found.values(), key=lambda s: (s.agent, str(s.path)))


def _matcher(parts: tuple[str, ...]) -> re.Pattern[str]:
    """A regex for the path parts after the fixed prefix: the first `{agent}` captures, later ones must repeat it."""
    out: list[str] = []
    captured = False
    for part in parts:
        pieces = part.split("{agent}")
        segment = re.escape(pieces[0])
        for piece in pieces[1:]:
            segment += "(?P=agent)" if captured else "(?P<agent>[^/]+?)"
            captured = True
            segment += re.escape(piece)
        out.append(segment)
    return re.compile("/".join(out))


def rewrite_log(log: HistoryLog, new: bytes, step: Callable[[str], None]) -> bytes:
    """Replace the log with `new` plus whatever the live file holds past the read; return those extra bytes.

    The old file stays open across the rename and is drained once more afterwards: a line the recorder appended
    between the last copy and the rename went to the old file, and is carried over instead of vanishing with it.
    (A recorder that keeps its handle open for good goes on writing to the old file; it must reopen the log per
    append, as log rotation also requires.)
    """
    carried: list[bytes] = []
    try:
        live = log.path.open("rb")
    except OSError as exc:
        raise HistoryError(f"{log.path}: cannot reopen the history log ({exc.strerror or exc}); unchanged") from exc
    offset = log.size

    def copy_from_live(handle: BinaryIO) -> None:
        nonlocal offset
        # Copy until two looks in a row find nothing new: the recorder may be mid-write.
        quiet = 0
        while quiet < 2:
            live.seek(offset)
            chunk = live.read()
            if chunk:
                handle.write(chunk)
                carried.append(chunk)
                offset += len(chunk)
                quiet = 0
            else:
                quiet += 1

    def copy_tail(handle: BinaryIO) -> None:
        info = os.fstat(live.fileno())
        if (info.st_dev, info.st_ino) != log.identity or info.st_size < log.size:
            raise HistoryError(
                f"{log.path}: the log was replaced or truncated during the run, so it was left as it is "
                "(archives already written keep copies of what would have been dropped); run again"
            )
        copy_from_live(handle)
        step("history-written")

    with live:
        write_atomic(log.path, new, before_replace=copy_tail)
        late = len(carried)
        with log.path.open("ab") as now_live:
            copy_from_live(now_live)
            if len(carried) > late:
                now_live.flush()
                os.fsync(now_live.fileno())
    return b"".join(carried)
