"""A small vault of dated sessions as an agent writes them: a summary under `ops/sessions/<day>/` and a durable
conversation note pointing at it, with a memory note and a project note linking in."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from tests.helpers.files import write

NOW = dt.datetime(2026, 11, 22, 18, 0)

# (day offset from NOW, time, user, chat, slug, what was said)
SESSIONS = [
    (
        -60,
        "09:00",
        "alice",
        "tg",
        "sourdough",
        "We fixed the sourdough starter: hydration at 75 percent and rye flour.",
    ),
    (-40, "10:00", "alice", "tg", "chalet", "The chalet in Chamonix costs 1764 euros for the week in February."),
    (-20, "11:00", "bob", "mail", "kitchen", "Bob chose an oak worktop and a Bosch induction hob for the kitchen."),
    (-9, "12:00", "alice", "tg", "train", "Train tickets from Lyon booked, 116 euros each, seats together."),
    (-1, "08:00", "alice", "tg", "backup", "Restore test of the backups worked, the Pi container came back."),
    (-1, "20:00", "alice", "web", "power", "The smart plug says atlas uses 11.8 watts on average."),
    (0, "07:00", "alice", "tg", "dinner", "Dinner booking for four at La Telecabine on Wednesday."),
    (0, "09:00", "alice", "tg", "packing", "Packing list for the ski trip: goggles, helmet, gloves."),
    (0, "10:30", "bob", "mail", "snags", "Snag list for the kitchen: hob drawer, scratched front."),
]


def conversation_path(offset: int, slug: str) -> str:
    return f"Conversations/{(NOW + dt.timedelta(days=offset)).date()} {slug}.md"


def write_vault(root: Path) -> None:
    write(root, ".obsidian/app.json", "{}")
    for offset, time, user, chat, slug, said in SESSIONS:
        day = (NOW + dt.timedelta(days=offset)).date()
        summary = f"ops/sessions/{day}/{time.replace(':', '')}00-{slug}.md"
        write(
            root,
            summary,
            f"---\ndate: {day}\nuser_id: {user}\nchat_id: {chat}\ntime: '{time}:00'\n"
            f"user_msg: Tell me about {slug}\nsentinel_msg: {json.dumps(said)}\n---\n\n{said}\n",
        )
        write(
            root,
            conversation_path(offset, slug),
            f"---\ntype: conversation\ndate: {day}\ntime: '{time}:00'\nuser_id: {user}\nchat_id: {chat}\n"
            f"session: {summary}\ntags:\n- {slug}\n---\n\n**{user}:** Tell me about {slug}.\n\n**sentinel:** {said}\n",
        )
    write(
        root,
        "Memory/Chalet Les Praz.md",
        "---\ntype: entity\nconfidence: 0.9\n---\n\nThe chalet host is Mme Favre; arrival after 16:00.\n"
        "Booked in [[" + conversation_path(-40, "chalet").removesuffix(".md") + "]].\n",
    )
    write(root, "Projects/Kitchen.md", "Kitchen renovation hub. See [[Memory/Chalet Les Praz]] for nothing.\n")
