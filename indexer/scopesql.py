"""A recall scope (fields, dates, a path pattern) as SQL over the index's `notes` table."""

from __future__ import annotations

import datetime as dt
import re

from companion.recall.scope import COLUMN_FIELDS, Scope


def scope_sql(scope: Scope | None) -> tuple[str, list[str]]:
    """A scope as an SQL condition on the `notes` table (empty when it filters nothing) and its parameters."""
    if scope is None or scope.empty:
        return "", []
    conds: list[str] = []
    params: list[str] = []
    for key, value in scope.where:
        if key in COLUMN_FIELDS:
            column = {
                "kind": "notes.kind",
                "type": "coalesce(notes.note_type, '')",
                "path": "notes.path",
                "title": "notes.title",
                "date": "substr(coalesce(notes.date, ''), 1, 10)",
            }[key]
            conds.append(f"casefold({column}) = casefold(?)")
            params.append(value)
        else:
            # A list field holds when one item matches; json_each walks a scalar as a single row.
            conds.append(
                "EXISTS (SELECT 1 FROM json_each(notes.fields, ?) AS j WHERE casefold("
                "CASE WHEN j.type IN ('true', 'false') THEN j.type ELSE CAST(j.value AS TEXT) END) = casefold(?))"
            )
            params.extend([json_path(key), value])
    # A date that does not start with YYYY-MM-DD counts as no date, as `note_day` reads it.
    dated = f"coalesce(notes.date, '') GLOB '{DAY_GLOB}'"
    if scope.since is not None:
        # `notes.date >= ?` repeats the test in a form the date index can serve (a range scan, not a full scan).
        conds.append(f"notes.date >= ? AND {dated} AND substr(notes.date, 1, 10) >= ?")
        params.extend([scope.since.isoformat(), scope.since.isoformat()])
        if scope.until is not None:
            conds.append("notes.date < ?")
            params.append((scope.until + dt.timedelta(days=1)).isoformat())
    if scope.until is not None:
        conds.append(f"(NOT {dated} OR substr(notes.date, 1, 10) <= ?)")
        params.append(scope.until.isoformat())
    if scope.path_glob:
        conds.append("notes.path GLOB ?")
        params.append(sqlite_glob(scope.path_glob))
    return " AND ".join(conds), params


def next_day(day: str) -> str:
    """The ISO day after `day`."""
    return (dt.date.fromisoformat(day) + dt.timedelta(days=1)).isoformat()


def casefold_value(value: str | int | float | None) -> str | int | float | None:
    """SQLite's `casefold()`: a text case-folded as Python does it (SQLite's `lower` knows only ASCII), anything
    else as it is."""
    return value.casefold() if isinstance(value, str) else value


DAY_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*"
"""A date that starts with YYYY-MM-DD, in SQLite's GLOB: any other counts as no date, as `note_day` reads it."""


def sqlite_glob(pattern: str) -> str:
    """An `fnmatch` pattern in SQLite's GLOB dialect, which negates a class with `[^...]` instead of `[!...]`."""
    return re.sub(r"\[!", "[^", pattern)


def json_path(key: str) -> str:
    """The JSON path of a frontmatter key in `notes.fields`, quoted so any key is one step."""
    escaped = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'$."{escaped}"'
