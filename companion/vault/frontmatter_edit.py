"""Minimal, byte-preserving edits of one top-level property in a note's YAML frontmatter.

Only the edited property's own lines change: every other byte of the file (other properties, comments, blank
lines, the body, a UTF-8 BOM, CRLF line endings) stays as it was. Within the property too, what does not change
stays as written: a property set to the value it has is not touched, a list that only gains items keeps its items'
quoting and comments, and `rewrite_field` edits a value's text in place (a link's target) rather than writing it
anew. Every edit is checked by parsing the result with the project's own parser (`vault.parse`): when the edited
property does not read back as the intended value, or any other property reads differently, the frontmatter is too
unusual to edit by text and a `CurationError` is raised instead of returning a damaged note.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from companion.errors import CurationError, NoteError
from companion.vault.parse import HANDLER, decode_text
from companion.vault.yamlsafe import FrontmatterLoader, load_frontmatter

FieldValue = str | bool | list[str]
"""What a property can be set to: a string, a boolean, or a list of strings."""

_BOUNDARY = re.compile(r"---[ \t]*")
_STR_TAG = "tag:yaml.org,2002:str"
# Obsidian reads YAML 1.2, but other tools (and PyYAML's defaults) read YAML 1.1, where `yes`, `on`, `14:03` and
# `0123` are not strings: a plain scalar must read as a string under both.
_RESOLVERS = (FrontmatterLoader(""), yaml.SafeLoader(""))
# Characters a plain scalar may not start with: YAML indicators, quotes, and the ones that start a comment,
# a tag, an anchor, an alias, a block scalar, a directive or a reserved indicator.
_PLAIN_FIRST_FORBIDDEN = frozenset("-?:,[]{}#&*!|>'\"%@`")


@dataclass(frozen=True)
class _Block:
    """Where the frontmatter of a text sits: `text[start:end]` is the YAML between the `---` lines."""

    start: int
    """Index of the YAML's first character (just after the opening line)."""
    end: int
    """Index of the closing `---` line."""
    newline: str
    """The file's line ending, `\\n` or `\\r\\n`, taken from the opening line."""


@dataclass(frozen=True)
class _Entry:
    """One top-level property: its name and the span of its lines, `text[start:end]`."""

    key: str
    start: int
    end: int
    value_end: int = 0
    """Index just after its value's last character (after the `]` of a flow list)."""
    flow_list: bool = False
    """Its value is a list written in flow style, `[a, b]`."""


def set_field(text: str, key: str, value: FieldValue, *, path: str = "the note") -> str:
    """The text with top-level property `key` set to `value`, every other byte unchanged.

    An existing property's lines (the `key:` line, its indented lines and `- item` lines under it) are replaced; a
    missing property is appended at the end of the frontmatter; a note without frontmatter gets a block at the top.
    Lists are written in Obsidian's block style, an empty list as `[]`, booleans as `true`/`false`, and strings plain
    when YAML would read them back as the same string, otherwise double-quoted. `path` names the note in errors.
    Raises `CurationError` when the frontmatter does not parse or is too unusual to edit safely.
    """
    _check_value(key, value)
    before = _properties(text, path)
    bom, rest = _split_bom(text)
    block = _find_block(rest, path)
    if block is None:
        newline = line_ending(text)
        new_text = f"{bom}---{newline}{_render(key, value, newline)}---{newline}{rest}"
    else:
        entries = _entries(rest, block, path)
        matching = [entry for entry in entries if entry.key == key]
        if len(matching) > 1:
            raise _too_unusual(path, f"the property '{key}' is given {len(matching)} times")
        if matching:
            entry = matching[0]
            current = before.get(key)
            if type(current) is type(value) and current == value:
                return text  # already so: its lines stay as written, quoting and comments included
            # A list keeps the style the user wrote it in (flow `[a, b]`, or its own indentation of `- item`).
            like = rest[entry.start : entry.end]
            new_rest = rest[: entry.start] + _render(key, value, block.newline, like) + rest[entry.end :]
            extended = _extended(rest, entry, current, value, block.newline)
            if extended is not None:
                # Items added to a list: its items as written stay, if the text reads back right that way.
                expected = {**before, key: list(value) if isinstance(value, list) else value}
                if _reads_as(bom + extended, expected, path):
                    return bom + extended
        else:
            new_rest = rest[: block.end] + _render(key, value, block.newline) + rest[block.end :]
        new_text = bom + new_rest
    expected = dict(before)
    expected[key] = list(value) if isinstance(value, list) else value
    _verify(new_text, expected, key, path)
    return new_text


def rewrite_field(text: str, key: str, edit: Callable[[str], str], value: FieldValue, *, path: str = "the note") -> str:
    """The text with top-level property `key` set to `value` by passing its lines through `edit` (which changes a
    link's target, say), so its quoting, layout and comments stay as written.

    When the edited lines do not read back as `value` with every other property unchanged (an escape in a quoted
    string, a target that needs quoting), the property is written anew by `set_field` instead.
    """
    _check_value(key, value)
    before = _properties(text, path)
    bom, rest = _split_bom(text)
    block = _find_block(rest, path)
    matching = [] if block is None else [entry for entry in _entries(rest, block, path) if entry.key == key]
    if len(matching) == 1:
        entry = matching[0]
        edited = rest[: entry.start] + edit(rest[entry.start : entry.end]) + rest[entry.end :]
        expected = {**before, key: list(value) if isinstance(value, list) else value}
        if _reads_as(bom + edited, expected, path):
            return bom + edited
    return set_field(text, key, value, path=path)


def remove_field(text: str, key: str, *, path: str = "the note") -> str:
    """The text without top-level property `key` (unchanged when it has none), every other byte kept.

    A frontmatter block left with nothing in it at all is removed with its `---` lines, so pinning and then
    unpinning a note without frontmatter gives back the original text. Raises `CurationError` like `set_field`.
    """
    before = _properties(text, path)
    bom, rest = _split_bom(text)
    block = _find_block(rest, path)
    entries = [] if block is None else _entries(rest, block, path)
    matching = [entry for entry in entries if entry.key == key]
    if block is None or not matching:
        if key in before:
            # The parser sees the key (a YAML merge, say) but no line of ours holds it.
            raise _too_unusual(path, f"the property '{key}' does not stand on a line of its own")
        return text
    new_rest = rest
    for entry in sorted(matching, key=lambda e: e.start, reverse=True):
        new_rest = new_rest[: entry.start] + new_rest[entry.end :]
    removed = sum(entry.end - entry.start for entry in matching)
    if block.end - removed == block.start:
        # Nothing is left between the `---` lines (the closing one now starts at `block.start`): drop both.
        new_rest = new_rest[block.start + _line_end(new_rest, block.start) :]
    new_text = bom + new_rest
    expected = {k: v for k, v in before.items() if k != key}
    _verify(new_text, expected, None, path)
    return new_text


def properties(text: str, path: str = "the note") -> dict[str, Any]:
    """The frontmatter properties of a note's text as the project's parser reads them ({} without frontmatter).

    Raises `CurationError` when the frontmatter does not parse.
    """
    return _properties(text, path)


def split_body(text: str) -> str:
    """The note's body: the text after the frontmatter block (the whole text, without a BOM, when there is none)."""
    _bom, rest = _split_bom(text)
    try:
        block = _find_block(rest, "note")
    except CurationError:
        return rest
    if block is None:
        return rest
    return rest[block.end + _line_end(rest, block.end) :]


# -- finding the block and its properties
# ----------------------------------------------------------------------------------------------------


def _split_bom(text: str) -> tuple[str, str]:
    if text.startswith("\ufeff"):
        return "\ufeff", text[1:]
    return "", text


def line_ending(text: str) -> str:
    """The line ending of the text's first line, `\\r\\n` or `\\n` (also for a text without any)."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def _line_end(text: str, start: int) -> int:
    """The length of the line starting at `start`, its line ending included."""
    newline = text.find("\n", start)
    return (newline + 1 if newline >= 0 else len(text)) - start


def _find_block(rest: str, path: str) -> _Block | None:
    """The frontmatter block of a text (BOM removed), or None when the text has none."""
    opening = _BOUNDARY.match(rest)
    if opening is None:
        return None
    after = opening.end()
    if rest.startswith("\r\n", after):
        newline = "\r\n"
    elif rest.startswith("\n", after):
        newline = "\n"
    else:
        return None  # `---` followed by more text, or the whole file: not a frontmatter opening
    start = after + len(newline)
    position = start
    while position < len(rest):
        length = _line_end(rest, position)
        line = rest[position : position + length].rstrip("\n").rstrip("\r")
        if _BOUNDARY.fullmatch(line):
            return _Block(start=start, end=position, newline=newline)
        position += length
    raise CurationError(
        f"{path}: the frontmatter's opening '---' line is never closed by another '---' line; "
        "close it (or remove the opening line) in Obsidian and try again; nothing was written"
    )


def _entries(rest: str, block: _Block, path: str) -> list[_Entry]:
    """The top-level properties of the block with the span of their lines."""
    yaml_text = rest[block.start : block.end]
    loader = FrontmatterLoader(yaml_text)
    try:
        node = loader.get_single_node()
    except yaml.YAMLError as exc:
        raise _does_not_parse(path, str(exc)) from exc
    finally:
        loader.dispose()
    if node is None:
        return []
    if not isinstance(node, MappingNode):
        raise _does_not_parse(path, "it is not a mapping of properties")
    if node.flow_style:
        raise _too_unusual(path, "it is written as one '{...}' mapping")
    starts: list[tuple[str, int, Node]] = []
    for key_node, value_node in node.value:
        if not isinstance(key_node, ScalarNode) or key_node.start_mark.column != 0:
            raise _too_unusual(path, f"a property name at line {key_node.start_mark.line + 2} is not a plain name")
        starts.append((str(key_node.value), block.start + key_node.start_mark.index, value_node))
    entries: list[_Entry] = []
    for number, (key, start, value_node) in enumerate(starts):
        limit = starts[number + 1][1] if number + 1 < len(starts) else block.end
        entries.append(
            _Entry(
                key=key,
                start=start,
                end=_trim_trailing(rest, start, limit),
                value_end=block.start + value_node.end_mark.index,
                flow_list=isinstance(value_node, SequenceNode) and bool(value_node.flow_style),
            )
        )
    return entries


def _extended(rest: str, entry: _Entry, current: object, value: FieldValue, newline: str) -> str | None:
    """The text with the items that `value` adds after the items of the list `current` written into the property's
    lines in their style, its items as written kept; None when `value` is not `current` with items added."""
    if not (isinstance(current, list) and current and isinstance(value, list)):
        return None
    if len(value) <= len(current) or value[: len(current)] != current:
        return None
    added = value[len(current) :]
    if entry.flow_list:
        # After the last item (before any space and the closing `]`), in the list's own separator style.
        close = entry.value_end - 1
        if not rest.startswith("]", close):
            return None
        at = len(rest[:close].rstrip())
        return rest[:at] + "".join(f", {_flow_item(item)}" for item in added) + rest[at:]
    found = _BLOCK_ITEM.search(rest, entry.start, entry.end)
    if found is None:
        return None
    indent = found.group(1)
    lines = "".join(f"{indent}- {scalar(item)}{newline}" for item in added)
    return rest[: entry.end] + lines + rest[entry.end :]


def _trim_trailing(rest: str, start: int, limit: int) -> int:
    """The end of a property's span: trailing blank lines and comments in column 0 belong to nobody and stay."""
    lines: list[tuple[int, int]] = []
    position = start
    while position < limit:
        length = _line_end(rest, position)
        lines.append((position, position + length))
        position += length
    end = limit
    for line_start, line_end in reversed(lines[1:]):
        content = rest[line_start:line_end].strip()
        if content and not rest.startswith("#", line_start):
            break
        end = line_start
    return end


def _properties(text: str, path: str) -> dict[str, Any]:
    """The properties as `companion.vault.parse` reads them; `CurationError` when they do not parse."""
    # The same steps as `parse_note`, without the body: normalised newlines, the handler's split, the loader.
    try:
        normalised = decode_text(path, text.encode("utf-8", "surrogatepass"))
    except NoteError as exc:
        raise CurationError(f"{exc}; nothing was written") from exc
    parts = HANDLER.split_lines(normalised)
    if parts is None:
        return {}
    try:
        return load_frontmatter(parts[0], first_line=1).data
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 2}: " if mark is not None else ""
        raise _does_not_parse(path, f"{where}{exc.problem or exc.context or 'invalid YAML'}") from exc
    except (yaml.YAMLError, ValueError) as exc:
        raise _does_not_parse(path, str(exc)) from exc
    except RecursionError as exc:
        raise _does_not_parse(path, "it is nested too deeply") from exc


def _reads_as(new_text: str, expected: dict[str, Any], path: str) -> bool:
    """Whether the text's properties read back exactly as `expected` (and the text still parses)."""
    try:
        return _properties(new_text, path) == expected
    except CurationError:
        return False


def _verify(new_text: str, expected: dict[str, Any], key: str | None, path: str) -> None:
    """Refuse an edit whose result does not read back as intended."""
    try:
        after = _properties(new_text, path)
    except CurationError as exc:
        raise _too_unusual(path, "the edited frontmatter no longer parses") from exc
    if key is not None and after.get(key) != expected[key]:
        raise _too_unusual(path, f"the property '{key}' did not read back as the value written")
    if after != expected:
        changed = sorted(k for k in set(after) | set(expected) if after.get(k) != expected.get(k) and k != key)
        raise _too_unusual(path, f"editing it would also change {', '.join(repr(k) for k in changed) or 'it'}")


def _too_unusual(path: str, why: str) -> CurationError:
    return CurationError(
        f"{path}: the frontmatter is too unusual to edit safely ({why}); nothing was written. "
        "Make the change in Obsidian, or simplify the frontmatter, and try again"
    )


def _does_not_parse(path: str, why: str) -> CurationError:
    return CurationError(
        f"{path}: the frontmatter does not parse as YAML ({why}); nothing was written. Fix it in Obsidian and try again"
    )


# -- rendering
# ---------------------------------------------------------------------------------------------------------------


def _check_value(key: str, value: object) -> None:
    if not isinstance(key, str) or not key.strip():
        raise CurationError(f"a property name must be a non-empty string, not {key!r}")
    if isinstance(value, list):
        bad = [item for item in value if not isinstance(item, str)]
        if bad:
            raise CurationError(f"the property '{key}' can hold a list of strings only, not {bad[0]!r}")
    elif not isinstance(value, str | bool):
        raise CurationError(f"the property '{key}' can be a string, true/false or a list of strings, not {value!r}")


_BLOCK_ITEM = re.compile(r"^([ \t]*)-[ \t]", re.MULTILINE)
_FLOW_LIST = re.compile(r"^[^\n]*:[ \t]*\[")


def _render(key: str, value: FieldValue, newline: str, like: str = "") -> str:
    """The property's lines, each ending with `newline`; a list in the style of `like` (the lines it replaces:
    a flow list stays a flow list, a block list keeps its indentation), else in Obsidian's block style."""
    name = scalar(key)
    if isinstance(value, bool):
        return f"{name}: {'true' if value else 'false'}{newline}"
    if isinstance(value, str):
        return f"{name}: {scalar(value)}{newline}"
    if not value:
        return f"{name}: []{newline}"
    if _FLOW_LIST.match(like):
        return f"{name}: [{', '.join(_flow_item(item) for item in value)}]{newline}"
    found = _BLOCK_ITEM.search(like)
    indent = found.group(1) if found is not None else "  "
    return f"{name}:{newline}" + "".join(f"{indent}- {scalar(item)}{newline}" for item in value)


def _flow_item(text: str) -> str:
    """A list item inside `[...]`, where `,`, brackets and braces would end or nest it."""
    return _double_quoted(text) if any(ch in text for ch in ",[]{}") else scalar(text)


def scalar(text: str) -> str:
    """A string as a YAML scalar: plain when every YAML reader takes it for that string, else double-quoted."""
    return text if _plain_is_safe(text) else _double_quoted(text)


def _plain_is_safe(text: str) -> bool:
    if not text or text != text.strip() or text[0] in _PLAIN_FIRST_FORBIDDEN:
        return False
    # `:` and `#` can start a mapping or a comment mid-text; excluding them outright keeps the rule simple.
    if ":" in text or "#" in text:
        return False
    if not all(ch == " " or ch.isprintable() for ch in text):
        return False
    return all(r.resolve(ScalarNode, text, (True, False)) == _STR_TAG for r in _RESOLVERS)  # type: ignore[no-untyped-call]


def _double_quoted(text: str) -> str:
    """A YAML double-quoted scalar (also a JSON string for text in the Basic Multilingual Plane)."""
    out: list[str] = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch == " " or (ch.isprintable() and ch != "\ufeff"):
            out.append(ch)
        elif ord(ch) <= 0xFFFF:
            # Control characters, YAML's extra line breaks (U+0085, U+2028, U+2029) and invisible formatting
            # characters are escaped, so the value stays on one line and every reader accepts it.
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)
