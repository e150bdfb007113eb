"""Session summaries among the warm tier's candidates: listed under their carrier, named by what the user said.

A summary is indexed as its exchange (`indexer.summaries`), so it comes back from a search like any note. Three
things differ from a note: a conversation note filed for the same exchange is what recall lists instead (the
carrier rule: never both); its title is the user's message, since its file name (`14-03.md`) says nothing; and its
passage is the exchange, read from its properties, since its body alone leaves the two messages out.
"""

from __future__ import annotations

from dataclasses import replace

from companion.recall.candidates import Hit, NoteIndex
from companion.recall.scope import Scope
from companion.recall.sessionrefs import carriers
from companion.vault.boilerplate import exchange_text
from companion.vault.notes import Note
from companion.vault.sessions import read_session
from companion.words import one_line

_TITLE_CHARS = 80


def carry_sessions(hits: dict[str, Hit], index: NoteIndex, scope: Scope) -> None:
    """Put each summary hit that a conversation note within `scope` carries under that note (in place): the note
    keeps the better of its own hit and the summary's; a summary whose carrier the scope leaves out stays itself."""
    summaries = [h.info for h in hits.values() if h.info.kind == "session"]
    if not summaries:
        return
    for path, carrier in carriers(index, summaries).items():
        if not scope.matches(carrier.path, carrier.kind, carrier.note_type, carrier.day, carrier.frontmatter):
            continue
        hit = hits.pop(path)
        own = hits.get(carrier.path)
        if own is None or own.score < hit.score:
            # The summary's chunk is not the carrier's: the passage is looked for in the carrier's whole text.
            hits[carrier.path] = replace(hit, path=carrier.path, info=carrier, anchor="")


def session_title(hit: Hit) -> str:
    """What a result is called: a summary by the user's message on one line, any other note by its title."""
    if hit.info.kind != "session":
        return hit.info.title
    said = str(hit.info.frontmatter.get("user_msg") or "").strip()
    return one_line(said, _TITLE_CHARS) if said else hit.info.title


def session_passage(note: Note) -> str:
    """A summary's passage: when and with whom, then the exchange (the user's message, the reply, the body)."""
    summary = read_session(note.path, note)
    who = " · ".join(part for part in (summary.user_id, summary.chat_id) if part)
    head = " ".join(part for part in (summary.date, summary.time) if part)
    header = f"{head} · {who}" if who and head else head or who
    text = exchange_text(summary.user_msg, summary.sentinel_msg, note.body)
    return f"{header}\n{text}" if header else text
