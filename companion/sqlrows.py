"""`WHERE x IN (...)` over any number of values, within SQLite's limit on bound parameters."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

BATCH = 500
"""Values bound per statement (SQLite's default limit was 999 for a long time)."""


def rows_in(db: sqlite3.Connection, sql: str, values: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
    """Rows of `sql` (which holds `{marks}` where the `?, ?, ...` list goes) for distinct `values`, batch by batch."""
    wanted = list(dict.fromkeys(values))
    for start in range(0, len(wanted), BATCH):
        part = wanted[start : start + BATCH]
        yield from db.execute(sql.format(marks=",".join("?" * len(part))), part)
