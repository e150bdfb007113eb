"""Rewriting where wikilinks point, on chosen lines of a note, leaving everything else of the text as it was.

The parser (`companion.vault.links`) decides which lines hold real links (not code); this module only edits the text of
those lines. A `Retarget` replaces the target part of `[[target#heading|alias]]` (or `![[...]]`), the heading, block
and alias parts staying exactly as written; a `Replace` rewrites a whole link (a link into the same note, say).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

from companion.vault.links import parse_link_text

Retarget = Callable[[str], str | None]
"""Given a link's target as the parser reads it, the new target text, or None to leave the link alone."""
Replace = Callable[[str, bool, bool], str | None]
"""Given the text between `[[` and `]]`, whether the link is an embed (`![[`) and whether it stands in a table row
(where a bar must be written `\\|`), the whole new text of the link (`[[...]]`, `![[...]]`), or None to leave the
link alone."""

# The pattern `companion.vault.links` uses for wikilinks in text, not after a backslash (an escaped `\[[` is no link).
_WIKILINK = re.compile(r"(?<!\\)(!?)\[\[([^\[\]\n]+?)\]\]")
# A Markdown code span: a run of backticks closed by a run of the same length.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)")
# Lines as `companion.vault.parse.decode_text` counts them: `\r\n`, `\r` and `\n` each end one line.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def rewrite_lines(text: str, lines: Collection[int], retarget: Retarget) -> tuple[str, int]:
    """The text with the wikilinks on the given 0-based lines retargeted, and how many were changed.

    Wikilinks inside code spans on those lines are left alone, as the parser ignores them.
    """
    return replace_lines(text, lines, retargeting(retarget))


def replace_lines(text: str, lines: Collection[int], replace: Replace) -> tuple[str, int]:
    """The text with the wikilinks on the given 0-based lines replaced by `replace`, and how many were changed."""
    if not lines:
        return text, 0
    wanted = set(lines)
    out: list[str] = []
    count = 0
    for number, match in enumerate(_LINE.finditer(text)):
        line = match.group(0)
        if number in wanted:
            code = [(span.start(), span.end()) for span in _CODE_SPAN.finditer(line)]
            # A bar outside the links and code spans is taken for a table's cell separator.
            in_table = "|" in _CODE_SPAN.sub("", _WIKILINK.sub("", line))
            line, changed = _rewrite(line, replace, code, in_table)
            count += changed
        out.append(line)
    return "".join(out), count


def rewrite_string(value: str, retarget: Retarget) -> tuple[str, int]:
    """A property value with its wikilinks retargeted (as `companion.vault.links` finds them in properties)."""
    return _rewrite(value, retargeting(retarget), [], False)


def replace_string(value: str, replace: Replace) -> tuple[str, int]:
    """A property value (or the YAML lines holding it) with its wikilinks replaced by `replace`."""
    return _rewrite(value, replace, [], False)


def retargeting(retarget: Retarget) -> Replace:
    """The `Replace` that gives a link the target `retarget` names, keeping its other parts as written."""

    def replace(inner: str, embed: bool, in_table: bool) -> str | None:
        new_target = retarget(parse_link_text(inner).target)
        if new_target is None:
            return None
        return f"{'!' if embed else ''}[[{with_target(inner, new_target)}]]"

    return replace


def alias_part(inner: str) -> str:
    """The `|alias` end of a link's inner text as written (`\\|alias` inside a table), or '' when it has none."""
    bar = inner.find("|")
    if bar < 0:
        return ""
    return inner[bar - 1 :] if bar > 0 and inner[bar - 1] == "\\" else inner[bar:]


def _rewrite(text: str, replace: Replace, code: list[tuple[int, int]], in_table: bool) -> tuple[str, int]:
    out: list[str] = []
    last = 0
    count = 0
    for match in _WIKILINK.finditer(text):
        if any(start <= match.start() < end for start, end in code):
            continue
        new_link = replace(match.group(2), match.group(1) == "!", in_table)
        if new_link is None:
            continue
        out.append(text[last : match.start()])
        out.append(new_link)
        last = match.end()
        count += 1
    out.append(text[last:])
    return "".join(out), count


def with_target(inner: str, new_target: str) -> str:
    """`inner` (the text between `[[` and `]]`) with its target replaced, its spacing and the rest kept."""
    bar = inner.find("|")
    head = inner if bar < 0 else inner[:bar]
    hash_at = head.find("#")
    cut = hash_at if hash_at >= 0 else len(head)
    segment = inner[:cut]
    # A table's `[[target\|alias]]` escapes the bar; the backslash is not part of the target.
    core = segment.rstrip("\\")
    escapes = segment[len(core) :]
    leading = core[: len(core) - len(core.lstrip())]
    trailing = core[len(core.rstrip()) :]
    return f"{leading}{new_target}{trailing}{escapes}{inner[cut:]}"
