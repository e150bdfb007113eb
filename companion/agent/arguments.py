"""The checks of an agent's arguments: each bad value is an `AgentInputError` naming the argument and saying what
it takes."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from companion.errors import AgentInputError, ConfigError
from companion.recall.scope import Scope, parse_as_of, parse_day, path_pattern, where_from_mapping


def text(field: str, value: object) -> str:
    """A text argument: a string, not blank, at most 10,000 characters."""
    if not isinstance(value, str):
        raise AgentInputError(field, f"expected text, got {type(value).__name__}")
    if not value.strip():
        raise AgentInputError(field, "is empty")
    if len(value) > 10_000:
        raise AgentInputError(field, f"is {len(value)} characters long; at most 10000")
    return value


def count(field: str, value: object, most: int, least: int = 1) -> int:
    """A whole-number argument from `least` to `most` (a bool is no number)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise AgentInputError(field, f"expected a whole number, got {type(value).__name__}")
    if not least <= value <= most:
        raise AgentInputError(field, f"must be between {least} and {most}, got {value}")
    return value


def day(field: str, value: str | None) -> dt.date | None:
    """A day argument (`2026-03-01`), None when not given."""
    if value is None or not str(value).strip():
        return None
    try:
        return parse_day(text(field, value), field)
    except ConfigError as exc:
        raise AgentInputError(field, f"{value!r} is not a date such as 2026-03-01") from exc


def moment(value: str | None, field: str = "as_of") -> dt.datetime | None:
    """An ISO-8601 moment argument, None when not given."""
    if value is None or not str(value).strip():
        return None
    try:
        return parse_as_of(text(field, value), field)
    except ConfigError as exc:
        raise AgentInputError(field, f"{value!r} is not an ISO-8601 moment such as 2026-11-20T10:00:00") from exc


def scope(where: Mapping[str, Any] | None, since: str | None, until: str | None, path: str | None) -> Scope:
    """The filters of a search: properties (`where`), days and a path glob."""
    if where is not None and not isinstance(where, Mapping):
        raise AgentInputError("where", f"expected an object of field: value, got {type(where).__name__}")
    try:
        pairs = where_from_mapping(where, "where")
    except ConfigError as exc:
        raise AgentInputError("where", str(exc)) from exc
    glob = path_pattern(text("path", path)) if path is not None and str(path).strip() else None
    return Scope(pairs, day("since", since), day("until", until), glob)


def tags(value: object) -> tuple[str, ...]:
    """A note's `tags` property as tags without `#` (a list, or words in one string)."""
    if isinstance(value, str):
        return tuple(t.strip().lstrip("#") for t in value.replace(",", " ").split() if t.strip())
    if isinstance(value, list):
        return tuple(str(t).strip().lstrip("#") for t in value if str(t).strip())
    return ()
