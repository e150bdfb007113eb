"""The cold tier: the xz-compressed JSONL archives the `archive` processor writes, listed and searched.

Archives live at `<destination>/<agent>/<agent>-<UTC stamp>[-n].jsonl.xz`, one JSON entry a line, as plain xz files
(`xz -dc` reads them). Every read streams the file through `lzma`, a line at a time, so an archive is never held in
memory whole. A crash between writing an archive and rewriting the log can leave an entry in two archives, so entries
are deduplicated by agent and id across files, the oldest archive's copy winning. A corrupt or truncated file is
reported with its path and skipped (none of its entries count, so a half-read file never hides a good copy); a line
that is not a valid entry is reported with its file and line and the rest of the file is still read.
"""

from __future__ import annotations

import heapq
import lzma
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from companion.config import CompanionConfig
from companion.errors import ArchiveError
from companion.pipeline.history import BadLine, Entry, parse_entry
from companion.pipeline.processors import ArchiveProcessor
from companion.specs import ArchiveSpec, ProcessorSpec

SUFFIX = ".jsonl.xz"
"""The name ending of every archive file."""

_STAMPED = re.compile(r"-(?P<stamp>\d{8}T\d{6}Z)(?:-(?P<n>\d+))?\.jsonl\.xz$")


@dataclass(frozen=True)
class ArchiveFile:
    """One archive file as read: what it holds and how big it is."""

    path: Path
    """The `.jsonl.xz` file."""
    agent: str
    """The agent, named by the file's folder."""
    entries: int
    """Valid entries in the file (copies of entries another archive holds too included)."""
    first_ts: datetime | None
    """The earliest entry's time; none when it holds no valid entry."""
    last_ts: datetime | None
    """The latest entry's time; none when it holds no valid entry."""
    compressed_bytes: int
    """The file's size on disk."""
    uncompressed_bytes: int
    """The size of the JSONL it decompresses to."""
    problems: tuple[str, ...] = ()
    """Bad lines, each naming the file and line; they are skipped."""


@dataclass(frozen=True)
class ColdListing:
    """Every archive file found, and the ones that could not be read."""

    files: tuple[ArchiveFile, ...]
    """The readable archives, by agent, then oldest first."""
    problems: tuple[str, ...]
    """One message per unreadable file (naming it) and per bad line (naming file and line)."""


@dataclass(frozen=True)
class ColdQuery:
    """What to look for in the archives."""

    text: str = ""
    """A substring of any string value of the entry, case-insensitive; empty matches every entry."""
    since: datetime | None = None
    """Only entries at or after this moment (timezone-aware)."""
    until: datetime | None = None
    """Only entries before this moment (timezone-aware)."""
    agent: str | None = None
    """Only this agent's archives."""
    limit: int | None = 20
    """At most this many hits (the newest); none: all of them."""


@dataclass(frozen=True)
class ColdHit:
    """One archived entry that matches, and where it is."""

    entry: Entry
    """The entry as archived."""
    agent: str
    """The agent, named by the archive's folder."""
    archive: Path
    """The archive file holding it (the oldest one, when several do)."""
    line: int
    """Its 1-based line in the decompressed archive."""


@dataclass(frozen=True)
class ColdSearch:
    """The result of a search: the newest hits and what was read to find them."""

    hits: tuple[ColdHit, ...]
    """The matching entries, newest first, at most the query's limit."""
    matched: int
    """How many entries matched before the limit."""
    files: int
    """Archive files read through."""
    entries: int
    """Distinct entries read (within the agent filter)."""
    duplicates: int
    """Copies of an entry an earlier archive already holds, skipped."""
    problems: tuple[str, ...]
    """Unreadable files and bad lines, each naming the file (and line)."""


def archive_specs(config: CompanionConfig) -> tuple[ArchiveSpec, ...]:
    """Every archive processor of the config: the default list's and every agent's own list's."""
    lists: list[tuple[ProcessorSpec, ...]] = [config.session_history.processors]
    lists += [a.processors for a in config.agents.values() if a.processors is not None]
    return tuple(spec for specs in lists for spec in specs if isinstance(spec, ArchiveSpec))


def archive_roots(vault_root: Path, config: CompanionConfig) -> tuple[Path, ...]:
    """The configured archive destinations (each holding one folder per agent), without repeats, in config order."""
    roots: dict[Path, None] = {}
    for spec in archive_specs(config):
        # The processor's own folder logic, so the cold tier looks exactly where the archives were written.
        roots.setdefault(ArchiveProcessor(spec=spec, vault_root=vault_root).folder("agent").parent, None)
    return tuple(roots)


def find_archives(roots: Iterable[Path], agent: str | None = None) -> tuple[tuple[str, Path], ...]:
    """The `(agent, path)` of every archive under the roots (a destination or one agent's folder), the agent named
    by the file's folder; by agent, then oldest first (by the stamp in the name)."""
    found: dict[Path, str] = {}
    for root in roots:
        if not root.is_dir():
            continue
        for path in [*root.glob(f"*{SUFFIX}"), *root.glob(f"*/*{SUFFIX}")]:
            if path.is_file():
                found.setdefault(path.resolve(), path.parent.name)
    pairs = [(name, path) for path, name in found.items() if agent is None or name == agent]
    return tuple(sorted(pairs, key=lambda pair: (pair[0], *_age_key(pair[1]))))


def _age_key(path: Path) -> tuple[str, int, str]:
    # `x-…Z-2.jsonl.xz` is written after `x-…Z.jsonl.xz` but sorts before it by name: order by stamp, then number.
    match = _STAMPED.search(path.name)
    if match is None:
        return ("", 0, path.name)
    return (match.group("stamp"), int(match.group("n") or 1), path.name)


def read_archive(path: Path) -> Iterator[Entry | BadLine]:
    """Stream one archive's lines, a line at a time; `ArchiveError` (naming the file) when it is not a whole xz file.

    Lines that are not valid entries come as `BadLine`s (blank ones with an empty reason); the caller decides what
    to do with what was yielded before an error.
    """
    try:
        with lzma.open(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                raw = raw.rstrip(b"\n")
                if not raw.strip():
                    yield BadLine(number, raw, "")
                    continue
                try:
                    yield parse_entry(raw)
                except ValueError as exc:
                    yield BadLine(number, raw, str(exc))
    except EOFError:
        raise ArchiveError(
            f"{path}: the archive is truncated (it ends before the end of its xz stream); it is skipped, restore it "
            "from a backup or delete it"
        ) from None
    except (lzma.LZMAError, OSError) as exc:
        raise ArchiveError(
            f"{path}: cannot read the archive ({exc}); it is skipped, restore it from a backup"
        ) from None


@dataclass
class _FileRead:
    """One file read through to its end: its entries with their lines, and the accounting."""

    entries: list[tuple[int, Entry]]
    uncompressed: int
    problems: list[str]


def _read_whole(path: Path, keep: Any) -> _FileRead:
    """Read a file through, keeping the entries `keep(entry)` accepts; `ArchiveError` if it is not whole.

    Only what `keep` accepts is held, so a search holds its matches of one file, never the file.
    """
    kept: list[tuple[int, Entry]] = []
    problems: list[str] = []
    size = 0
    number = 0
    for line in read_archive(path):
        number += 1
        size += len(line.raw) + 1
        if isinstance(line, BadLine):
            if line.reason:
                problems.append(f"{path}, line {line.line}: {line.reason}; the line is skipped")
            continue
        if keep(line):
            kept.append((number, line))
    return _FileRead(kept, size, problems)


def list_archives(roots: Iterable[Path], agent: str | None = None) -> ColdListing:
    """Every archive under the roots with its counts and time range; unreadable files are reported and left out."""
    files: list[ArchiveFile] = []
    problems: list[str] = []
    for name, path in find_archives(roots, agent):
        stats = _Range()
        try:
            read = _read_whole(path, stats.add)
        except ArchiveError as exc:
            problems.append(str(exc))
            continue
        problems += read.problems
        files.append(
            ArchiveFile(
                path=path,
                agent=name,
                entries=stats.count,
                first_ts=stats.first,
                last_ts=stats.last,
                compressed_bytes=path.stat().st_size,
                uncompressed_bytes=read.uncompressed,
                problems=tuple(read.problems),
            )
        )
    return ColdListing(files=tuple(files), problems=tuple(problems))


class _Range:
    """Counts entries and their time range as they stream by (and keeps none of them)."""

    def __init__(self) -> None:
        self.count = 0
        self.first: datetime | None = None
        self.last: datetime | None = None

    def add(self, entry: Entry) -> bool:
        self.count += 1
        self.first = entry.ts if self.first is None else min(self.first, entry.ts)
        self.last = entry.ts if self.last is None else max(self.last, entry.ts)
        return False


def matches(entry: Entry, query: ColdQuery) -> bool:
    """Whether an entry is within the query's dates and holds its text in one of its string values."""
    if query.since is not None and entry.ts < query.since:
        return False
    if query.until is not None and entry.ts >= query.until:
        return False
    needle = query.text.casefold()
    return not needle or any(needle in value.casefold() for value in string_values(entry.data))


def string_values(value: Any) -> Iterator[str]:
    """Every string value inside a JSON value, nested ones included (keys are not values)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from string_values(item)
    elif isinstance(value, list):
        for item in value:
            yield from string_values(item)


def search_archives(roots: Iterable[Path], query: ColdQuery) -> ColdSearch:
    """The newest entries of the archives under the roots that match the query, each entry once."""
    seen: set[tuple[str, str]] = set()
    # A min-heap of the newest `limit` hits; the counter breaks ties so entries are never compared.
    best: list[tuple[datetime, int, ColdHit]] = []
    matched = files = duplicates = order = 0
    problems: list[str] = []
    for name, path in find_archives(roots, query.agent):
        ids: list[str] = []

        def keep(entry: Entry, ids: list[str] = ids) -> bool:
            ids.append(entry.id)
            return matches(entry, query)

        try:
            read = _read_whole(path, keep)
        except ArchiveError as exc:
            # Its ids stay unseen too, so a good copy in another archive is still found.
            problems.append(str(exc))
            continue
        files += 1
        problems += read.problems
        hits = {entry.id: (number, entry) for number, entry in reversed(read.entries)}
        for entry_id in ids:
            key = (name, entry_id)
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            if entry_id not in hits:
                continue
            number, entry = hits.pop(entry_id)
            matched += 1
            order += 1
            item = (entry.ts, -order, ColdHit(entry=entry, agent=name, archive=path, line=number))
            if query.limit is None or len(best) < query.limit:
                heapq.heappush(best, item)
            elif query.limit > 0 and item[:2] > best[0][:2]:
                heapq.heapreplace(best, item)
    ranked = sorted(best, key=lambda item: item[:2], reverse=True)
    return ColdSearch(
        hits=tuple(hit for _, _, hit in ranked),
        matched=matched,
        files=files,
        entries=len(seen),
        duplicates=duplicates,
        problems=tuple(problems),
    )


def find_entry(roots: Iterable[Path], entry_id: str, agent: str | None = None) -> tuple[Entry | None, tuple[str, ...]]:
    """The archived entry of this id (the copy in the newest archive, when a crash archived it twice), and the
    archives that could not be read, each named."""
    found: Entry | None = None
    problems: list[str] = []
    for _name, path in find_archives(roots, agent):
        try:
            for line in read_archive(path):
                if isinstance(line, Entry) and line.id == entry_id:
                    found = line
        except ArchiveError as exc:
            problems.append(str(exc))
    return found, tuple(problems)
