"""Split a note into chunks that fit the embedding model's window, with ids that survive edits.

all-MiniLM-L6-v2 reads at most 256 tokens; anything past that is silently dropped, so a long note must be cut.
Conversation notes are cut into windows of a few consecutive turns with the speaker names kept (measured to
retrieve far better than single turns or whole sessions); other notes are cut by heading and then packed paragraph
by paragraph. A chunk id is `path#anchor`, where the anchor depends only on the note's own structure (turn number,
heading), so appending a paragraph changes only the last chunk and a rename changes only the path part.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from companion.notes import Note

CHUNKER_VERSION = "1"
"""Bumped whenever chunk boundaries or texts change, so an index built by an older chunker is rebuilt."""

TokenCounter = Callable[[Sequence[str]], list[int]]

_SPEAKER = re.compile(r"^\s*(?:[-*]\s+)?(?:\*\*|__)?(?P<name>[A-Za-z][\w .'@-]{0,40}?)(?:\*\*|__)?\s*:")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Chunk:
    """One piece of a note as the model sees it."""

    id: str
    """`<vault-relative path>#<anchor>`: stable across edits elsewhere in the note."""
    anchor: str
    """The part of the id after `#`: `t<turn>` for conversation windows, `<heading-slug>~<n>` otherwise."""
    text: str
    """The text that is embedded: a context line (title, heading) followed by the content."""
    text_hash: str
    """SHA-1 of `text`, to skip re-embedding unchanged chunks and to carry vectors across renames."""
    start_line: int
    """0-based first line of the content in the file."""
    end_line: int
    """0-based line after the last line of the content."""


@dataclass(frozen=True)
class _Block:
    text: str
    start: int
    end: int
    heading: str


def text_hash(text: str) -> str:
    """The hash used to recognise a chunk text that is already embedded."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def slugify(text: str) -> str:
    """A heading as an anchor: lower case, words joined by dashes."""
    slug = re.sub(r"[^\w]+", "-", text.lower(), flags=re.UNICODE).strip("-")
    return slug[:60] or "section"


class Chunker:
    """Cuts notes into chunks of at most `max_tokens` model tokens (special tokens included)."""

    def __init__(
        self,
        count_tokens: TokenCounter,
        *,
        max_tokens: int = 256,
        target_tokens: int = 200,
        window_turns: int = 3,
        stride_turns: int = 2,
    ) -> None:
        self._count = count_tokens
        self.max_tokens = max_tokens
        self.target_tokens = min(target_tokens, max_tokens)
        self.window_turns = window_turns
        self.stride_turns = stride_turns

    def chunk(self, note: Note) -> list[Chunk]:
        """The chunks of a note, in file order; every note gets at least one chunk (its title)."""
        blocks = _blocks(note.body, note.body_line)
        if note.kind == "conversation":
            turns = [b for b in blocks if _SPEAKER.match(b.text)]
            if len(turns) >= 2:
                return self._dedupe(self._conversation(note, blocks))
        return self._dedupe(self._sections(note, blocks))

    # -- conversations -------------------------------------------------------------------------

    def _conversation(self, note: Note, blocks: list[_Block]) -> list[Chunk]:
        header = _context_line(note, "")
        units = self._fit(header, blocks)
        chunks: list[Chunk] = []
        start = 0
        while start < len(units):
            window = units[start : start + self.window_turns]
            while len(window) > 1 and not self._fits(header, window):
                window = window[:-1]
            chunks.append(self._make(note, f"t{start}", header, window))
            if start + len(window) >= len(units):
                break
            # Windows overlap by at least one turn so an exchange is never cut between two chunks;
            # a window shrunk by long turns advances less, so no turn is left unread.
            start += max(1, min(self.stride_turns, len(window) - 1))
        return chunks

    # -- other notes ---------------------------------------------------------------------------

    def _sections(self, note: Note, blocks: list[_Block]) -> list[Chunk]:
        chunks: list[Chunk] = []
        by_heading: dict[str, list[_Block]] = {}
        for block in blocks:
            by_heading.setdefault(block.heading, []).append(block)
        for heading, section in by_heading.items():
            header = _context_line(note, heading)
            units = self._fit(header, section)
            base = slugify(heading) if heading else "top"
            packed: list[_Block] = []
            n = 0
            for unit in units:
                if packed and not self._fits(header, [*packed, unit], self.target_tokens):
                    chunks.append(self._make(note, f"{base}~{n}", header, packed))
                    n += 1
                    packed = []
                packed.append(unit)
            if packed:
                chunks.append(self._make(note, f"{base}~{n}", header, packed))
        if not chunks:
            # A note with no text of its own is known by its name alone (a rename re-embeds it).
            text = "\n".join(p for p in (_context_line(note, ""), note.title) if p)
            chunks.append(Chunk(f"{note.path}#top~0", "top~0", text, text_hash(text), 0, 0))
        return chunks

    # -- shared --------------------------------------------------------------------------------

    def _fits(self, header: str, units: Sequence[_Block], limit: int | None = None) -> bool:
        return self._count([_join(header, units)])[0] <= (limit or self.max_tokens)

    def _fit(self, header: str, blocks: list[_Block]) -> list[_Block]:
        """Split every block that alone would overflow the window, by sentences and then by words."""
        if not blocks:
            return []
        counts = self._count([_join(header, [b]) for b in blocks])
        out: list[_Block] = []
        for block, count in zip(blocks, counts, strict=True):
            if count <= self.max_tokens:
                out.append(block)
            else:
                out.extend(self._split(header, block))
        return out

    def _split(self, header: str, block: _Block) -> list[_Block]:
        pieces = [p for p in _SENTENCE_END.split(block.text) if p.strip()]
        words: list[str] = []
        for piece in pieces:
            # A "sentence" with no punctuation can be any length; fall back to words.
            words.extend([piece] if len(piece) < 400 else piece.split())
        out: list[_Block] = []
        current: list[str] = []
        for word in words:
            candidate = " ".join([*current, word])
            if current and self._count([_join(header, [_Block(candidate, 0, 0, "")])])[0] > (self.target_tokens):
                out.append(_Block(" ".join(current), block.start, block.end, block.heading))
                current = [word]
            else:
                current.append(word)
        if current:
            out.append(_Block(" ".join(current), block.start, block.end, block.heading))
        return out

    def _make(self, note: Note, anchor: str, header: str, units: Sequence[_Block]) -> Chunk:
        text = _join(header, units)
        return Chunk(
            id=f"{note.path}#{anchor}",
            anchor=anchor,
            text=text,
            text_hash=text_hash(text),
            start_line=units[0].start if units else 0,
            end_line=units[-1].end if units else 0,
        )

    @staticmethod
    def _dedupe(chunks: list[Chunk]) -> list[Chunk]:
        """Two headings with one slug must not share an id: later ones get a numeric suffix."""
        seen: dict[str, int] = {}
        out: list[Chunk] = []
        for chunk in chunks:
            count = seen.get(chunk.anchor, 0)
            seen[chunk.anchor] = count + 1
            if count:
                anchor = f"{chunk.anchor}.{count}"
                path = chunk.id.rsplit("#", 1)[0]
                chunk = Chunk(
                    f"{path}#{anchor}",
                    anchor,
                    chunk.text,
                    chunk.text_hash,
                    chunk.start_line,
                    chunk.end_line,
                )
            out.append(chunk)
        return out


def _context_line(note: Note, heading: str) -> str:
    """The line put before each chunk's content: the note's date and the enclosing heading.

    The file name is left out on purpose: a rename must not change any chunk text, or every rename would
    re-embed the note. Titles are searchable through the lexical index instead.
    """
    date = note.frontmatter.get("date")
    parts = [str(date)[:10]] if isinstance(date, str) and date else []
    if heading:
        parts.append(heading)
    return " — ".join(parts)


def _join(header: str, units: Sequence[_Block]) -> str:
    return "\n".join([header, *(u.text for u in units)] if header else [u.text for u in units])


def _blocks(body: str, first_line: int) -> list[_Block]:
    """Paragraphs of the body with their line span and enclosing heading; fenced code stays whole."""
    blocks: list[_Block] = []
    heading = ""
    current: list[str] = []
    start = 0
    in_fence = False

    def flush(end: int) -> None:
        text = "\n".join(current).strip()
        if text:
            blocks.append(_Block(text, first_line + start, first_line + end, heading))
        current.clear()

    for i, line in enumerate(body.splitlines()):
        if _FENCE.match(line):
            if not in_fence:
                flush(i)
                start = i
            in_fence = not in_fence
            current.append(line)
            continue
        if in_fence:
            current.append(line)
            continue
        match = _HEADING.match(line)
        if match:
            flush(i)
            heading = match.group(2)
            start = i + 1
            continue
        if not line.strip():
            flush(i)
            start = i + 1
            continue
        if not current:
            start = i
        current.append(line)
    flush(len(body.splitlines()))
    return blocks
