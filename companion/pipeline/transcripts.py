"""The history notes of an `embed` processor: an agent's entries, one note per day, for the indexer to embed.

The pipeline calls `embed_agent` with every entry it read, as redaction left them, so nothing redaction removes
reaches a note, the lexical index or the vector store. Each entry becomes a section of the note of its day (the day
of its own timestamp): a heading with its time and a key that lets a later run find it again (`## 14:03:00 ·
3f2a9c1b7d`), and one line per turn (`**user:** ...`). The indexer chunks such a note by its headings, so each
entry is a passage of its own in recall, and the note's `date` serves recall's date expressions.

What an entry says can never pass for the note's structure: each turn is one line (all line breaks, Unicode ones
included, become spaces; control characters go), it starts with the speaker, and what Markdown or Obsidian would
read as a comment, a link, an embed, a tag or HTML is escaped. The key is a hash of the entry's source (as the config
names it) and id, never the id itself, which may hold what redaction removes (an email in a session id).

A note is rebuilt from the sections it already holds plus this run's entries: an entry `retain` has since dropped
from the log stays in its note (recall keeps finding it; the archives keep its full text), and an entry read again
replaces its section. Kept sections go through the list's redaction again, so a note written before `redact` was
configured loses its secrets on the next run. Only notes this processor made (`generated_by: embed-v1`) whose
entries part is as it wrote it (`history_sha`) are rebuilt: a note whose entries were edited by hand, or by a
formatter, is left alone with a warning, so no edit is ever lost. Text below `%% companion: end of history %%` is
the user's and is kept. Nothing here writes: the pipeline writes the notes atomically.
"""

from __future__ import annotations

import glob
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from companion.errors import CurationError, TranscriptError
from companion.pipeline.history import Entry
from companion.pipeline.processors import EmbedProcessor
from companion.pipeline.summarize import AUTO_WRITE_ENV, META_KEYS, auto_write_mode
from companion.specs import output_problems
from companion.vault.frontmatter_edit import properties, scalar, split_body
from companion.vault.paths import inside_vault, vault_relative

EMBEDDED_BY = "embed-v1"
"""The `generated_by` value of the notes: the marker that a note is the processor's to rebuild."""

END_MARKER = "%% companion: end of history %%"
"""The line that ends the companion's part of a history note; everything below it is the user's and is kept."""

_STATUS = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_HEADING = re.compile(r"## (?P<time>\d\d:\d\d:\d\d) · (?P<key>[0-9a-f]{10})")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Inline text Obsidian or Markdown would read as more than text: a comment (%%) and a link or embed ([[) get a
# zero-width space between the pair; a tag (#word) and HTML (<) a backslash. Emphasis (*, _) only styles the line.
_DOUBLED = re.compile(r"%(?=%)|\[(?=\[)")
_TAG = re.compile(r"(^|\s)#(?=[^\s#])")
_SPEAKER_CHARS = re.compile(r"[^\w .'@-]")
_OUR_KEYS = frozenset({"type", "agent", "date", "source", "entries", "generated_by", "history_sha", "redaction"})
_DAY_NAME = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Redaction:
    """The list's redaction, applied again to the sections a note keeps."""

    text: Callable[[str], str]
    """Redacts one text."""
    signature: str
    """Names the redaction's rules (`redaction` in a note's frontmatter): a note redacted with other rules, or none,
    is redacted again even when none of its entries is read in the run."""


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
    """Notes left alone (the user's, edited, unreadable), each naming the note and what to do."""


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


def plain_line(text: str) -> str:
    """`text` as one line of plain text in a note: line breaks of every kind become spaces, control characters and
    unpaired surrogates go, and what would read as a comment, link, embed, tag or HTML is escaped."""
    text = text.encode("utf-8", "replace").decode("utf-8")  # an unpaired surrogate (a cut UTF-16 pair) becomes ?
    text = _CONTROL.sub("", " ".join(text.split()))
    # Backslashes first, so an escape added below can never be undone by one already in the text.
    text = text.replace("\\", "\\\\").replace("<", "\\<")
    text = _DOUBLED.sub(lambda m: m.group(0) + "\u200b", text)  # %% and [[, however many in a row
    return _TAG.sub(r"\1\\#", text)


def _speaker(name: str) -> str:
    return " ".join(_SPEAKER_CHARS.sub("", name).split())[:40] or "text"


def entry_key(origin: str, entry_id: str) -> str:
    """The hex key naming an entry in its note: a hash of its source's name in the config and its id (the id itself
    may hold a secret). Not of the log's path on disk, so a vault reached another way never doubles the entries, while
    two sources' entries of the same id stay apart."""
    return hashlib.sha256(f"{origin}\0{entry_id}".encode("utf-8", "replace")).hexdigest()[:10]


def render_entry(entry: Entry, key: str, max_chars: int) -> str:
    """The section of one entry: its heading, then a line per turn, cut after `max_chars` characters of text."""
    lines = [f"## {entry.ts:%H:%M:%S} · {key}"]
    left = max_chars
    omitted = 0
    for speaker, text in turns(entry.data):
        text = " ".join(text.split())
        if left <= 0:
            omitted += len(text)
            continue
        shown = text if len(text) <= left else text[:left].rstrip() + " …"
        omitted += max(0, len(text) - left)
        left -= len(text)
        lines.append(f"**{_speaker(speaker)}:** {plain_line(shown)}")
    if omitted:
        lines.append(f"*… {omitted} more characters are in the log and its archives*")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class _Section:
    time: str
    key: str
    text: str


def _digest(part: str) -> str:
    return hashlib.sha256(part.encode("utf-8", "replace")).hexdigest()[:16]


def _split(body: str, path: Path) -> tuple[str, str]:
    """The companion's part of a note's body (its entries) and the user's text below the end marker."""
    lines = body.splitlines(keepends=True)
    end = next((i for i, line in enumerate(lines) if line.rstrip("\r\n") == END_MARKER), None)
    if end is None:
        raise TranscriptError(
            f"{path}: the note has no line {END_MARKER!r}, so it was left as it is (it may hold your own text); put "
            "that line under the entries, or move the note elsewhere, and run again"
        )
    return "".join(lines[:end]), "".join(lines[end + 1 :])


def _sections(part: str) -> dict[str, _Section]:
    """The entry sections of the companion's part, by key; it is text this module wrote (its digest says so), so a
    section runs from its heading to the next one."""
    found: dict[str, _Section] = {}
    lines = part.split("\n")
    starts = [i for i, line in enumerate(lines) if _HEADING.fullmatch(line)]
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        heading = _HEADING.fullmatch(lines[start])
        assert heading is not None
        text = "\n".join(lines[start:end]).rstrip("\n") + "\n"
        found[heading.group("key")] = _Section(heading.group("time"), heading.group("key"), text)
    return found


def render_note(
    agent: str,
    day: str,
    sources: Sequence[str],
    sections: Sequence[str],
    extra: Mapping[str, Any],
    tail: str,
    redaction: str | None = None,
) -> str:
    """A history note: our frontmatter, the user's other properties, the sections, the end marker, the user's tail."""
    part = f"# History of {agent}, {day}\n\n" + "\n".join(sections) + "\n"
    # One source as a plain property (what summaries and extracted notes write), several as a list.
    source = scalar(sources[0]) if len(sources) == 1 else "[" + ", ".join(json.dumps(s) for s in sources) + "]"
    head = ["---", "type: history", f"agent: {scalar(agent)}", f"date: {day}", f"source: {source}"]
    head += [f"entries: {len(sections)}", f"generated_by: {EMBEDDED_BY}", f"history_sha: {_digest(part)}"]
    if redaction is not None:
        head.append(f"redaction: {redaction}")
    if extra:
        head.append(yaml.safe_dump(dict(extra), allow_unicode=True, sort_keys=False, default_flow_style=False).rstrip())
    return "\n".join([*head, "---", ""]) + part + END_MARKER + "\n" + tail


@dataclass(frozen=True)
class _Existing:
    sections: dict[str, _Section]
    sources: tuple[str, ...]
    extra: dict[str, Any]
    tail: str


def _read_existing(path: Path, text: str) -> _Existing:
    """What a history note already holds; `TranscriptError` when it is not ours to rebuild."""
    try:
        props = properties(text, str(path))
    except CurationError as exc:
        raise TranscriptError(f"{exc}; the note was left as it is") from None
    if props.get("generated_by") != EMBEDDED_BY:
        raise TranscriptError(
            f"{path}: a note of this name exists and was not made by the embed processor (no generated_by: "
            f"{EMBEDDED_BY}), so it was left as it is; move it, or change the embed processor's output"
        )
    part, tail = _split(split_body(text), path)
    if props.get("history_sha") != _digest(part):
        raise TranscriptError(
            f"{path}: the entries of this history note were edited (by hand or by a formatter), so the note is no "
            f"longer updated and was left as it is; move your text below the line {END_MARKER!r} and undo the other "
            "changes, or delete the note to have it rebuilt, and run again"
        )
    recorded = props.get("source")
    listed = recorded if isinstance(recorded, list) else [recorded] if recorded else []
    sources = tuple(str(s) for s in listed)
    extra = {k: v for k, v in props.items() if k not in _OUR_KEYS}
    return _Existing(_sections(part), sources, extra, tail)


def _redact_turns(section: str, redact: Callable[[str], str]) -> str:
    heading, turns_text = section.split("\n", 1)
    return f"{heading}\n{redact(turns_text)}"


def _day_note(
    processor: EmbedProcessor,
    agent: str,
    day: str,
    source: str,
    entries: Sequence[Entry],
    redaction: Redaction | None,
    origin: str,
) -> tuple[DayNote | None, str | None]:
    """The day's note as it should now read (none when unchanged), or a warning when it must be left alone."""
    relative = processor.relative(agent, day)
    path = processor.vault_root / relative
    problems = output_problems(relative)
    if not problems and not inside_vault(processor.vault_root, path.parent):
        problems = ["the folder leads out of the vault (a symlink)"]
    if problems:
        return None, f"{path}: the history note of agent '{agent}' cannot go there: {problems[0]}; nothing written"
    existing = _Existing({}, (), {}, "")
    before: bytes | None = None
    try:
        if path.exists():
            before = path.read_bytes()
            existing = _read_existing(path, before.decode("utf-8"))
    except UnicodeDecodeError:
        return None, f"{path}: the note is not UTF-8, so it was left as it is"
    except OSError as exc:
        return None, f"{path}: cannot read the note ({exc.strerror or exc}); left as it is"
    except TranscriptError as exc:
        return None, str(exc)
    sections = dict(existing.sections)
    if redaction is not None:
        # Sections this run does not read again (their entries left the log) still lose what redaction removes; the
        # heading is left out, so its time and key can never be taken for something to redact.
        sections = {k: _Section(s.time, k, _redact_turns(s.text, redaction.text)) for k, s in sections.items()}
    known = set(sections)
    for entry in entries:
        key = entry_key(origin, entry.id)
        sections[key] = _Section(f"{entry.ts:%H:%M:%S}", key, render_entry(entry, key, processor.spec.max_chars))
    ordered = sorted(sections.values(), key=lambda s: (s.time, s.key))
    sources = tuple(sorted({*existing.sources, source}))
    signature = redaction.signature if redaction is not None else None
    text = render_note(agent, day, sources, [s.text for s in ordered], existing.extra, existing.tail, signature)
    content = text.encode("utf-8", "replace")
    if content == before:
        return None, None
    return DayNote(path, day, len(ordered), len(set(sections) - known), content, before), None


def embed_agent(
    processor: EmbedProcessor,
    agent: str,
    source: Path,
    entries: Sequence[Entry],
    *,
    environ: Mapping[str, str],
    redaction: Redaction | None = None,
    origin: str = "",
) -> EmbedReport:
    """The day notes to write for the agent's entries (nothing written); `origin` is the source's name in the config
    (none: its path). Never raises but for a bad auto-write mode."""
    pattern = processor.spec.output.replace("{agent}", agent)
    if auto_write_mode(environ) == "off":
        return EmbedReport(pattern, reason=f"{AUTO_WRITE_ENV}=off: no history notes derived")
    kept = [e for e in entries if not (processor.spec.skip_status and is_status(e))]
    by_day: dict[str, list[Entry]] = {}
    for entry in kept:
        by_day.setdefault(entry.ts.date().isoformat(), []).append(entry)
    if redaction is not None:
        for day in _unredacted_days(processor, agent, redaction.signature):
            by_day.setdefault(day, [])
    source_rel = vault_relative(processor.vault_root, source)
    notes: list[DayNote] = []
    warnings: list[str] = []
    for day in sorted(by_day):
        note, warning = _day_note(processor, agent, day, source_rel, by_day[day], redaction, origin or source_rel)
        if note is not None:
            notes.append(note)
        if warning is not None:
            warnings.append(warning)
    reason = None if kept else "no entries to embed" + (" (all are status replies)" if entries else "")
    return EmbedReport(pattern, tuple(notes), len(kept), len(entries) - len(kept), reason, tuple(warnings))


def _unredacted_days(processor: EmbedProcessor, agent: str, signature: str) -> list[str]:
    """The days of the agent's history notes not yet redacted with these rules (only their first lines are read)."""
    parts = processor.relative(agent, "\0").split("\0")
    # Escaped, so brackets in a folder or agent name are not taken for a glob's or a regex's; a second {date} must
    # name the same day as the first.
    pattern = "*".join(glob.escape(part) for part in parts)
    day = r"(?P<day>\d{4}-\d{2}-\d{2})"
    shape = re.compile(day.join([re.escape(parts[0]), *(r"(?P=day)".join(map(re.escape, parts[1:])),)]))
    days: list[str] = []
    for path in processor.vault_root.glob(pattern):
        match = shape.fullmatch(path.relative_to(processor.vault_root).as_posix())
        if match is None:
            continue
        try:
            with path.open("rb") as handle:
                head = handle.read(4096)
        except OSError:
            continue
        ours = f"\ngenerated_by: {EMBEDDED_BY}\n".encode() in head
        if ours and f"\nredaction: {signature}\n".encode() not in head:
            days.append(match.group("day"))
    return days
