"""What a recall may look at: frontmatter filters, a date range and a path glob, as one value.

`--where user_id=alice --where type=conversation --since 2026-03-01 --path 'Conversations/*'` becomes a `Scope`;
the index turns it into SQL and Chroma filters, and `Scope.matches` is the same rule in plain Python, for the
items (hot sessions, temporal items) that do not come from the index.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from companion.errors import ConfigError

COLUMN_FIELDS = frozenset({"kind", "type", "path", "title", "date"})
"""Filter keys answered from the index's own columns rather than from frontmatter."""


@dataclass(frozen=True)
class Scope:
    """Filters every recalled item must pass; the empty scope lets everything through."""

    where: tuple[tuple[str, str], ...] = ()
    """(field, value) pairs, all of which must hold; a list field holds when one of its items equals the value.
    Values compare as text, case-insensitively."""
    since: dt.date | None = None
    """First day (inclusive) of the note's `date`; undated notes are left out when set."""
    until: dt.date | None = None
    """Last day (inclusive) of the note's `date`; undated notes stay in."""
    path_glob: str | None = None
    """A glob on the vault-relative path (`*` also crosses folders), such as `Conversations/*` (see
    `path_pattern` for what a user may type)."""

    @property
    def empty(self) -> bool:
        """True when the scope filters nothing."""
        return not self.where and self.since is None and self.until is None and not self.path_glob

    def narrowed(self, *, since: dt.date | None = None, until: dt.date | None = None) -> Scope:
        """This scope with its date range intersected with `[since, until]`."""
        new_since = max(d for d in (self.since, since) if d is not None) if (self.since or since) else None
        new_until = min(d for d in (self.until, until) if d is not None) if (self.until or until) else None
        return Scope(self.where, new_since, new_until, self.path_glob)

    def matches(
        self, path: str, kind: str, note_type: str | None, day: dt.date | None, fields: Mapping[str, Any]
    ) -> bool:
        """Whether one item passes (the same rule the index applies)."""
        if self.path_glob and not fnmatch.fnmatchcase(path, self.path_glob):
            return False
        if self.since is not None and (day is None or day < self.since):
            return False
        if self.until is not None and day is not None and day > self.until:
            return False
        columns = {"kind": kind, "type": note_type or "", "path": path, "title": _title(path), "date": day}
        for key, wanted in self.where:
            value = columns[key] if key in COLUMN_FIELDS else fields.get(key)
            if not _holds(value, wanted):
                return False
        return True

    def describe(self) -> str:
        """The scope in words, for messages (`user_id=alice, since 2026-03-01`)."""
        parts = [f"{k}={v}" for k, v in self.where]
        if self.since:
            parts.append(f"since {self.since.isoformat()}")
        if self.until:
            parts.append(f"until {self.until.isoformat()}")
        if self.path_glob:
            parts.append(f"path {self.path_glob}")
        return ", ".join(parts) or "everything"


def parse_where(items: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """`["user_id=alice", "type=conversation"]` as (field, value) pairs; a malformed item is a `ConfigError`."""
    pairs: list[tuple[str, str]] = []
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--where {item!r}: expected FIELD=VALUE, such as user_id=alice")
        pairs.append((key, value.strip()))
    return tuple(pairs)


def where_from_mapping(where: Mapping[str, Any] | None, source: str) -> tuple[tuple[str, str], ...]:
    """A JSON `{"field": value}` object as (field, value) pairs; a list value must match one of its items."""
    if where is None:
        return ()
    if not isinstance(where, Mapping):
        raise ConfigError(f"{source}: `where` must be an object of field: value, got {type(where).__name__}")
    pairs: list[tuple[str, str]] = []
    for key, value in where.items():
        if isinstance(value, (dict, list)) or value is None:
            raise ConfigError(f"{source}: `where.{key}` must be a single text, number or boolean value")
        pairs.append((str(key), _text(value)))
    return tuple(pairs)


def parse_day(text: str, what: str) -> dt.date:
    """A `YYYY-MM-DD` (or full ISO timestamp) as a date; anything else is a `ConfigError` naming `what`."""
    try:
        return dt.datetime.fromisoformat(text.strip()).date()
    except ValueError:
        try:
            return dt.date.fromisoformat(text.strip())
        except ValueError:
            raise ConfigError(f"{what} {text!r}: expected a date such as 2026-03-01") from None


def _holds(value: Any, wanted: str) -> bool:
    # A list holds when one item does, a mapping when one value does (as the index's json_each walks them).
    if isinstance(value, list):
        return any(_holds(item, wanted) for item in value)
    if isinstance(value, Mapping):
        return any(_holds(item, wanted) for item in value.values())
    if value is None:
        return False
    return _text(value).casefold() == wanted.casefold()


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return str(value)


def _title(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


def parse_as_of(text: str | None, what: str = "--as-of") -> dt.datetime | None:
    """An ISO-8601 moment (a bare date means its midnight; no zone means local time), or None."""
    if text is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ConfigError(f"{what} {text!r}: expected an ISO-8601 moment such as 2026-11-20T10:00:00") from None
    if not 1900 <= moment.year <= 9000:
        # The hot window and date expressions reach days before and after: keep far from datetime's limits.
        raise ConfigError(f"{what} {text!r}: expected a year between 1900 and 9000")
    return moment


def path_pattern(text: str) -> str:
    """The glob a user's `--path` means: a glob as it is (`Conversations/*`, `*.md`), a note's path as it is, and a
    folder's name without a glob (`en`, `./Projects/Home/`) that folder and everything under it; the vault's own
    folder (`.`, `/`, nothing) every note. Paths are relative to the vault, so a leading `./` or `/` is dropped."""
    text = text.strip()
    while text.startswith(("./", "/")):
        text = text[1:] if text.startswith("/") else text[2:]
    if text in ("", "."):
        return "*"
    if any(ch in text for ch in "*?[") or text.casefold().endswith(".md"):
        return text
    return f"{text.rstrip('/')}/*"
