"""Session summaries in temporary vaults: one note per exchange under `ops/sessions/<day>/`, as agents write them."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import yaml

from tests.helpers.files import write

HEARTBEAT_ASK = "Read HEARTBEAT.md if it exists and follow it. If nothing needs attention, reply HEARTBEAT_OK."
"""The poll a heartbeat-driven agent is sent every half hour or so."""


def write_summary(
    root: Path,
    when: dt.datetime,
    user_msg: str,
    sentinel_msg: str,
    body: str = "",
    *,
    name: str | None = None,
    user_id: str = "alice",
    chat_id: str = "",
) -> str:
    """Write one summary at `when` and return its vault path."""
    fields: dict[str, str] = {"date": when.date().isoformat(), "time": when.strftime("%H:%M"), "user_id": user_id}
    if chat_id:
        fields["chat_id"] = chat_id
    fields |= {"user_msg": user_msg, "sentinel_msg": sentinel_msg}
    rel = f"ops/sessions/{when.date().isoformat()}/{name or when.strftime('%H%M%S')}.md"
    front = yaml.safe_dump(fields, allow_unicode=True, sort_keys=False)
    write(root, rel, f"---\n{front}---\n{body}")
    return rel


def write_heartbeats(
    root: Path, last: dt.datetime, count: int, every: dt.timedelta = dt.timedelta(minutes=30)
) -> list[str]:
    """`count` heartbeat exchanges, one every `every` up to `last`, each answered `HEARTBEAT_OK` with its time."""
    paths = []
    for n in range(count):
        when = last - n * every
        reply = f"HEARTBEAT_OK {when:%H:%M}" if n % 2 else "HEARTBEAT_OK"
        paths.append(write_summary(root, when, HEARTBEAT_ASK, reply, name=f"hb-{when:%H%M%S}"))
    return paths
