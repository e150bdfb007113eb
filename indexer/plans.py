"""What the words phase makes of a changed note before committing it: its plan (the chunks to write and those that
keep a vector), the manifest's records of it and its chunks, the metadata stored with its vectors, and the words
the full-text index holds for it."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field

from companion.vault.dates import note_day
from companion.vault.notes import FileStat, Note
from indexer.chunking import Chunk
from indexer.records import ChunkRecord, NoteRecord


def queue_day(plan: Plan) -> int:
    """The day a note's chunks are queued under (`YYYYMMDD`): its `date`, or for an undated note the day its file
    was last written."""
    day = int(plan.meta["day"])
    if day:
        return day
    return int(dt.datetime.fromtimestamp(plan.stat.mtime_ns / 1e9).strftime("%Y%m%d"))


def guess_tokens(text: str) -> int:
    """A token count for a chunk made before chunks carried theirs: about one token per four characters."""
    return max(len(text) // 4, 1) + 2


def note_metadata(note: Note) -> dict[str, str | int]:
    """The per-note fields stored with each chunk vector, for filtering in the store."""
    fm = note.frontmatter
    date = fm.get("date")
    day = note_day(date)
    date_s = day.isoformat() if day else (str(date)[:10] if date else "")
    digits = date_s.replace("-", "")
    return {
        "path": note.path,
        "kind": note.kind,
        "type": note.note_type or "",
        "date": date_s,
        "day": int(digits) if len(digits) == 8 and digits.isdigit() else 0,
        "user_id": str(fm.get("user_id") or ""),
        "chat_id": str(fm.get("chat_id") or ""),
    }


def meta_hash(meta: dict[str, str | int]) -> str:
    """A hash of a note's chunk metadata, to notice an edit of its properties alone."""
    return hashlib.sha1(json.dumps(meta, sort_keys=True).encode("utf-8")).hexdigest()


@dataclass
class Plan:
    """What the words phase does with one changed note: its chunks, which to write and which keep a vector."""

    note: Note
    """The note as read (its secrets redacted)."""
    stat: FileStat
    """Its file's stat when read."""
    chunks: list[Chunk]
    """Every chunk of the note, in note order."""
    meta: dict[str, str | int]
    """The metadata stored with each of its vectors (`note_metadata`)."""
    write: list[Chunk] = field(default_factory=list)
    """Chunks whose text is new: queued for a vector."""
    reuse: dict[str, str] = field(default_factory=dict)
    """New chunk id to the donor chunk id whose vector it takes."""
    stale: list[str] = field(default_factory=list)
    """Chunk ids of the note before that are gone."""
    moved_from: str | None = None
    """The path the note had, when it moved."""
    replaced: list[str] = field(default_factory=list)
    """Ids written anew whose old vector is in the store."""
    words: str | None = None
    """The full-text index's text when it is not the note's own (a session summary's)."""


def note_record(plan: Plan) -> NoteRecord:
    """What the manifest records of a planned note."""
    note = plan.note
    return NoteRecord(
        path=note.path,
        mtime_ns=plan.stat.mtime_ns,
        size=plan.stat.size,
        content_hash=note.content_hash,
        meta_hash=meta_hash(plan.meta),
        kind=note.kind,
        note_type=note.note_type,
        title=note.title,
        date=str(plan.meta["date"]) or None,
        fields_json=json.dumps(note.frontmatter, ensure_ascii=False, default=str),
        links_json=json.dumps(list(dict.fromkeys(link.target for link in note.links if link.target))),
    )


def chunk_records(plan: Plan) -> list[ChunkRecord]:
    """The manifest's records of a planned note's chunks, in note order."""
    return [
        ChunkRecord(c.id, plan.note.path, c.anchor, c.text_hash, c.start_line, c.end_line, i)
        for i, c in enumerate(plan.chunks)
    ]


def words_of(plan: Plan) -> str:
    """The text the full-text index holds for a planned note."""
    if plan.words is not None:
        return plan.words  # a summary's exchange, boilerplate left out: its properties hold the messages whole
    note = plan.note
    # Frontmatter values are searchable too (people, tags, topics), after the body.
    extras = " ".join(str(v) for k, v in note.frontmatter.items() if k not in {"date", "time"} and v)
    return f"{note.body}\n{extras}" if extras else note.body
