"""Putting one note's body under a heading of another: its headings move down a level or more, its title goes.

A merged note's text lands under `## Merged from <name>`. Left as they were, its own `# Title` and `## Part` headings
would stand beside that heading or above it in the outline; moved down two levels they sit under it. The parser says
which lines are headings (never a `#` in a code block or a comment), so only those lines change.
"""

from __future__ import annotations

import re

from markdown_it.token import Token

from companion.vault.links import make_markdown

DEEPEST = 6
"""Markdown has no heading deeper than H6: deeper ones stay H6."""

_MD = make_markdown()
_ATX = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)")


def leading_title(body: str, title: str) -> bool:
    """Whether the body opens with an H1 that says `title` (in any case), which a heading naming the note makes
    redundant."""
    tokens = _MD.parse(body)
    return _opening_title(tokens, title) is not None


def nest(body: str, title: str, by: int = 2) -> str:
    """`body` (lines ending in `\\n`) with its headings `by` levels deeper (at most H6) and an opening H1 saying
    `title` removed, with the blank lines after it.

    Headings inside quotes, callouts and lists are left as they are: they are not part of the note's outline.
    Setext headings (`Title` over `===`) become ATX headings, since an underline can only say H1 or H2.
    """
    tokens = _MD.parse(body)
    lines = body.split("\n")
    new: dict[int, str | None] = {}  # line number: its new text, or None to remove it
    opening = _opening_title(tokens, title)
    if opening is not None:
        start, end = opening
        while end < len(lines) - 1 and not lines[end].strip():
            end += 1
        new.update(dict.fromkeys(range(start, end)))
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.level != 0 or token.map is None or token.map[0] in new:
            continue
        start, end = token.map
        level = min(int(token.tag[1]) + by, DEEPEST)
        if token.markup.startswith("#"):
            marks = _ATX.match(lines[start])
            if marks is not None:  # always, for an ATX heading at the top level; the check keeps a surprise harmless
                new[start] = marks.group(1) + "#" * level + lines[start][marks.end() :]
        else:
            text = " ".join(line.strip() for line in tokens[index + 1].content.split("\n"))
            new[start] = f"{'#' * level} {text}"
            new.update(dict.fromkeys(range(start + 1, end)))
    out = [new.get(number, line) for number, line in enumerate(lines)]
    return "\n".join(line for line in out if line is not None)


def _opening_title(tokens: list[Token], title: str) -> tuple[int, int] | None:
    """The lines of the H1 the body opens with when it says `title`, else None."""
    if len(tokens) < 2 or tokens[0].type != "heading_open" or tokens[0].tag != "h1" or tokens[0].map is None:
        return None
    if tokens[1].content.strip().casefold() != title.strip().casefold():
        return None
    return tokens[0].map[0], tokens[0].map[1]
