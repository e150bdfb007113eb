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
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from companion.secrets import redact_field, redact_text
from companion.vault.notes import Note
from companion.vault.properties import properties_text

CHUNKER_VERSION = "2"
"""Bumped whenever chunk boundaries or texts change (the redaction rules too), so an index built by an older chunker
is rebuilt."""

INDEXED_AS_WRITTEN = frozenset({"date", "time", "type", "user_id", "chat_id", "aliases", "tags"})
"""Properties the index keeps unredacted: they address and filter notes (an email as `user_id`), and hold no secret."""

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
    tokens: int = 0
    """How many model tokens the text is, special tokens included (what embedding it costs)."""


@dataclass(frozen=True)
class _Block:
    text: str
    start: int
    end: int
    heading: str
    section: int = 0
    tokens: int = 0


def redact_note(note: Note) -> Note:
    """The note as the index may hold it: secrets in its body and properties replaced (`companion.secrets`), so the
    lexical index and the chunks (and so the vectors) never hold them; the file itself is never changed.

    The body keeps its lines (a private key leaves its line breaks behind its tag), so chunks still point at the
    right lines of the file; the content hash stays the file's, so a moved note is still recognised.
    """
    body = redact_text(note.body, keep_lines=True)
    properties = {
        key: value if key in INDEXED_AS_WRITTEN else redact_field(key, value, redact_text)
        for key, value in note.frontmatter.items()
    }
    if body == note.body and properties == note.frontmatter:
        return note
    return replace(note, body=body, frontmatter=properties)


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
        stride_turns: int = 3,
    ) -> None:
        self._count = count_tokens
        self.max_tokens = max_tokens
        self.target_tokens = min(target_tokens, max_tokens)
        self.window_turns = window_turns
        self.stride_turns = stride_turns
        self._memo = threading.local()  # the current note's texts and their counts, see `chunk`

    def chunk(self, note: Note) -> list[Chunk]:
        """The chunks of a note, in file order; every note gets at least one chunk (its title)."""
        blocks = _blocks(note.body, note.body_line)
        # Every block and heading line of the note counted in one call to the tokenizer, not one per section and
        # per header: a long note has dozens of each, and each call costs far more than its few texts.
        texts = list(dict.fromkeys([*(b.text for b in blocks), *(_context_line(note, b.heading) for b in blocks)]))
        texts = [t for t in texts if t]
        outer = getattr(self._memo, "known", {})
        self._memo.known = dict(zip(texts, self._count(texts), strict=True)) if texts else {}
        try:
            return self._chunks(note, blocks)
        finally:
            self._memo.known = outer

    def _chunks(self, note: Note, blocks: list[_Block]) -> list[Chunk]:
        if note.kind == "conversation":
            turns = [b for b in blocks if _SPEAKER.match(b.text)]
            if len(turns) >= 2:
                return self._dedupe(self._conversation(note, blocks))
        return self._dedupe(self._sections(note, blocks))

    # -- conversations -------------------------------------------------------------------------

    def _conversation(self, note: Note, blocks: list[_Block]) -> list[Chunk]:
        header = _context_line(note, "")
        budget = self._budget(header, self.max_tokens)
        over = self.max_tokens - budget  # the header's tokens and the special ones
        units = self._fit(blocks, budget)
        chunks: list[Chunk] = []
        start = 0
        while start < len(units):
            window = units[start : start + self.window_turns]
            while len(window) > 1 and sum(u.tokens for u in window) > budget:
                window = window[:-1]
            chunks.append(self._make(note, f"t{start}", header, window, over))
            if start + len(window) >= len(units):
                break
            # Windows do not overlap: with one turn of overlap a conversation made ~40% more vectors (the bulk of an
            # agent's index, and of its memory) for no measurable gain in recall on long conversations. A window
            # shrunk by long turns advances less, so no turn is left unread.
            start += max(1, min(self.stride_turns, len(window)))
        return chunks

    # -- other notes ---------------------------------------------------------------------------

    def _sections(self, note: Note, blocks: list[_Block]) -> list[Chunk]:
        chunks: list[Chunk] = []
        sections: dict[int, list[_Block]] = {}
        for block in blocks:
            sections.setdefault(block.section, []).append(block)
        for section in sections.values():
            heading = section[0].heading
            header = _context_line(note, heading)
            target = self._budget(header, self.target_tokens)
            budget = self._budget(header, self.max_tokens)
            over = self.max_tokens - budget
            units = self._fit(section, budget)
            base = slugify(heading) if heading else "top"
            packed: list[_Block] = []
            size = 0
            n = 0
            for unit in units:
                if packed and size + unit.tokens > target:
                    chunks.append(self._make(note, f"{base}~{n}", header, packed, over))
                    n += 1
                    packed, size = [], 0
                packed.append(unit)
                size += unit.tokens
            if packed:
                chunks.append(self._make(note, f"{base}~{n}", header, packed, over))
        if not chunks:
            # A note with no text of its own is known by its name (a rename re-embeds it) and, when its facts are all
            # properties (a book's author, a trip's dates), by them: its meaning is there or nowhere.
            facts = properties_text(note.frontmatter, plain=True) if note.kind != "session" else ""
            while True:
                text = "\n".join(p for p in (_context_line(note, ""), note.title, facts) if p)
                tokens = self._count([text])[0]
                if tokens <= self.max_tokens or not facts:
                    break
                # Long lists of values: what fits the model, cut in proportion until it does.
                facts = facts[: int(len(facts) * self.max_tokens / tokens * 0.9)]
            chunks.append(Chunk(f"{note.path}#top~0", "top~0", text, text_hash(text), 0, 0, tokens))
        return chunks

    # -- shared --------------------------------------------------------------------------------

    def _tokens(self, texts: Sequence[str]) -> list[int]:
        """Content tokens of each text, without the two special tokens the model adds."""
        if not texts:
            return []
        known: dict[str, int] = getattr(self._memo, "known", {})
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        counted = dict(zip(missing, self._count(missing), strict=True)) if missing else {}
        return [max((known[t] if t in known else counted[t]) - 2, 0) for t in texts]

    def _budget(self, header: str, limit: int) -> int:
        """Content tokens left for blocks under `limit` once the header and special tokens are in.

        BERT's tokenizer splits on whitespace first, so the tokens of blocks joined by newlines are the sum
        of each block's tokens: every text is counted once, never once per candidate window.
        """
        return max(limit - 2 - (self._tokens([header])[0] if header else 0), 1)

    def _fit(self, blocks: list[_Block], budget: int) -> list[_Block]:
        """Count every block, and split each that alone would overflow, by sentences and then by words."""
        out: list[_Block] = []
        for block, tokens in zip(blocks, self._tokens([b.text for b in blocks]), strict=True):
            if tokens <= budget:
                out.append(replace(block, tokens=tokens))
            else:
                out.extend(self._split(block, min(budget, self.target_tokens)))
        return out

    def _split(self, block: _Block, budget: int) -> list[_Block]:
        pieces: list[str] = []
        for sentence in _SENTENCE_END.split(block.text):
            # A "sentence" with no punctuation can be any length; fall back to words.
            pieces.extend([sentence] if len(sentence) < 400 else sentence.split())
        pieces = [p for p in pieces if p.strip()]
        out: list[_Block] = []
        current: list[str] = []
        size = 0
        for piece, tokens in zip(pieces, self._tokens(pieces), strict=True):
            if current and size + tokens > budget:
                out.append(replace(block, text=" ".join(current), tokens=size))
                current, size = [], 0
            # A single word longer than the budget stays whole: the model truncates it, nothing is lost.
            current.append(piece)
            size += tokens
        if current:
            out.append(replace(block, text=" ".join(current), tokens=size))
        return out

    def _make(self, note: Note, anchor: str, header: str, units: Sequence[_Block], over: int) -> Chunk:
        """A chunk of `units` under `header`; `over` is what the header and the special tokens add to the units'
        own tokens (the model reads at most `max_tokens` of it)."""
        text = _join(header, units)
        return Chunk(
            id=f"{note.path}#{anchor}",
            anchor=anchor,
            text=text,
            text_hash=text_hash(text),
            start_line=units[0].start if units else 0,
            end_line=units[-1].end if units else 0,
            tokens=min(over + sum(u.tokens for u in units), self.max_tokens),
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
                chunk = replace(chunk, id=f"{path}#{anchor}", anchor=anchor)
            out.append(chunk)
        return out


def _context_line(note: Note, heading: str) -> str:
    """The line put before each chunk's content: the note's date and the enclosing heading.

    The file name is left out on purpose: a rename must not change any chunk text, or every rename would
    re-embed the note. Titles are searchable through the lexical index, and their meaning through a vector of
    their own (the manifest's title vectors), which a rename alone makes again.
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
    section = 0
    current: list[str] = []
    start = 0
    in_fence = False

    def flush(end: int) -> None:
        text = "\n".join(current).strip()
        if text:
            blocks.append(_Block(text, first_line + start, first_line + end, heading, section))
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
            section += 1
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
