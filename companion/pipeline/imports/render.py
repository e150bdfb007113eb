"""A session as a conversation note: its frontmatter, one paragraph per turn with the speaker named, and the note's
name; and the check that an existing note is still ours to rewrite.

Every text is redacted first (title, project, working folder and source path too), then made one line of plain text
as the history notes' are (`plain_line`: no link, embed, tag, comment or HTML survives, and no line can pass for the
note's structure). Each paragraph starts with its speaker (`**user:** ...`), so the indexer cuts the note into
windows of turns as it cuts every conversation note; a tool call is one line under the turn it belongs to
(`→ Read: src/app.py`). Compaction summaries and each sub-agent's side chain are sections of their own.

The note carries `generated_by: import-v1` and `import_sha`, a digest of its text as written: a note whose text no
longer matches was edited, and is left alone. Text below `%% companion: end of import %%` and properties the user
added are the user's, and are kept when the note is rewritten.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from companion.errors import CurationError, TranscriptError
from companion.pipeline.imports.records import Session, Turn
from companion.pipeline.transcripts import plain_line
from companion.secrets import RULES_VERSION
from companion.vault.frontmatter_edit import properties, scalar, split_body

IMPORTED_BY = "import-v1"
"""The `generated_by` value of imported notes: the marker that a note is the import's to rewrite."""

END_MARKER = "%% companion: end of import %%"
"""The line that ends the imported text; what the user writes below it is kept."""

MAX_TURN_CHARS = 20_000
"""The most characters of one turn a note holds (the transcript keeps the rest)."""

TITLE_CHARS = 80

_OUR_KEYS = frozenset(
    {
        "type",
        "agent",
        "project",
        "cwd",
        "git_branch",
        "session_id",
        "date",
        "time",
        "model",
        "turns",
        "source",
        "generated_by",
        "import_sha",
        "redaction",
    }
)
_REDACTED = re.compile(r"\[REDACTED:[^\]]*\]")
_UNSAFE_NAME = re.compile(r"[\\/:*?\"<>|#^\[\]%`\x00-\x1f\x7f]+")


@dataclass(frozen=True)
class Existing:
    """What an imported note already holds that a rewrite keeps."""

    extra: dict[str, Any]
    """Properties the user added."""
    tail: str
    """The user's text below the end marker."""
    session_id: str
    """The session it was imported from."""


def title_of(session: Session, redact: Callable[[str], str]) -> str:
    """The note's title: the agent's own summary, else the user's first request, redacted, on one line, trimmed."""
    raw = session.summary or session.first_request() or f"{session.agent} session {session.session_id[:8]}"
    text = " ".join(_REDACTED.sub("…", redact(raw)).split())
    if len(text) > TITLE_CHARS:
        text = text[:TITLE_CHARS].rsplit(" ", 1)[0].rstrip(" ,.;:-") + " …"
    return text


def safe_name(text: str, fallback: str) -> str:
    """`text` as a file or folder name: no path separator, nothing Obsidian reads as a link, heading or block
    reference, no leading dot, no trailing space or dot."""
    name = " ".join(_UNSAFE_NAME.sub(" ", text).split()).strip(" .")
    return name or fallback


def _line(text: str, redact: Callable[[str], str]) -> str:
    # Redacted whole before it is cut: a key cut in two at the limit would be recognised by no rule.
    red = redact(text)
    shown = red if len(red) <= MAX_TURN_CHARS else red[:MAX_TURN_CHARS].rstrip() + " …"
    line = plain_line(shown)
    if len(red) > MAX_TURN_CHARS:
        line += f" *({len(red) - MAX_TURN_CHARS} more characters are in the transcript)*"
    return line


def _paragraphs(turns: list[Turn], redact: Callable[[str], str]) -> list[str]:
    """One paragraph per thing said; a tool call is a line under the paragraph of its speaker."""
    paragraphs: list[list[str]] = []
    last_speaker = ""
    for turn in turns:
        speaker = plain_line(turn.speaker)
        if turn.kind == "tool":
            line = "→ " + _line(turn.text, redact)
            if paragraphs and last_speaker == speaker:
                paragraphs[-1].append(line)
            else:
                paragraphs.append([f"**{speaker}:** {line}"])
        else:
            paragraphs.append([f"**{speaker}:** {_line(turn.text, redact)}"])
        last_speaker = speaker
    return ["\n".join(lines) for lines in paragraphs]


def body(session: Session, title: str, redact: Callable[[str], str]) -> tuple[str, int]:
    """The imported text (title, turns, sections) and how many paragraphs of turns it holds."""
    ordered = session.sorted_turns()
    main = [t for t in ordered if not t.chain and t.kind != "summary"]
    summaries = [t for t in ordered if t.kind == "summary"]
    chains: dict[str, list[Turn]] = {}
    for turn in ordered:
        if turn.chain and turn.kind != "summary":
            chains.setdefault(turn.chain, []).append(turn)
    parts = [f"# {plain_line(title)}", *_paragraphs(main, redact)]
    count = len(parts) - 1
    if summaries:
        parts.append("## Compaction summaries")
        parts += [f"**summary:** {_line(t.text, redact)}" for t in summaries]
    for chain, turns in chains.items():
        paragraphs = _paragraphs(turns, redact)
        count += len(paragraphs)
        parts += [f"## Sub-agent {plain_line(redact(chain))}", *paragraphs]
    # The end marker closes the last paragraph rather than standing alone, so it never becomes a window of its own.
    return "\n\n".join(parts) + "\n", count


def digest(part: str) -> str:
    """The digest of an imported text, kept as `import_sha`."""
    return hashlib.sha256(part.encode("utf-8", "replace")).hexdigest()[:16]


def render_note(
    session: Session,
    title: str,
    source: str,
    redact: Callable[[str], str],
    extra: Mapping[str, Any],
    tail: str,
) -> tuple[str, int]:
    """The whole note (our frontmatter, the user's properties, the imported text, the end marker, the user's tail)
    and the paragraphs of turns it holds."""
    part, count = body(session, title, redact)
    started = session.started()
    local = started.astimezone() if started is not None else datetime.fromtimestamp(0).astimezone()
    head = ["---", "type: conversation", f"agent: {scalar(session.agent)}"]
    for key, value in (("project", session.project), ("cwd", session.cwd), ("git_branch", session.branch)):
        if value:
            head.append(f"{key}: {scalar(redact(value))}")
    head.append(f"session_id: {scalar(redact(session.session_id))}")
    head += [f"date: {local:%Y-%m-%d}", f"time: {scalar(f'{local:%H:%M:%S}')}"]
    if session.model:
        head.append(f"model: {scalar(redact(session.model))}")
    head += [f"turns: {count}", f"source: {scalar(redact(source))}"]
    head += [f"generated_by: {IMPORTED_BY}", f"import_sha: {digest(part)}", f"redaction: {RULES_VERSION}"]
    if extra:
        head.append(yaml.safe_dump(dict(extra), allow_unicode=True, sort_keys=False, default_flow_style=False).rstrip())
    return "\n".join([*head, "---", ""]) + part + END_MARKER + "\n" + tail, count


def read_existing(path: Path, text: str) -> Existing:
    """What an imported note holds that a rewrite keeps; `TranscriptError` when it is not ours or was edited."""
    try:
        props = properties(text, str(path))
    except CurationError as exc:
        raise TranscriptError(f"{exc}; the note was left as it is") from None
    if props.get("generated_by") != IMPORTED_BY:
        raise TranscriptError(
            f"{path}: a note of this name exists and was not made by `companion import` (no generated_by: "
            f"{IMPORTED_BY}), so it was left as it is"
        )
    lines = split_body(text).splitlines(keepends=True)
    end = next((i for i, line in enumerate(lines) if line.rstrip("\r\n") == END_MARKER), None)
    part = "".join(lines[:end]) if end is not None else None
    if part is None or props.get("import_sha") != digest(part):
        raise TranscriptError(
            f"{path}: this imported note was edited (by hand or by a formatter), so it is no longer updated and was "
            f"left as it is; move your text below the line {END_MARKER!r} and undo the other changes, or delete the "
            "note to have it imported again"
        )
    assert end is not None
    extra = {k: v for k, v in props.items() if k not in _OUR_KEYS}
    return Existing(extra, "".join(lines[end + 1 :]), str(props.get("session_id", "")))
