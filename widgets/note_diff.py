"""Notes side by side for a review: one note's text, or two notes' texts with what only one of them says marked.

The texts are built by `diff_texts` and `plain_text` (pure functions a worker thread calls: a long note's diff is
no work for the event loop) and handed to a `NotePane`, which only shows them.
"""

from __future__ import annotations

import difflib
import re

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

ONLY_LEFT = "red"
"""The style of the lines only the left note has (and, bold and underlined, of the words only it says)."""
ONLY_RIGHT = "green"
"""The style of the lines only the right note has (and, bold and underlined, of the words only it says)."""
SHOWN_CHARS = 20_000
"""How much of a note a pane shows (and compares): a review is decided on a note's first pages."""

_TOKEN = re.compile(r"\S+\s*|\s+")


def diff_texts(left: str, right: str) -> tuple[Text, Text]:
    """The two texts, each line led by a gutter mark: `-` on the left and `+` on the right for a line the other
    text does not hold as it is, two spaces for a line both hold. Lines only one text has are coloured whole; in
    lines changed on both sides only the words that differ are."""
    a, b = _cut(left).splitlines(), _cut(right).splitlines()
    out_a, out_b = Text(), Text()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            for line in a[i1:i2]:
                _line(out_a, "  ", Text(line))
                _line(out_b, "  ", Text(line))
            continue
        if tag == "replace":
            words_a, words_b = _word_diff("\n".join(a[i1:i2]), "\n".join(b[j1:j2]))
            for part in words_a.split("\n"):
                _line(out_a, "- ", part, ONLY_LEFT)
            for part in words_b.split("\n"):
                _line(out_b, "+ ", part, ONLY_RIGHT)
            continue
        for line in a[i1:i2]:
            _line(out_a, "- ", Text(line, style=ONLY_LEFT), ONLY_LEFT)
        for line in b[j1:j2]:
            _line(out_b, "+ ", Text(line, style=ONLY_RIGHT), ONLY_RIGHT)
    out_a.rstrip()
    out_b.rstrip()
    return out_a, out_b


def plain_text(text: str, marked: str = "") -> Text:
    """A note's text as it is; every occurrence of the pattern `marked` (a regular expression, case ignored)
    shown in reverse video, such as the broken link a review points at."""
    out = Text(_cut(text).rstrip())
    if marked:
        out.highlight_regex(re.compile(marked, re.IGNORECASE), style="bold reverse")
    return out


def _cut(text: str) -> str:
    if len(text) <= SHOWN_CHARS:
        return text
    return text[:SHOWN_CHARS] + "\n\n… (the rest of the note is not shown here)"


def _line(out: Text, mark: str, line: Text, style: str = "") -> None:
    out.append(mark, style=f"bold {style}" if style else "dim")
    out.append_text(line)
    out.append("\n")


def _word_diff(left: str, right: str) -> tuple[Text, Text]:
    """Two blocks of text with the words only one of them says marked (the spaces after a word are never)."""
    a, b = _TOKEN.findall(left), _TOKEN.findall(right)
    out_a, out_b = Text(), Text()
    keys_a, keys_b = [t.strip() for t in a], [t.strip() for t in b]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False).get_opcodes():
        style_a = "" if tag == "equal" else f"bold underline {ONLY_LEFT}"
        style_b = "" if tag == "equal" else f"bold underline {ONLY_RIGHT}"
        for token in a[i1:i2]:
            _token(out_a, token, style_a)
        for token in b[j1:j2]:
            _token(out_b, token, style_b)
    return out_a, out_b


def _token(out: Text, token: str, style: str) -> None:
    word = token.rstrip()
    out.append(word, style=style)
    out.append(token[len(word) :])


class NotePane(VerticalScroll):
    """One note of a review: its path in the border, its properties in a line, then its text (scrolls)."""

    DEFAULT_CSS = """
    NotePane { height: 1fr; border: round $accent; padding: 0 1; }
    NotePane:focus { border: double $accent; }
    NotePane > #properties { color: $text-muted; }
    NotePane > #text { width: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = Text()
        """The text shown, marks and all."""

    def compose(self) -> ComposeResult:
        """The properties line, then the text."""
        yield Static("", id="properties", markup=False)
        yield Static("", id="text", markup=False)

    def show(self, title: str, properties: Text, text: Text) -> None:
        """Show a note's text (built in a worker by `diff_texts` or `plain_text`), from its top."""
        self.border_title = title
        self.query_one("#properties", Static).update(properties)
        self.query_one("#properties", Static).display = bool(properties.plain)
        self.text = text if text.plain else Text("(no text)", style="italic")
        self.query_one("#text", Static).update(self.text)
        self.scroll_home(animate=False)

    def show_message(self, title: str, message: str) -> None:
        """Say something in place of a note (it is being read, it could not be)."""
        self.show(title, Text(""), Text(message, style="italic"))
