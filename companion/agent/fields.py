"""What an agent proposes, checked field by field before anything is written: a title that can name a file, one line
of text, no control characters, tags; each refusal names the field, so the agent can correct that one."""

from __future__ import annotations

import re
from collections.abc import Sequence

from companion.atomic import fit_name
from companion.errors import AgentInputError
from companion.secrets import redact_text

TITLE_CHARS = 120
"""The longest title, in characters."""
TITLE_BYTES = 200
"""The longest title in bytes of UTF-8, as the file name holds it: with `.md`, a numbered copy's ` 12` (the trash)
and room to spare it stays under the 255 bytes a file name may take (100 CJK characters are 300 bytes)."""

NOT_IN_NAMES = re.compile(r'[*"<>:|?#^\[\]]+')
"""Characters Obsidian refuses in a file or folder name, or reads there as link syntax."""
# C0 control characters but tab, line feed and carriage return: a NUL makes a note unreadable to every Markdown
# reader (and the indexer), the others are invisible in Obsidian and break YAML.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def checked_title(title: object) -> str:
    """The canonical title: one line, no path, no characters Obsidian refuses in a file name, spaces collapsed."""
    text = checked_line("title", title)
    if redact_text(text) != text:
        # A note's name is copied into links, the index, the audit log and sync tools, where no redaction reaches.
        raise AgentInputError(
            "title",
            "holds what reads as a secret or personal data (a key, a password, an account number, an email "
            "address); a note's name is copied into links and indexes, so give a title without it",
        )
    if "/" in text or "\\" in text:
        raise AgentInputError("title", f"{text!r} is a path; give the title alone and the folder apart")
    name = " ".join(NOT_IN_NAMES.sub(" ", text).split()).strip(" .")
    if not name or name.startswith("."):
        raise AgentInputError("title", f"{text!r} leaves no usable note name")
    if len(name) > TITLE_CHARS:
        raise AgentInputError("title", f"is {len(name)} characters long; at most {TITLE_CHARS}")
    size = len(name.encode("utf-8"))
    if size > TITLE_BYTES:
        # The file name is what the system limits, in bytes: 100 CJK characters or 50 emoji already take 200.
        raise AgentInputError(
            "title", f"is {size} bytes as a file name (UTF-8); at most {TITLE_BYTES} bytes, so shorten it"
        )
    return name


_REDACTION_TAG = re.compile(r"\[REDACTED:[A-Za-z_]+\]")


def title_from_text(text: str) -> str:
    """A title from a memory's first words, when the agent gives none."""
    first = re.split(r"(?<=[.!?])\s|\n", text.strip(), maxsplit=1)[0]
    # The memory itself may hold a secret; its name never does (a redaction tag leaves an ellipsis).
    first = _REDACTION_TAG.sub("…", redact_text(first))
    words = " ".join(NOT_IN_NAMES.sub(" ", first.replace("/", " ").replace("\\", " ")).split())
    if len(words) > 80 or len(words.encode("utf-8")) > TITLE_BYTES:
        # Cut at a character boundary within the byte limit, then back to a word when there is one to go back to.
        cut = fit_name(words[:80], limit=TITLE_BYTES)
        words = cut.rsplit(" ", 1)[0] if " " in cut else cut
    if redact_text(words) != words:
        # Cut and cleaned for a file name, what is left may read as something to redact again (digits joined
        # into a number): the memory is then named plainly, rather than refused for a title the agent never gave.
        words = ""
    return checked_title(words or "Memory")


def checked_line(field_name: str, value: object) -> str:
    """`value` as one non-empty line of valid Unicode without control characters, stripped; refused otherwise."""
    if not isinstance(value, str):
        raise AgentInputError(field_name, f"expected text, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise AgentInputError(field_name, "is not valid Unicode (a lone surrogate)") from exc
    check_no_control(field_name, value)
    if any(ch in value for ch in "\r\n") or not value.strip():
        raise AgentInputError(field_name, "must be one non-empty line")
    return value.strip()


def check_no_control(field_name: str, text: str) -> None:
    """Refuse text holding a control character other than a tab or a line break, naming the first one."""
    found = _CONTROL.search(text)
    if found is not None:
        raise AgentInputError(
            field_name,
            f"holds the control character U+{ord(found.group()):04X} at character {found.start() + 1}; only tabs and "
            "line breaks are allowed, so remove it; nothing was written",
        )


def checked_tags(tags: object) -> list[str]:
    """Obsidian tags without their `#`, each once whatever its case; refused when one is no tag."""
    if isinstance(tags, str) or not isinstance(tags, Sequence):
        raise AgentInputError("tags", "expected a list of tags")
    clean: list[str] = []
    for tag in tags:
        text = checked_line("tags", tag).lstrip("#")
        if not re.fullmatch(r"[\w/-]+", text) or text.isdigit():
            raise AgentInputError("tags", f"{tag!r} is not an Obsidian tag (letters, digits, _ - and / only)")
        if text.casefold() not in {t.casefold() for t in clean}:
            clean.append(text)
    return clean
