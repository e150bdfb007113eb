"""Bytes of one file in, a `Note` out, or a `NoteError` that says what is wrong with the file.

Frontmatter is read the way Obsidian reads it (YAML 1.2 scalars: `14:03` is a string, `yes` is a
string, `0123` is 123) with a safe loader that refuses alias bombs before anything is expanded.
Everything that can go wrong with one file's content ends as a `NoteError`, so a scan can skip the
file and go on; but a frontmatter block that is not valid YAML does not cost the note: its properties are read
line by line (`companion.vault.frontmatter_lenient`) and the note says so in `frontmatter_problem`. A caller that
edits the note reads it with `strict=True`, where such a block is a `NoteError` as before.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from companion.errors import NoteError
from companion.vault.frontmatter_lenient import read_leniently
from companion.vault.links import extract, frontmatter_links, frontmatter_tags, merge_tags
from companion.vault.notes import MEMORY_TYPES, Note, NoteKind
from companion.vault.yamlsafe import (
    MAX_ALIASES,
    MAX_FRONTMATTER_BYTES,
    AliasBombError,
    Frontmatter,
    NotAMappingError,
    load_frontmatter,
)

__all__ = ["HANDLER", "MAX_ALIASES", "KindRules", "classify", "load_frontmatter", "parse_note"]

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
"""Notes larger than this are refused unless the caller raises the limit (`index.max_note_mb`)."""


class ObsidianYAMLHandler(YAMLHandler):
    """python-frontmatter handler for Obsidian: `---` on the first line, closed by `---`.

    python-frontmatter's own `parse` strips the text (losing line numbers) and also accepts JSON and
    TOML blocks, which Obsidian does not; this handler splits without stripping and loads with
    `FrontmatterLoader`.
    """

    FM_BOUNDARY = re.compile(r"^---[ \t]*$", re.MULTILINE)
    START_DELIMITER = END_DELIMITER = "---"

    def detect(self, text: str) -> bool:
        """True when the text opens with a frontmatter block that is closed."""
        return self.split_lines(text) is not None

    def split(self, text: str) -> tuple[str, str]:
        """Frontmatter text and body; raises `ValueError` when there is no frontmatter block."""
        parts = self.split_lines(text)
        if parts is None:
            raise ValueError("no frontmatter block")
        return parts[0], parts[1]

    def split_lines(self, text: str) -> tuple[str, str, int] | None:
        """Frontmatter text, body, and the 0-based line the body starts on; None without one."""
        opening = self.FM_BOUNDARY.match(text)
        if opening is None:
            return None
        closing = self.FM_BOUNDARY.search(text, opening.end() + 1)
        if closing is None or opening.end() >= len(text):
            return None
        fm_text = text[opening.end() + 1 : closing.start()]
        body_start = closing.end() + 1 if closing.end() < len(text) else closing.end()
        body_line = text.count("\n", 0, body_start)
        return fm_text, text[body_start:], body_line

    def load(self, fm: str, **kwargs: object) -> dict[str, Any]:
        """Parse frontmatter text into JSON-safe properties."""
        return load_frontmatter(fm).data


HANDLER = ObsidianYAMLHandler()
"""The one frontmatter handler every note goes through."""


@dataclass(frozen=True)
class KindRules:
    """Where the different kinds of notes live (from `CompanionConfig`)."""

    sessions_folder: str = "ops/sessions"
    """Vault-relative folder of session summaries."""
    conversation_folders: tuple[str, ...] = ()
    """Folders whose notes are conversation notes even without `type: conversation`."""


def _under(path: str, folder: str) -> bool:
    folder = folder.strip("/")
    return bool(folder) and (path == folder or path.startswith(folder + "/"))


def classify(path: str, frontmatter: dict[str, Any], rules: KindRules | None = None) -> tuple[NoteKind, str | None]:
    """The kind of a note and its `type` (lower-cased, only when `type` is a single string).

    A session summary is known by its folder; a conversation by `type: conversation` or its folder;
    a memory note by a `type` from `MEMORY_TYPES`.
    """
    rules = rules or KindRules()
    raw_type = frontmatter.get("type")
    note_type = (raw_type.strip().lower() or None) if isinstance(raw_type, str) else None
    if _under(path, rules.sessions_folder):
        return "session", note_type
    if note_type == "conversation" or any(_under(path, f) for f in rules.conversation_folders):
        return "conversation", note_type
    if note_type in MEMORY_TYPES:
        return "memory", note_type
    return "note", note_type


def aliases_of(frontmatter: dict[str, Any]) -> tuple[str, ...]:
    """The `aliases` (or legacy `alias`) property as a tuple of non-empty strings."""
    found: list[str] = []
    for key in ("aliases", "alias"):
        value = frontmatter.get(key)
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, str | int | float) and not isinstance(item, bool):
                text = str(item).strip()
                if text and text not in found:
                    found.append(text)
    return tuple(found)


def title_of(path: str) -> str:
    """The note title Obsidian shows: the file name without `.md`."""
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def decode_text(path: str, raw: bytes) -> str:
    """UTF-8 text of a note with newlines normalised; `NoteError` for binary or non-UTF-8 bytes."""
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise NoteError(
            path,
            f"looks like a binary file (NUL byte at offset {nul}), not Markdown; "
            "rename it if it is not a note, or re-save it as UTF-8 text",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NoteError(
            path,
            f"is not valid UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start} "
            f"({exc.reason}); re-save the file as UTF-8",
        ) from exc
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def too_large_reason(size: int, max_bytes: int) -> str:
    """The `NoteError` reason for a note over the size limit."""
    return (
        f"is {size:,} bytes, over the {max_bytes:,}-byte limit for one note; "
        "raise index.max_note_mb in .companion/companion.yaml to read it"
    )


def parse_note(
    path: str,
    raw: bytes,
    *,
    kind: NoteKind | None = None,
    rules: KindRules | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    strict: bool = False,
) -> Note:
    """Parse a note's bytes. `kind` overrides classification; every bad input raises `NoteError`.

    A frontmatter block that is not valid YAML is read line by line and named in the note's `frontmatter_problem`;
    with `strict` (for a caller about to edit the note) it raises `NoteError` instead.
    """
    if len(raw) > max_bytes:
        raise NoteError(path, too_large_reason(len(raw), max_bytes))
    text = decode_text(path, raw)
    parts = HANDLER.split_lines(text)
    if parts is None:
        frontmatter, body, body_line = Frontmatter({}, {}), text, 0
    else:
        fm_text, body, body_line = parts
        frontmatter = _parse_frontmatter(path, fm_text, strict)
    found_kind, note_type = classify(path, frontmatter.data, rules)
    facts = extract(body, body_line)
    property_links = frontmatter_links(frontmatter.data, frontmatter.key_lines)
    return Note(
        path=path,
        title=title_of(path),
        body=body,
        body_line=body_line,
        content_hash=hashlib.sha256(raw).hexdigest(),
        kind=kind or found_kind,
        note_type=note_type,
        frontmatter=frontmatter.data,
        links=(*property_links, *facts.links),
        tags=merge_tags(frontmatter_tags(frontmatter.data), facts.tags),
        aliases=aliases_of(frontmatter.data),
        headings=facts.headings,
        block_ids=facts.block_ids,
        frontmatter_problem=frontmatter.problem,
    )


def _parse_frontmatter(path: str, fm_text: str, strict: bool) -> Frontmatter:
    size = len(fm_text.encode("utf-8"))
    if size > MAX_FRONTMATTER_BYTES:
        raise NoteError(
            path,
            f"frontmatter is {size // 1024} KiB, "
            f"over the {MAX_FRONTMATTER_BYTES // 1024} KiB limit; "
            "move the bulk of it into the note body",
        )
    try:
        # The frontmatter starts on file line 1, right after the opening `---`.
        return load_frontmatter(fm_text, first_line=1)
    except AliasBombError as exc:
        # Refused, not read around: a block built to exhaust the reader is no one's notes.
        raise NoteError(path, str(exc)) from exc
    except (yaml.YAMLError, NotAMappingError) as exc:
        if strict:
            raise NoteError(path, _strict_reason(exc)) from exc
        return read_leniently(fm_text, 1, _failure(exc, fm_text))
    except ValueError as exc:
        raise NoteError(path, str(exc)) from exc
    except RecursionError as exc:
        raise NoteError(path, "frontmatter is nested too deeply to read") from exc


def _strict_reason(exc: Exception) -> str:
    """The `NoteError` reason for a block YAML refused, when the note may not be read line by line."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 2}" if mark is not None else "frontmatter"
        return f"malformed YAML frontmatter at {where}: {exc.problem or exc.context or 'invalid YAML'}"
    return str(exc)


def _failure(exc: Exception, fm_text: str) -> str:
    """Where (as a file line) and why YAML refused a block, in a few words."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        return f"line {mark.line + 2}: {problem}" if mark is not None else problem
    if isinstance(exc, yaml.reader.ReaderError):
        code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "?")
        line = fm_text.count("\n", 0, max(exc.position, 0)) + 2
        return f"line {line}: the character #x{code:04x} is not allowed in YAML"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
