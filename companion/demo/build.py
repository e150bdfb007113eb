"""Write a small, realistic demo vault, so a new user sees every pane working in one command.

The vault looks like what an agent ("sentinel") writes for three users over about four months: a
session summary per session under `ops/sessions/<date>/`, a durable conversation note per session in
`Conversations/`, typed memory notes in `Memory/`, and people, project, place and book notes, all
wikilinked. Several sessions fall in the last two days, more than `hot_limit=3` of them for alice,
so the default policy pushes some out of the hot tier.

The text comes from `companion.demo.content`; this module only places it in time and writes the
files. Output is deterministic for a given `(now, variant)`: the same arguments give the same bytes.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from pathlib import Path
from typing import Any

import yaml

from companion.demo import content
from companion.errors import VaultError

MARKER = ".companion/demo.json"
"""Vault-relative path of the file that marks a folder as a demo vault and lists what it wrote."""

SESSIONS_FOLDER = "ops/sessions"
"""Where session summaries go, one folder per day (the companion's default)."""
CONVERSATIONS_FOLDER = "Conversations"
"""Where the durable conversation notes go."""
MEMORY_FOLDER = "Memory"
"""Where the typed memory notes go."""

_GENERATOR = "vault-companion demo"
_VERSION = 1


@dataclass(frozen=True)
class DemoSummary:
    """What `write_demo_vault` wrote."""

    root: Path
    """The vault folder."""
    sessions: int
    """Session summaries under `ops/sessions/`."""
    conversations: int
    """Conversation notes (`type: conversation`)."""
    memory_notes: int
    """Typed memory notes (fact, entity, experience, belief, reflection, recipe)."""
    other_notes: int
    """People, project, place and book notes and the home page."""


@dataclass(frozen=True)
class _Session:
    """One stage of a thread placed in time."""

    thread: content.Thread
    index: int
    stage: content.Stage
    when: datetime

    @property
    def chat(self) -> str:
        return self.stage.chat or self.thread.chat

    @property
    def conversation_title(self) -> str:
        return f"{self.when.date().isoformat()} {self.stage.title}"

    @property
    def session_path(self) -> str:
        slug = re.sub(r"[^a-z0-9]+", "-", self.stage.title.lower()).strip("-")
        day = self.when.date().isoformat()
        return f"{SESSIONS_FOLDER}/{day}/{self.when.strftime('%H%M%S')}-{slug}.md"


def write_demo_vault(dest: Path, *, now: datetime, variant: int = 7) -> DemoSummary:
    """Write the demo vault into `dest` (created if missing) and return what was written.

    `dest` must be missing, empty, or a demo vault written earlier (its files are then replaced;
    files the user added are left alone). Any other non-empty folder raises `VaultError`, so a real
    vault is never touched. `now` is the moment the vault is written "at": sessions lie up to about
    four months before it.
    """
    dest = Path(dest)
    previous = _previous_files(dest)
    # One generator, consumed in a fixed order, is what makes the output depend only on (now, variant).
    rng = random.Random(variant)
    local_now = now.replace(tzinfo=None, microsecond=0)
    sessions = _plan(local_now, rng)
    files: dict[str, str] = {}
    by_stage = {(s.thread.key, s.index): s for s in sessions}
    for session in sessions:
        previous_session = by_stage.get((session.thread.key, session.index - 1))
        files[session.session_path] = _session_note(session)
        files[f"{CONVERSATIONS_FOLDER}/{session.conversation_title}.md"] = _conversation_note(
            session, previous_session, rng
        )
    for memory in content.MEMORY:
        files[f"{MEMORY_FOLDER}/{memory.title}.md"] = _memory_note(memory, by_stage, local_now)
    for other in content.OTHERS:
        files[other.path] = _other_note(other, sessions)
    files[".obsidian/app.json"] = json.dumps(content.APP_JSON, indent=2) + "\n"
    summary = DemoSummary(
        root=dest,
        sessions=len(sessions),
        conversations=len(sessions),
        memory_notes=len(content.MEMORY),
        other_notes=len(content.OTHERS),
    )
    _remove(dest, previous - files.keys())
    marker = {
        "generator": _GENERATOR,
        "version": _VERSION,
        "variant": variant,
        "now": local_now.isoformat(),
        "counts": {
            "sessions": summary.sessions,
            "conversations": summary.conversations,
            "memory_notes": summary.memory_notes,
            "other_notes": summary.other_notes,
        },
        "files": sorted(files),
    }
    # The marker goes first: a run cut short leaves a folder the next run recognises and redoes.
    _write(dest / MARKER, json.dumps(marker, indent=2, ensure_ascii=False) + "\n")
    for rel, text in sorted(files.items()):
        _write(dest / rel, text)
    return summary


def is_demo_vault(path: Path) -> bool:
    """True when `path` holds a marker written by `write_demo_vault`."""
    return _read_marker(Path(path)) is not None


def written_demo(path: Path) -> DemoSummary | None:
    """What an earlier `write_demo_vault` wrote into `path` (from its marker), or None when it holds no demo."""
    marker = _read_marker(Path(path))
    counts = marker.get("counts") if marker is not None else None
    if not isinstance(counts, dict):
        return None
    try:
        return DemoSummary(
            root=Path(path),
            sessions=int(counts["sessions"]),
            conversations=int(counts["conversations"]),
            memory_notes=int(counts["memory_notes"]),
            other_notes=int(counts["other_notes"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


# -- placing sessions in time ------------------------------------------------------------------


def _plan(now: datetime, rng: random.Random) -> list[_Session]:
    """Every stage of every thread with its date and time, oldest first."""
    sessions: list[_Session] = []
    for thread in content.THREADS:
        moments = sorted(_moment(now, stage.days_ago, rng) for stage in thread.stages)
        # Sorting keeps each thread's story in order even when clamping moved a recent session.
        sessions.extend(
            _Session(thread, i, stage, when) for i, (stage, when) in enumerate(zip(thread.stages, moments, strict=True))
        )
    sessions.sort(key=lambda s: (s.when, s.thread.key))
    return sessions


def _moment(now: datetime, days_ago: float, rng: random.Random) -> datetime:
    """When a session `days_ago` before `now` took place, at a plausible time of day.

    Sessions under two days old must stay inside the default hot window (today and yesterday,
    never after `now`), whatever time of day `now` is, because the demo promises that the hot tier
    has content.
    """
    if days_ago >= 2:
        day = now.date() - timedelta(days=round(days_ago))
        # People write to their agent from breakfast to late evening.
        clock = time(rng.randint(7, 22), rng.randint(0, 59), rng.randint(0, 59))
        return datetime.combine(day, clock)
    jitter = timedelta(minutes=rng.randint(0, 20), seconds=rng.randint(0, 59))
    when = now - timedelta(days=days_ago) - jitter
    start_of_yesterday = datetime.combine(now.date() - timedelta(days=1), time(0, 0))
    if when < start_of_yesterday:
        # Early in the morning "36 hours ago" is the day before yesterday: move it to early
        # yesterday, ordered by age so two clamped sessions keep their order.
        when = start_of_yesterday + timedelta(minutes=round((2 - days_ago) * 100))
    return when


# -- rendering notes ---------------------------------------------------------------------------


class _Quoted(str):
    """A string always written quoted in YAML."""

    __slots__ = ()


class _Dumper(yaml.SafeDumper):
    """`SafeDumper` that quotes `_Quoted` strings."""


def _represent_quoted(dumper: yaml.SafeDumper, value: _Quoted) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style="'")


_Dumper.add_representer(_Quoted, _represent_quoted)


def _frontmatter(data: dict[str, Any]) -> str:
    """YAML frontmatter as Obsidian writes it: block style, unicode kept, one line per value."""
    text = yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=10_000,
    )
    return f"---\n{text}---\n"


def _link(title: str) -> str:
    return f"[[{title}]]"


def _session_note(session: _Session) -> str:
    """The session summary under `ops/sessions/`: the opening exchange and what came of it."""
    turns = session.stage.turns
    data = {
        "date": session.when.date(),
        "user_id": session.thread.user,
        "chat_id": session.chat,
        # Quoted always: YAML 1.1 readers (PyYAML's default) take `10:15:00` for the integer 36900.
        "time": _Quoted(session.when.strftime("%H:%M:%S")),
        "user_msg": turns[0],
        "sentinel_msg": turns[1],
    }
    body = f"{session.stage.summary}\n\nConversation {_link(session.conversation_title)}\n"
    return _frontmatter(data) + "\n" + body


def _conversation_note(session: _Session, previous: _Session | None, rng: random.Random) -> str:
    """The durable conversation note: the turns, one paragraph each, with the speaker's name."""
    thread, stage = session.thread, session.stage
    fill = {
        "phrase": thread.phrase,
        "previous": previous.stage.title.lower() if previous else "a while ago",
    }
    turns = list(stage.turns)
    if len(turns) % 2:
        turns.append(rng.choice(content.AGENT_CLOSERS).format(**fill))
    # Small talk is optional, as in real chats; the turn count stays within 4 to 12.
    if rng.random() < 0.4:
        user, agent = rng.choice(content.OPENERS)
        if previous is None and "{previous}" in agent:
            agent = "Of course, go ahead."
        turns[:0] = [user.format(**fill), agent.format(**fill)]
    if rng.random() < 0.5 and len(turns) <= 10:
        user, agent = rng.choice(content.CLOSERS)
        turns += [user.format(**fill), agent.format(**fill)]
    speakers = (thread.user, content.AGENT)
    paragraphs = [f"**{speakers[i % 2]}:** {text}" for i, text in enumerate(turns)]
    person = content.USERS[thread.user]
    footer = f"Filed under {_link(thread.project)} with {_link(person)}"
    if previous is not None:
        footer += f"; follows {_link(previous.conversation_title)}"
    data = {
        "type": "conversation",
        "date": session.when.date(),
        "time": _Quoted(session.when.strftime("%H:%M:%S")),
        "user_id": thread.user,
        "chat_id": session.chat,
        "session": session.session_path,
        "participants": [thread.user, content.AGENT],
        "tags": ["conversation", thread.key],
    }
    body = "\n\n".join([f"# {stage.title}", *paragraphs, footer + "."])
    return _frontmatter(data) + "\n" + body + "\n"


def _memory_note(
    memory: content.MemorySpec,
    by_stage: dict[tuple[str, int], _Session],
    now: datetime,
) -> str:
    """A typed memory note; `source` links the conversation it was learned in."""
    source = by_stage[memory.source] if memory.source else None
    data: dict[str, Any] = {
        "type": memory.type,
        "confidence": memory.confidence,
        "created": source.when.date() if source else now.date(),
        "tags": list(memory.tags),
        "related": [_link(title) for title in memory.related],
    }
    if source is not None:
        data["source"] = _link(source.conversation_title)
    return _frontmatter(data) + f"\n# {memory.title}\n\n{memory.body}"


def _other_note(other: content.OtherSpec, sessions: list[_Session]) -> str:
    """An ordinary note; a project note also lists its thread's conversations, oldest first."""
    body = other.body
    if other.thread is not None:
        items = [f"- {_link(s.conversation_title)}" for s in sessions if s.thread.key == other.thread]
        body += "\n## Conversations\n\n" + "\n".join(items) + "\n"
    return _frontmatter(other.frontmatter) + "\n" + body


# -- the destination folder --------------------------------------------------------------------


def _read_marker(dest: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((dest / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("generator") != _GENERATOR:
        return None
    return data


def _previous_files(dest: Path) -> set[str]:
    """The files an earlier demo wrote into `dest`; `VaultError` if `dest` must not be written."""
    if dest.exists() and not dest.is_dir():
        raise VaultError(f"{dest}: is a file, not a folder; choose a folder for the demo vault")
    if not dest.exists() or not any(dest.iterdir()):
        return set()
    marker = _read_marker(dest)
    if marker is None:
        raise VaultError(
            f"{dest}: the folder is not empty and is not a demo vault; refusing to write the demo "
            "into it. Choose an empty or new folder."
        )
    files = marker.get("files", [])
    return {f for f in files if isinstance(f, str)}


def _remove(dest: Path, stale: set[str]) -> None:
    """Delete files an earlier demo wrote that this one does not (sessions move with `now`)."""
    root = dest.resolve()
    for rel in sorted(stale):
        path = (dest / rel).resolve()
        # The marker is plain JSON in the vault: never follow it out of the vault.
        if not path.is_relative_to(root) or path == root or not path.is_file():
            continue
        path.unlink()
        for parent in path.parents:
            if parent == root or not parent.is_relative_to(root):
                break
            try:
                parent.rmdir()
            except OSError:
                break


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # newline="\n" so the bytes are the same on every platform (the determinism promise).
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
