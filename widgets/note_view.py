"""The note view: a note's body rendered, its properties folded into a line above it."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static

from companion.vault.notes import Note

FIRST_HINT = "↑↓ move in a list · Enter open · / search · Tab next pane · z zoom · e explain a score · ? every key"
"""What the note view says before anything is selected: the first keys a new user needs."""


class NoteView(VerticalScroll):
    """Shows one note; `show` is called by the screen with an already-parsed note (no file reads here).

    The body comes first: the properties fold into a line or two above it (`f` unfolds them, one per line).
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("f", "fold", "properties")]
    ALLOW_MAXIMIZE = True  # scrolling containers refuse by default; a note is what a user most wants to zoom

    DEFAULT_CSS = """
    NoteView { height: 1fr; }
    NoteView > #properties { color: $text-muted; padding: 0 1; max-height: 2; }
    NoteView.-unfolded > #properties { max-height: 100%; }
    NoteView > Markdown { margin: 0; }
    """

    unfolded = False
    """Every property on its own line, instead of folded into a line or two."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._note: Note | None = None

    def compose(self):  # type: ignore[no-untyped-def]
        """The properties line, then the Markdown body."""
        yield Static("", id="properties")
        yield Markdown(f"*Select a session or a note.*\n\n{FIRST_HINT}")

    def action_fold(self) -> None:
        """Fold the properties into a line or two, or show each on its own line."""
        self.unfolded = not self.unfolded
        self.set_class(self.unfolded, "-unfolded")
        if self._note is not None:
            self.query_one("#properties", Static).update(self._properties(self._note))

    def show(self, note: Note, *, keep_scroll: bool = False) -> None:
        """Render the note: its properties line, then its body (from the top, unless `keep_scroll`: the same note
        changed on disk while the user reads it)."""
        self._note = note
        self.border_title = note.path
        self.query_one("#properties", Static).update(self._properties(note))
        self.query_one(Markdown).update(note.body.strip() or "*(no text)*")
        if not keep_scroll:
            self.scroll_home(animate=False)

    def on_resize(self) -> None:
        """Fold the properties to the new width (a note read while the view was hidden had none)."""
        if self._note is not None:
            self.query_one("#properties", Static).update(self._properties(self._note))

    def _properties(self, note: Note) -> Text:
        # About two lines of the view's width when folded: the body must start near the top.
        width = max(self.scrollable_content_region.width - 2, 30)
        return properties_text(note, unfolded=self.unfolded, folded_chars=2 * width - 12, value_chars=width // 2)

    def show_message(self, path: str, text: str) -> None:
        """Say what became of a note that is no longer there (moved, deleted)."""
        self._say(path, f"*{text}*")

    def show_problem(self, path: str, reason: str) -> None:
        """Say that a note could not be read."""
        self._say(path, f"**{path}** could not be read: {reason}")

    def _say(self, path: str, markdown: str) -> None:
        self._note = None
        self.border_title = path
        self.query_one("#properties", Static).update("")
        self.query_one(Markdown).update(markdown)


def properties_text(note: Note, *, unfolded: bool = False, folded_chars: int = 160, value_chars: int = 40) -> Text:
    """A note's properties: `key value · key value` cut to `folded_chars` (each value to `value_chars`), or one
    per line, whole, when `unfolded`."""
    items = [(str(key), _value(value)) for key, value in note.frontmatter.items()]
    if not unfolded:
        items = [(key, value if len(value) <= value_chars else value[: value_chars - 1] + "…") for key, value in items]
    if not items:
        return Text("")
    text = Text()
    if unfolded:
        for i, (key, value) in enumerate(items):
            text.append(("\n" if i else "") + key, style="bold")
            text.append(f"  {value}")
        text.append("\n(f folds them)", style="italic")
        return text
    used = 0
    for i, (key, value) in enumerate(items):
        part = f"{key} {value}"
        if used and used + len(part) > folded_chars:
            text.append(f" · +{len(items) - i} more (f)", style="italic")
            break
        if i:
            text.append(" · ")
        text.append(key, style="bold")
        text.append(f" {value}")
        used += len(part) + 3
    return text


def _value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_value(v) for v in value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return " ".join(text.split())
