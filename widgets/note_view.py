"""The note view: a note's frontmatter and its Markdown, rendered."""

from __future__ import annotations

import json
from typing import Any

from textual.containers import VerticalScroll
from textual.widgets import Markdown

from companion.vault.notes import Note


class NoteView(VerticalScroll):
    """Shows one note; `show` is called by the screen with an already-parsed note (no file reads here)."""

    DEFAULT_CSS = """
    NoteView { height: 1fr; }
    """

    def compose(self):  # type: ignore[no-untyped-def]
        """A Markdown document."""
        yield Markdown("*Select a session or a note.*")

    def show(self, note: Note, *, keep_scroll: bool = False) -> None:
        """Render the note: title, frontmatter as a table, then the body (from the top, unless `keep_scroll`: the
        same note changed on disk while the user reads it)."""
        self.border_title = note.path
        self.query_one(Markdown).update(render_note(note))
        if not keep_scroll:
            self.scroll_home(animate=False)

    def show_message(self, path: str, text: str) -> None:
        """Say what became of a note that is no longer there (moved, deleted)."""
        self.border_title = path
        self.query_one(Markdown).update(f"*{text}*")

    def show_problem(self, path: str, reason: str) -> None:
        """Say that a note could not be read."""
        self.border_title = path
        self.query_one(Markdown).update(f"**{path}** could not be read: {reason}")


def render_note(note: Note) -> str:
    """Markdown for a note: its frontmatter as a two-column table above its body."""
    rows = [f"| {key} | {_cell(value)} |" for key, value in note.frontmatter.items()]
    table = "| property | value |\n|---|---|\n" + "\n".join(rows) + "\n\n" if rows else ""
    return f"# {note.title}\n\n{table}{note.body}"


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text.replace("|", "\\|").replace("\n", " ")[:200]
