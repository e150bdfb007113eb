"""Properties read line by line, for a frontmatter block that is not valid YAML.

Obsidian still shows and searches the body of such a note, and agents often write values holding `: ` or ` #`
without quotes (`updated: 2026-08-17 runs 33-35 (next: the three units)`), which YAML refuses for the whole block.
Here each top-level property is read on its own: one YAML accepts alone keeps the value YAML gives it; one it refuses
is read as text, the text after its first `: `, stripped (a flow list `[a, b]` or `- item` lines under the key as a
list of strings, quoted text unquoted). Lines that name no property are left out and named in the problem.

Nothing read here is ever written back: every edit of properties parses the block strictly and refuses it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from companion.vault.yamlsafe import Frontmatter, load_frontmatter

# Characters a property name cannot start with when it is not quoted: YAML's indicators.
_NOT_A_NAME = frozenset("-?:,[]{}#&*!|>%@`")


@dataclass  # not frozen: the lines under a property are gathered as the block is walked
class _Entry:
    """One top-level property as found: its name, its line, the text after its first `: `, and the lines under it."""

    key: str
    line: int
    value: str
    head: str
    under: list[str] = field(default_factory=list)


def read_leniently(text: str, first_line: int, failure: str) -> Frontmatter:
    """The properties of a frontmatter block YAML refused (`failure` says where and why), read line by line.

    `first_line` is the 0-based file line of the block's first line, so `key_lines` and the problem name file lines.
    The result's `problem` tells the user what happened and what to fix.
    """
    entries, left_out = _entries(text)
    data: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    for entry in entries:
        key, value = _read(entry)
        data[key] = value
        key_lines[key] = first_line + entry.line
    return Frontmatter(data, key_lines, problem=_problem(failure, [first_line + n + 1 for n in left_out]))


def _entries(text: str) -> tuple[list[_Entry], list[int]]:
    """The top-level properties of the block, and the 0-based block lines that name none (left out)."""
    entries: list[_Entry] = []
    left_out: list[int] = []
    current: _Entry | None = None
    for number, line in enumerate(text.split("\n")):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            if current is not None:
                current.under.append(line)  # a blank line may belong to a block of text under the key
            continue
        if not all(ch.isprintable() or ch == "\t" for ch in line):
            left_out.append(number)
            current = None
            continue
        if line[0] in " \t" or stripped == "-" or stripped.startswith(("- ", "-\t")):
            # An indented line, or an item of a list written in column 0 under its key.
            if current is None:
                left_out.append(number)
            else:
                current.under.append(line)
            continue
        split = _split_key(line)
        if split is None:
            left_out.append(number)
            current = None
            continue
        current = _Entry(key=split[0], line=number, value=split[1], head=line)
        entries.append(current)
    return entries, left_out


def _split_key(line: str) -> tuple[str, str] | None:
    """A line's property name and the text after its first `: ` (or its closing `:`), or None when it names none."""
    at = 0
    while True:
        at = line.find(":", at)
        if at < 0:
            return None
        if at + 1 == len(line) or line[at + 1] in " \t":
            break
        at += 1
    key = line[:at].strip()
    if len(key) >= 2 and key[0] in "\"'" and key[-1] == key[0]:
        key = _unquote(key)
    elif not key or key[0] in _NOT_A_NAME or key[0] in "\"'":
        return None
    return (key, line[at + 1 :].strip()) if key else None


def _read(entry: _Entry) -> tuple[str, Any]:
    """A property's name and value: as YAML reads its lines alone when it can, else as text."""
    try:
        alone = load_frontmatter("\n".join([entry.head, *entry.under]))
    except (yaml.YAMLError, ValueError, RecursionError):
        alone = None
    if alone is not None and len(alone.data) == 1:
        return next(iter(alone.data.items()))
    return entry.key, _as_text(entry)


def _as_text(entry: _Entry) -> Any:
    """A value YAML refused, read as text: a list of strings, a string, or None when there is nothing."""
    value = entry.value
    lines = [line.strip() for line in entry.under if line.strip() and not line.strip().startswith("#")]
    items = [line[1:].strip() for line in lines if line == "-" or line.startswith(("- ", "-\t"))]
    if not value:
        if items:
            return [text for text in (_unquote(item) for item in items) if text]
        return None
    if value.startswith("[") and value.endswith("]"):
        return [text for text in (_unquote(part.strip()) for part in _split_flow(value[1:-1])) if text]
    if len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]:
        return _unquote(value)
    # Lines under it that are no list items continue the text, folded into one line as YAML folds plain text.
    return " ".join([value, *(line for line in lines if line != "-" and not line.startswith(("- ", "-\t")))])


def _split_flow(inner: str) -> list[str]:
    """The items between a flow list's brackets: split at commas outside quotes."""
    parts: list[str] = []
    quote = ""
    start = 0
    for index, ch in enumerate(inner):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'" and not inner[start:index].strip():
            quote = ch
        elif ch == ",":
            parts.append(inner[start:index])
            start = index + 1
    parts.append(inner[start:])
    return parts


def _unquote(text: str) -> str:
    """Text without its quotes when it is one quoted string (`''` in single quotes is one `'`; escapes in double
    quotes read as JSON reads them); as written otherwise (`"compiled" is not "done"` is two quoted words)."""
    if len(text) < 2 or text[0] not in "\"'" or text[-1] != text[0]:
        return text
    if text[0] == "'":
        inner = text[1:-1]
        return text if "'" in inner.replace("''", "") else inner.replace("''", "'")
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, str) else text


def _problem(failure: str, left_out: list[int]) -> str:
    """What the user is told: why, that the properties were read line by line, what was left out, what to do."""
    said = f"properties could not be read as YAML ({failure}) and were read line by line"
    if left_out:
        shown = ", ".join(str(n) for n in left_out[:5]) + (
            f" and {len(left_out) - 5} more" if len(left_out) > 5 else ""
        )
        said += (
            f"; {'line' if len(left_out) == 1 else 'lines'} {shown} could not be read and {_were(left_out)} left out"
        )
    return (
        f"{said}: fix that line in Obsidian (a value holding ': ' or ' #' needs quotes) to have them read as written; "
        "until then the companion indexes the note but will not edit its properties"
    )


def _were(items: list[int]) -> str:
    return "was" if len(items) == 1 else "were"
