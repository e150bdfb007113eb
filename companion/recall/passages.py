"""What a recalled note shows of itself: its best passage, the heading or block that passage sits at (as a link
Obsidian opens), and the newest summary note, all read from the vault at the moment they are shown.

The index keeps where each chunk starts and ends, not its text: the passage is cut from the file as it is now.
"""

from __future__ import annotations

import datetime as dt
import re

from companion.errors import NoteError
from companion.recall.candidates import NoteIndex
from companion.recall.results import Located, RecallItem
from companion.recall.sessionhits import session_passage
from companion.vault.notes import Note
from companion.vault.properties import properties_text
from companion.vault.reader import ObsidianVault
from companion.vault.sessions import local_moment

COMMENT = re.compile(r"%%.*?%%", re.DOTALL)
"""An Obsidian comment (`%% ... %%`), which the app leaves out of what it shows, as Obsidian does."""
_BLOCK_ID = re.compile(r"\s\^([A-Za-z0-9-]+)\s*$", re.MULTILINE)


class Passages:
    """Reads the passages of recalled notes from `vault`, at the lines `index` recorded for their chunks. A note
    that cannot be read is added to the vault's problems and shows nothing."""

    def __init__(self, vault: ObsidianVault, index: NoteIndex) -> None:
        self.vault = vault
        self.index = index

    def passage(self, item: RecallItem, max_chars: int = 1200) -> str:
        """The text of an item's best chunk (the whole body's start when no chunk matched)."""
        found = self._chunk(item)
        return "" if found is None else cut(found[1].strip(), max_chars)

    def locate(self, item: RecallItem, snippet_chars: int = 160) -> Located:
        """The heading or block an item's best chunk sits at, as a link Obsidian opens, and the passage itself.

        Chunk anchors (`boiler~0`, `t12`) are the index's own ids; this turns them into what a person follows.
        """
        title = item.path.rsplit("/", 1)[-1].removesuffix(".md")
        found = self._chunk(item)
        if found is None:
            return Located(f"[[{title}]]", "", "")
        note, passage, first, in_chunk = found
        heading = next((h.text for h in reversed(note.headings) if h.line <= first), "")
        if heading.strip().casefold() == title.casefold():
            heading = ""  # a first heading that repeats the title says nothing the title does not
        block = _BLOCK_ID.search(passage)
        if heading:
            link = f"[[{title}#{heading}]]"
        elif block is not None and in_chunk:
            link = f"[[{title}#^{block.group(1)}]]"
        else:
            link = f"[[{title}]]"
        text = " ".join(_BLOCK_ID.sub("", COMMENT.sub("", passage)).split())
        return Located(link, heading, cut(text, snippet_chars))

    def latest_summary(self, as_of: dt.datetime | None = None) -> tuple[str, str] | None:
        """(path, body) of the newest `type: summary` note up to `as_of`, or None; `%% comments %%` are left out, as
        Obsidian leaves them out of what it shows."""
        info = self.index.latest_of_type("summary", local_moment(as_of).date())
        if info is None:
            return None
        try:
            body = self.vault.read_note(info.path).body
            return info.path, COMMENT.sub("", body).strip()
        except NoteError as exc:
            self.vault.problems.append((exc.path, exc.reason))
            return None

    def _chunk(self, item: RecallItem) -> tuple[Note, str, int, bool] | None:
        """(the note, its best chunk's text, the file line that text starts at, whether a chunk was found); the whole
        body when none was. None when the note cannot be read (recorded among the vault's problems)."""
        try:
            note = self.vault.read_note(item.path)
        except NoteError as exc:
            self.vault.problems.append((exc.path, exc.reason))
            return None
        if note.kind == "session":
            return note, session_passage(note), note.body_line, False  # its messages are properties, not body
        if not COMMENT.sub("", note.body).strip():
            # A note whose facts are all properties (a book's author, a trip's dates) would show, and give an
            # agent, nothing at all: its properties are its passage.
            return note, properties_text(note.frontmatter), 0, False
        lines = self.index.chunk_lines(item.path, item.anchor) if item.anchor else None
        if lines is None:
            return note, note.body, note.body_line, False
        text = "\n".join(note_lines(note.body, note.body_line)[lines[0] : lines[1]])
        return note, text, lines[0], True


def note_lines(body: str, body_line: int) -> list[str]:
    """The note's lines indexed as in its file: the frontmatter lines are blanks, so file line numbers apply."""
    return [""] * body_line + body.split("\n")


def cut(text: str, max_chars: int) -> str:
    """`text` cut to at most `max_chars` characters, an ellipsis marking the cut."""
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"
