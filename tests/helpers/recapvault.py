"""A vault for recap questions that name a period: sessions last week, yesterday, today, in March and on 3 November,
written the three ways they reach a vault (a summary under `ops/sessions/<day>/` alone, a summary with the
conversation note carrying it, an agent's session imported as a conversation note), and memory notes that share
the words of those questions ("last week", "in March") but none of their sessions."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from companion.workspace import Workspace
from tests.helpers.files import write
from tests.helpers.workspaces import workspace

NOW = dt.datetime(2026, 11, 22, 18, 0)
"""A Sunday: last week is 9 to 15 November, yesterday the 21st."""

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
"""A secret said in one session, which no listing may show."""


@dataclass(frozen=True)
class Written:
    """One session as written: the note listed for it and when it took place."""

    name: str
    path: str
    when: dt.datetime
    user: str
    reply: str


def last_monday(today: dt.date) -> dt.date:
    """The Monday of the week before `today`'s."""
    return today - dt.timedelta(days=today.weekday() + 7)


def write_recap_vault(root: Path, now: dt.datetime = NOW) -> dict[str, Written]:
    """Write the vault around `now`; the sessions by name."""
    write(root, ".obsidian/app.json", "{}")
    today, monday = now.date(), last_monday(now.date())
    out: dict[str, Written] = {}

    def summary(name: str, day: dt.date, time: str, user: str, reply: str, chat: str = "tg") -> str:
        path = f"ops/sessions/{day}/{time.replace(':', '')}00-{name}.md"
        write(
            root,
            path,
            f"---\ndate: {day}\ntime: '{time}:00'\nuser_id: alice\nchat_id: {chat}\nuser_msg: {json.dumps(user)}\n"
            f"sentinel_msg: {json.dumps(reply)}\n---\n\n{user}\n\n{reply}\n",
        )
        out[name] = Written(name, path, dt.datetime.combine(day, dt.time.fromisoformat(time)), user, reply)
        return path

    def carried(name: str, day: dt.date, time: str, user: str, reply: str) -> None:
        # The agent's durable conversation note names its summary: listed instead of it.
        summary_path = summary(name, day, time, user, reply)
        path = f"Conversations/{day} {name}.md"
        write(
            root,
            path,
            f"---\ntype: conversation\ndate: {day}\ntime: '{time}:00'\nuser_id: alice\nchat_id: tg\n"
            f"session: {summary_path}\n---\n\n**alice:** {user}\n\n**sentinel:** {reply}\n",
        )
        out[name] = Written(name, path, out[name].when, user, reply)

    def imported(name: str, day: dt.date, time: str, user: str, reply: str) -> None:
        # As `companion import` writes an agent's session: no summary, no user_msg; the turns say it.
        path = f"Agents/claude/homelab/{day} {name}.md"
        write(
            root,
            path,
            f"---\ntype: conversation\nagent: claude\nproject: homelab\nsession_id: 5f0c2a\ndate: {day}\n"
            f"time: '{time}:00'\nturns: 3\ngenerated_by: import-v1\n---\n# {name}\n\n**user:** {user}\n\n"
            f"**assistant:** → Read: backup.sh\n\n**assistant:** {reply}\n\n%% companion: end of import %%\n",
        )
        out[name] = Written(name, path, dt.datetime.combine(day, dt.time.fromisoformat(time)), user, reply)

    # Last week, Monday to Sunday; the boiler is its oldest session.
    summary("boiler", monday, "08:00", "The boiler pressure dropped to 0.5 bar", "Top it up to 1.5 bar at the loop.")
    summary("bike", monday + dt.timedelta(days=1), "09:00", "Which bike lock should I buy?", "The Abus Granit.")
    carried("apple", monday + dt.timedelta(days=2), "18:30", "How do I prune the apple tree?", "In late winter.")
    imported(
        "restic",
        monday + dt.timedelta(days=3),
        "14:05",
        f"The restic backup fails with exit 3, my token is {TOKEN}",
        "The password file path was wrong; fixed it.",
    )
    summary("taxes", monday - dt.timedelta(days=2), "10:00", "When is the tax return due?", "On 31 July.")
    yesterday = today - dt.timedelta(days=1)
    summary("train", yesterday, "08:00", "Which train to Lyon?", "The 9:04 from Geneva.")
    summary("film", yesterday, "20:00", "A film for tonight?", "Paterson.", chat="web")
    summary("weather", today, "07:00", "Weather tomorrow?", "Rain until noon.")
    summary("fence", dt.date(today.year, 3, 4), "10:00", "Which paint for the fence?", "Osmo oil, two coats.")
    carried("easter", dt.date(today.year, 3, 20), "19:00", "Plan the Easter trip", "Annecy, three nights.")
    summary("car", dt.date(today.year, 11, 3), "19:00", "Is the car service booked?", "Thursday at 8.")
    summary("dentist", dt.date(today.year, 11, 3), "08:15", "Move the dentist appointment", "Moved to Friday.")

    # Notes that hold the questions' words, dated inside the periods, and no session.
    write(
        root,
        "Memory/What we talked about.md",
        f"---\ntype: fact\ndate: {monday + dt.timedelta(days=2)}\n---\n\nWhat did we talk about last week? Last "
        "week we talked about what we talk about. In March we talked about March. On 3 November we talked about "
        "3 November. Yesterday we talked about yesterday.\n",
    )
    write(
        root,
        "Memory/Boiler.md",
        "---\ntype: fact\ndate: 2026-09-01\n---\n\nThe boiler is a Vaillant ecoTEC; what we said about the boiler: "
        "its pressure should be 1.5 bar.\n",
    )
    return out


def expected(sessions: dict[str, Written], first: dt.date, last: dt.date, moment: dt.datetime) -> list[str]:
    """The paths of the sessions from `first` to `last` up to `moment`, newest first."""
    inside = [s for s in sessions.values() if first <= s.when.date() <= last and s.when <= moment]
    return [s.path for s in sorted(inside, key=lambda s: (s.when, s.path), reverse=True)]


def indexed_recap_vault(factory: pytest.TempPathFactory, name: str) -> Iterator[tuple[Workspace, dict[str, Written]]]:
    """The recap vault written and indexed in temporary folders named after `name` (a module fixture's body)."""
    root = factory.mktemp(name) / "vault"
    sessions = write_recap_vault(root)
    ws = workspace(root, data_dir=factory.mktemp(f"{name}-data"))
    ws.indexer().sync()
    yield ws, sessions
    ws.close()
