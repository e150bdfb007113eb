"""A timeline drawn from one workspace: its anchor (a day, a moment or a note), the sessions and dated notes either
side of it, and each entry's line (a session's exchange, the start of a note's text).

`companion.agent.timeline` places happenings on plain values; this module reads them from the index, the recall
engine's sessions and the vault. The `AgentApi` checks the arguments, resolves the note named and redacts what is
returned.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from typing import Any

from companion.agent import arguments
from companion.agent.timeline import Anchor, Happening, note_moment, place
from companion.agent.views import Timeline, TimelineEntry
from companion.errors import AgentInputError, NoteError
from companion.recall.temporal import summarise
from companion.secrets import redact_text
from companion.vault.sessions import local_moment
from companion.words import one_line
from companion.workspace import Workspace

LINE_CHARS = 160
"""Longest one-line summary (a timeline entry's)."""

_NOT_PROSE = re.compile(r"#.*|(?:!\[\[[^\]]*\]\]\s*)+|-{3,}")  # a heading, embeds alone, a rule


def anchor_at(workspace: Workspace, date: str | None, path: str | None) -> Anchor:
    """The moment a timeline is drawn around: the note at `path` (its date, else when its file was modified), else
    `date` (a day or a moment, checked as the `date` argument), else now."""
    if path is not None:
        record = workspace.manifest.note(path)
        properties = record.frontmatter if record is not None else _frontmatter(workspace, path)
        placed = note_moment(properties, posixpath.basename(path))
        if placed is not None:
            return Anchor(placed[0], False, path, "date", timed=placed[1])
        try:  # a note left out of the index has no record
            mtime = record.mtime_ns / 1e9 if record is not None else (workspace.vault.root / path).stat().st_mtime
        except OSError as exc:
            raise AgentInputError("note", f"{path} cannot be read: {exc.strerror}") from exc
        return Anchor(dt.datetime.fromtimestamp(mtime).replace(microsecond=0), False, path, "modified")
    if date is None or not str(date).strip():
        return Anchor(dt.datetime.now().replace(second=0, microsecond=0), False, None, "now")
    text = arguments.text("date", date).strip()
    moment = arguments.moment(text, "date")
    assert moment is not None
    day_only = len(text) <= 10
    return Anchor(local_moment(moment), day_only, None, "date", timed=not day_only)


def draw(workspace: Workspace, anchor: Anchor, before: int, after: int, days: int) -> Timeline:
    """The `before` entries before the anchor, what is at it and the `after` entries after it, within `days` either
    side, oldest first; not yet redacted."""
    first = anchor.when.date() - dt.timedelta(days=days)
    last = anchor.when.date() + dt.timedelta(days=days)
    happenings, carriers = _happenings(workspace, first, last)
    if anchor.path is not None:
        # A session named by its summary or its conversation note is one entry; its moment is to the minute.
        path = carriers.get(anchor.path, anchor.path)
        mine = next((h for h in happenings if h.path == path), None)
        if mine is None:  # an undated note, or one outside the index, is still where its timeline is drawn
            record = workspace.manifest.note(path)
            title = record.title if record else posixpath.basename(path).removesuffix(".md")
            note_type = record.note_type if record else None
            happenings.append(Happening(path, title, "note", anchor.when, anchor.timed, note_type))
        elif mine.kind == "session":
            anchor = Anchor(mine.when, False, path, "session")
    placed = place(happenings, anchor, before, after)
    # A note's line is the start of its text, read for the few placed only.
    lines = {p.happening.path: _opening(workspace, p.happening) for p in placed if not p.happening.summary}
    entries = tuple(
        TimelineEntry(
            position=p.position,
            kind=p.happening.kind,
            path=p.happening.path,
            title=p.happening.title,
            when=p.happening.stamp(),
            note_type=p.happening.note_type,
            summary=p.happening.summary or lines.get(p.happening.path, ""),
        )
        for p in placed
    )
    when = anchor.when.isoformat(timespec="minutes") if anchor.timed else anchor.when.date().isoformat()
    return Timeline(when, anchor.source, anchor.path, days, entries)


def _frontmatter(workspace: Workspace, path: str) -> dict[str, Any]:
    """The properties of a note left out of the index (a session summary), read from its file."""
    try:
        return workspace.vault.read_note(path).frontmatter
    except NoteError:
        return {}


def _happenings(workspace: Workspace, first: dt.date, last: dt.date) -> tuple[list[Happening], dict[str, str]]:
    """The sessions and dated notes from `first` to `last`, a session once; and for each note that stands for a
    session (its summary, its conversation note), the entry's path."""
    engine = workspace.recall()
    happenings: list[Happening] = []
    carriers: dict[str, str] = {}
    for ref in engine.sessions_since(first, dt.datetime.combine(last, dt.time.max)):
        when = ref.summary.when
        assert when is not None  # sessions_since keeps only sessions with a time
        carriers.update(dict.fromkeys(ref.paths, ref.carrier))
        note_type = ref.note.note_type if ref.note is not None else None
        line = one_line(summarise(ref.summary), LINE_CHARS)
        happenings.append(Happening(ref.carrier, ref.title, "session", when, True, note_type, line))
    for record in workspace.manifest.placed_within(first.isoformat(), last.isoformat()):
        if record.path in carriers:
            continue
        placed = note_moment(record.frontmatter, record.title)
        if placed is not None and first <= placed[0].date() <= last:
            happenings.append(Happening(record.path, record.title, "note", placed[0], placed[1], record.note_type))
    return happenings, carriers


def _opening(workspace: Workspace, happening: Happening) -> str:
    """The start of a note's text as one line: its first lines of prose, past headings and embeds."""
    try:
        # Redacted whole before its first lines are taken: a cut could leave a secret unrecognisable.
        body = redact_text(workspace.vault.read_note(happening.path).body, keep_lines=True)
    except NoteError:
        return ""
    prose = [line for line in body.splitlines() if line.strip() and not _NOT_PROSE.fullmatch(line.strip())]
    return one_line(" ".join(prose[:8]), LINE_CHARS)
