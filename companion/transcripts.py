"""The history notes of an `embed` processor: an agent's entries, one note per day, for the indexer to embed.

The pipeline calls `embed_agent` with every entry it read, as redaction left them, so nothing redaction removes
reaches a note, the lexical index or the vector store. Each entry becomes a section of the note of its day: a
heading with its time and id, a hidden marker (`%% entry <ts> "<id>" %%`) that lets a later run find it again, and
one line per turn (`**user:** ...`). The indexer chunks such a note by its headings, so each entry is a passage of
its own in recall, and the note's `date` serves recall's date expressions.

A note is rebuilt from the sections it already holds plus this run's entries: an entry `retain` has since dropped
from the log stays in its note (recall keeps finding it; the archives keep its full text), and an entry read again
replaces its section (so a note written before `redact` was configured loses the secrets on the next run while the
entry is still in the log). Only notes this processor made (`generated_by: embed-v1`) are touched; text below
`%% companion: end of history %%` is the user's and is kept. Nothing here writes: the pipeline writes the notes
atomically and records them in the audit log.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from companion.errors import CompanionError, CurationError
from companion.frontmatter_edit import properties, scalar, split_body
from companion.history import Entry
from companion.processors import EmbedProcessor
from companion.specs import output_problems
from companion.summarize import AUTO_WRITE_ENV, META_KEYS, auto_write_mode

EMBEDDED_BY = "embed-v1"
"""The `generated_by` value of the notes: the marker that a note is the processor's to rebuild."""

END_MARKER = "%% companion: end of history %%"
"""The line that ends the companion's part of a history note; everything below it is the user's and is kept."""

_STATUS = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_ENTRY_MARK = re.compile(r"^%% entry (?P<ts>\S+) (?P<id>\".*\") %%[ \t]*$")
# Lines that would read as structure in the note: a heading (it would split an entry), a rule, a comment or our
# markers. A backslash keeps them as plain text in Markdown and in Obsidian.
_STRUCTURE = re.compile(r"^(\s*)(#|---|===|%%)", re.MULTILINE)


class TranscriptError(CompanionError):
    """A history note cannot be updated (not ours, unreadable); reported as a warning, never raised to the user."""


@dataclass(frozen=True)
class DayNote:
    """One history note to write (or that a dry run would write)."""

    path: Path
    """The note."""
    day: str
    """The day it covers, `YYYY-MM-DD`."""
    entries: int
    """How many entries it holds after the run."""
    added: int
    """How many of those it did not hold before."""
    content: bytes
    """Its new bytes."""
    before: bytes | None = None
    """Its bytes before, when it existed."""
    written: bool = False
    """True once the pipeline has written it."""


@dataclass(frozen=True)
class EmbedReport:
    """What an `embed` processor did (or would do) for one agent."""

    pattern: str
    """The output pattern, `{agent}` expanded (`{date}` left in)."""
    notes: tuple[DayNote, ...] = ()
    """The day notes that change."""
    entries: int = 0
    """Entries rendered into notes (status replies left out)."""
    status: int = 0
    """Entries left out as bare status replies (`skip_status`)."""
    reason: str | None = None
    """Why nothing was derived at all, when that is so."""
    warnings: tuple[str, ...] = ()
    """Notes left alone (the user's, unreadable), each naming the note and what to do."""


def turns(value: Any, key: str | None = None, role: str | None = None) -> list[tuple[str, str]]:
    """The (speaker, text) pairs of an entry's data, in order: a string's speaker is the `role` of the nearest object
    around it that has one, else its own key; fields that only address or describe the entry are left out."""
    if isinstance(value, dict):
        who = value.get("role")
        speaker = who.strip() if isinstance(who, str) and who.strip() else role
        return [t for k, item in value.items() if k not in META_KEYS for t in turns(item, str(k), speaker)]
    if isinstance(value, list):
        return [t for item in value for t in turns(item, key, role)]
    if isinstance(value, str) and value.strip():
        return [(role or key or "text", value.strip())]
    return []


def is_status(entry: Entry) -> bool:
    """Whether the entry is a poll and its answer: some turn is only a status word such as `HEARTBEAT_OK`."""
    return any(_STATUS.fullmatch(text) for _, text in turns(entry.data))


def _speaker(name: str) -> str:
    return " ".join(name.replace("*", "").split())[:40] or "text"


def _text(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    # Blank lines would split one turn into several Markdown blocks; keep the turn one paragraph.
    return _STRUCTURE.sub(r"\1\\\2", "\n".join(line for line in lines if line.strip()))


def render_entry(entry: Entry, max_chars: int) -> str:
    """The section of one entry: heading, marker, then a line per turn, cut after `max_chars` characters of text."""
    stamp = entry.ts.isoformat()
    lines = [f"## {entry.ts:%H:%M:%S} {' '.join(entry.id.split())}", f"%% entry {stamp} {json.dumps(entry.id)} %%"]
    left = max_chars
    omitted = 0
    for speaker, text in turns(entry.data):
        if left <= 0:
            omitted += len(text)
            continue
        shown = text if len(text) <= left else text[:left].rstrip() + " …"
        omitted += max(0, len(text) - left)
        left -= len(text)
        lines.append(f"**{_speaker(speaker)}:** {_text(shown)}")
    if omitted:
        lines.append(f"*… {omitted} more characters are in the log and its archives*")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class _Section:
    ts: str
    entry_id: str
    text: str


def _sections(body: str, path: Path) -> tuple[dict[str, _Section], str]:
    """The entry sections of a note's body by id, and the user's text below the end marker."""
    lines = body.splitlines(keepends=True)
    end = next((i for i, line in enumerate(lines) if line.strip() == END_MARKER), None)
    if end is None:
        raise TranscriptError(
            f"{path}: the note has no line {END_MARKER!r}, so it was left as it is (it may hold your own text); put "
            "that line under the entries, or move the note elsewhere, and run again"
        )
    tail = "".join(lines[end + 1 :])
    found: dict[str, _Section] = {}
    current: list[str] = []
    mark: re.Match[str] | None = None

    def close() -> None:
        if mark is not None:
            entry_id = json.loads(mark.group("id"))
            found[str(entry_id)] = _Section(mark.group("ts"), str(entry_id), "".join(current).rstrip("\n") + "\n")

    for i, line in enumerate(lines[:end]):
        nxt = _ENTRY_MARK.match(lines[i + 1].rstrip("\r\n")) if line.startswith("## ") and i + 1 < end else None
        if nxt is not None:
            close()
            current, mark = [line], nxt
        elif mark is not None:
            current.append(line)
    close()
    return found, tail


def render_note(agent: str, day: str, source: str, sections: Sequence[str], extra: Mapping[str, Any], tail: str) -> str:
    """A history note: our frontmatter, the user's other properties, the sections, the end marker, the user's tail."""
    head = ["---", "type: history", f"agent: {scalar(agent)}", f"date: {day}", f"source: {scalar(source)}"]
    head += [f"entries: {len(sections)}", f"generated_by: {EMBEDDED_BY}"]
    head += [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in extra.items()]
    head += ["---", f"# History of {agent}, {day}", ""]
    return "\n".join(head) + "\n" + "\n".join(sections) + "\n" + END_MARKER + "\n" + tail


_OUR_KEYS = frozenset({"type", "agent", "date", "source", "entries", "generated_by"})


def _rel(vault_root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(vault_root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _day_note(
    processor: EmbedProcessor, agent: str, day: str, source: str, entries: Sequence[Entry]
) -> tuple[DayNote | None, str | None]:
    """The day's note as it should now read (none when unchanged), or a warning when it must be left alone."""
    relative = processor.relative(agent, day)
    path = processor.vault_root / relative
    problems = output_problems(relative)
    root = processor.vault_root.resolve()
    if not problems and path.parent.exists() and not path.parent.resolve().is_relative_to(root):
        problems = ["the folder leads out of the vault (a symlink)"]
    if problems:
        return None, f"{path}: the history note of agent '{agent}' cannot go there: {problems[0]}; nothing written"
    sections: dict[str, _Section] = {}
    extra: dict[str, Any] = {}
    tail = ""
    before: bytes | None = None
    try:
        if path.exists():
            before = path.read_bytes()
            text = before.decode("utf-8")
            props = properties(text, str(path))
            if props.get("generated_by") != EMBEDDED_BY:
                raise TranscriptError(
                    f"{path}: a note of this name exists and was not made by the embed processor (no generated_by: "
                    f"{EMBEDDED_BY}), so it was left as it is; move it, or change the embed processor's output"
                )
            extra = {k: v for k, v in props.items() if k not in _OUR_KEYS}
            sections, tail = _sections(split_body(text), path)
    except UnicodeDecodeError:
        return None, f"{path}: the note is not UTF-8, so it was left as it is"
    except OSError as exc:
        return None, f"{path}: cannot read the note ({exc.strerror or exc}); left as it is"
    except (CurationError, TranscriptError) as exc:
        return None, str(exc)
    known = set(sections)
    for entry in entries:
        sections[entry.id] = _Section(entry.ts.isoformat(), entry.id, render_entry(entry, processor.spec.max_chars))
    ordered = sorted(sections.values(), key=lambda s: (_moment(s.ts), s.entry_id))
    content = render_note(agent, day, source, [s.text for s in ordered], extra, tail).encode("utf-8")
    if content == before:
        return None, None
    added = len(set(sections) - known)
    return DayNote(path, day, len(ordered), added, content, before), None


def _moment(ts: str) -> datetime:
    try:
        return datetime.fromisoformat(ts)
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)  # a marker edited by hand sorts first


def embed_agent(
    processor: EmbedProcessor, agent: str, source: Path, entries: Sequence[Entry], *, environ: Mapping[str, str]
) -> EmbedReport:
    """The day notes to write for the agent's entries (nothing written); never raises but for a bad auto-write
    mode."""
    pattern = processor.spec.output.replace("{agent}", agent)
    if auto_write_mode(environ) == "off":
        return EmbedReport(pattern, reason=f"{AUTO_WRITE_ENV}=off: no history notes derived")
    kept = [e for e in entries if not (processor.spec.skip_status and is_status(e))]
    by_day: dict[str, list[Entry]] = {}
    for entry in kept:
        by_day.setdefault(entry.ts.date().isoformat(), []).append(entry)
    source_rel = _rel(processor.vault_root, source)
    notes: list[DayNote] = []
    warnings: list[str] = []
    for day in sorted(by_day):
        note, warning = _day_note(processor, agent, day, source_rel, by_day[day])
        if note is not None:
            notes.append(note)
        if warning is not None:
            warnings.append(warning)
    reason = None if kept else "no entries to embed" + (" (all are status replies)" if entries else "")
    return EmbedReport(pattern, tuple(notes), len(kept), len(entries) - len(kept), reason, tuple(warnings))
