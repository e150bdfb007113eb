"""The files of the sessions folder: `<sessions folder>/<YYYY-MM-DD>/*.md`, each with the stat that says it changed.

The index leaves the sessions folder out (`index.exclude` holds `ops/**`), so whoever needs sessions reads them from
here: the hot tier (a window of days) and the link graph (every day: what a session links to is a backlink of the
note it names). Both keep what they parsed by path and read a file again only when its stamp changed.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

Stamp = tuple[int, int, int]
"""A file's (mtime_ns, size, ctime_ns): a change of any of them means the file must be read again."""

_DAY_FOLDER = re.compile(r"\d{4}-\d{2}-\d{2}")


def session_files(
    base: str, folder: Path, since: dt.date | None, problems: list[tuple[str, str]], until: dt.date | None = None
) -> list[tuple[str, Stamp]]:
    """(vault path, stamp) of every session note from `since` on (all days when None) up to `until` (every later day
    when None), by day then name.

    `base` is the sessions folder as a vault path and `folder` the same on disk. Folders whose name is not a date are
    skipped; what cannot be listed or stat-ed is added to `problems` and skipped alone."""
    found: list[tuple[str, Stamp]] = []
    for day, day_path in _day_folders(base, folder, since, until, problems):
        try:
            with os.scandir(day_path) as iterator:
                notes = [e for e in iterator if e.name.endswith(".md") and not e.name.startswith(".")]
        except OSError as exc:
            problems.append((f"{base}/{day}", f"cannot read folder: {exc.strerror or exc}"))
            continue
        notes.sort(key=lambda e: e.name)
        for entry in notes:
            try:
                info = entry.stat()
            except OSError as exc:  # a broken link, or a file saved away mid-scan: skip it alone
                problems.append((f"{base}/{day}/{entry.name}", f"cannot be read: {exc.strerror or exc}"))
                continue
            found.append((f"{base}/{day}/{entry.name}", (info.st_mtime_ns, info.st_size, info.st_ctime_ns)))
    return found


def _day_folders(
    base: str, folder: Path, since: dt.date | None, until: dt.date | None, problems: list[tuple[str, str]]
) -> list[tuple[str, Path]]:
    # ISO day names sort as dates, so days out of range are skipped by comparing names, without a stat.
    first = since.isoformat() if since is not None else ""
    last = until.isoformat() if until is not None else None
    try:
        with os.scandir(folder) as iterator:
            names = sorted(
                e.name
                for e in iterator
                if first <= e.name and (last is None or e.name <= last) and _DAY_FOLDER.fullmatch(e.name)
            )
    except FileNotFoundError:
        return []
    except OSError as exc:
        problems.append((base, f"cannot read folder: {exc.strerror or exc}"))
        return []
    days: list[tuple[str, Path]] = []
    for name in names:
        try:
            dt.date.fromisoformat(name)
        except ValueError:
            continue
        path = folder / name
        if path.is_dir():
            days.append((name, path))
    return days
