"""Suggestions about single notes: links to no note, memory notes without a valid type, stale and orphaned notes."""

from __future__ import annotations

import difflib
import posixpath
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime

import numpy as np
import numpy.typing as npt

from companion.curation.suggestions import NoteFacts, Proposal, Suggestion, Usage, fingerprint
from companion.vault.notes import KNOWN_TYPES, MEMORY_TYPES, OFFERED_TYPES

CLOSE_NAME = 0.8
"""How alike (0-1, by characters) a broken link's target and a note's title or alias must be to propose it."""
ORPHAN_DAYS = 30
"""A note this many days old that links nowhere and that nothing links to is an orphan."""

_CANDIDATES = 30

Resolve = Callable[[str, str], str | None]
"""Resolves a link target written in a note (target, the note's path) to a vault path, or None."""


def broken_links(notes: Mapping[str, NoteFacts], resolve: Resolve) -> list[Suggestion]:
    """Wikilinks to no note whose target is close to an existing title or alias (a typo, a renamed note): relink
    each to it. A link to no note like any other is left alone: in Obsidian it is how a note yet to be written is
    named."""
    names: dict[str, str] = {}
    for path, note in notes.items():
        for name in (note.title, *note.aliases):
            names.setdefault(name.casefold(), path)
    close_to = _NameIndex(names)
    out: list[Suggestion] = []
    for path, note in sorted(notes.items()):
        for target in dict.fromkeys(note.links):
            # A target ending in `.md` comes from a Markdown link, which a relink does not rewrite.
            if not target or _is_attachment(target) or target.casefold().endswith(".md"):
                continue
            if resolve(target, path) is not None:
                continue
            wanted = posixpath.basename(target).casefold()
            close = close_to(wanted)
            if close:
                found = names[close[0]]
                ratio = difflib.SequenceMatcher(None, wanted, close[0]).ratio()
                out.append(
                    Suggestion(
                        kind="broken_link",
                        paths=(path, found),
                        summary=f"{note.title} links to [[{target}]], which is no note: {notes[found].title}?",
                        evidence=(
                            f"no note is called {target!r}",
                            f"closest title or alias: {close[0]!r} ({ratio:.0%} alike), {found}",
                        ),
                        proposal=Proposal("relink", path, found, target),
                        value=0.5 + 0.3 * ratio,
                        fingerprint=fingerprint(notes, (path, found)),
                    )
                )
    return out


def missing_types(
    notes: Mapping[str, NoteFacts], memory_folder: str, vectors: Mapping[str, npt.NDArray[np.float32]]
) -> list[Suggestion]:
    """Notes in the memory folder with no `type`, or one that is no known type: set the likeliest type."""
    prefix = memory_folder.strip("/").casefold() + "/"
    typed = [p for p, n in notes.items() if n.note_type in MEMORY_TYPES and p in vectors]
    matrix = np.stack([vectors[p] for p in typed]) if typed else None
    out: list[Suggestion] = []
    for path, note in sorted(notes.items()):
        if not path.casefold().startswith(prefix) or note.kind == "conversation":
            continue
        written = note.frontmatter.get("type")
        if isinstance(written, str) and written in KNOWN_TYPES:
            continue
        guess, why = _guess_type(path, notes, typed, matrix, vectors)
        problem = (
            "has no type" if written in (None, "") else f"has the type {written!r}, one the companion does not know"
        )
        out.append(
            Suggestion(
                kind="missing_type",
                paths=(path,),
                summary=f"{note.title} {problem}: {guess}?",
                evidence=(f"{path} {problem} (known types: {', '.join(OFFERED_TYPES)})", why),
                proposal=Proposal("set_type", path, "", guess),
                value=0.55,
                fingerprint=fingerprint(notes, (path,)),
            )
        )
    return out


def stale_and_orphans(
    notes: Mapping[str, NoteFacts],
    backlinks: Mapping[str, int],
    resolved_out: Mapping[str, int],
    usage: Mapping[str, Usage],
    now: datetime,
) -> list[Suggestion]:
    """Notes nothing links to whose use has faded to the decay's floor (archive them), and notes that link nowhere
    and that nothing links to (orphans, pointed out)."""
    out: list[Suggestion] = []
    today = now.date()
    for path, note in sorted(notes.items()):
        if note.kind == "conversation" or note.pinned or backlinks.get(path, 0):
            continue
        age = (today - datetime.fromisoformat(note.moment).date()).days if _is_day(note.moment) else 0
        # Only use fades a note: one never used keeps the decay of a new note (nothing says it is stale, and a vault
        # the companion has just met would otherwise be all stale).
        used = usage.get(path)
        if used is not None and used.last_used is not None and used.at_floor:
            unused = (now - used.last_used).days
            why = f"last used {unused} days ago ({used.uses} uses); its decay is at the floor, {used.decay:.2f}"
            out.append(
                Suggestion(
                    kind="stale",
                    paths=(path,),
                    summary=f"{note.title} has faded: nothing links to it and it is not used",
                    evidence=(why, "no note links to it"),
                    proposal=Proposal("archive", path),
                    value=0.3 + 0.15 * min(1.0, unused / 365),
                    fingerprint=fingerprint(notes, (path,)),
                )
            )
        elif not resolved_out.get(path, 0) and age >= ORPHAN_DAYS:
            out.append(
                Suggestion(
                    kind="orphan",
                    paths=(path,),
                    summary=f"{note.title} is an orphan: it links nowhere and nothing links to it",
                    evidence=(f"{age} days old", "no links in or out: link it from a related note, or archive it"),
                    proposal=Proposal("none", path),
                    value=0.1,
                    fingerprint=fingerprint(notes, (path,)),
                )
            )
    return out


class _NameIndex:
    """The title or alias closest to a misspelt name, compared only with names sharing some of its letter triples
    (comparing with every name of a large vault costs a tenth of a second a link)."""

    def __init__(self, names: Mapping[str, str]) -> None:
        self._by_triple: dict[str, list[str]] = {}
        for name in names:
            for triple in _letter_triples(name):
                self._by_triple.setdefault(triple, []).append(name)

    def __call__(self, wanted: str) -> list[str]:
        shared: Counter[str] = Counter()
        for triple in _letter_triples(wanted):
            shared.update(self._by_triple.get(triple, ()))
        likely = [name for name, _ in shared.most_common(_CANDIDATES)]
        return difflib.get_close_matches(wanted, likely, n=1, cutoff=CLOSE_NAME)


def _letter_triples(name: str) -> set[str]:
    padded = f"  {name} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def _guess_type(
    path: str,
    notes: Mapping[str, NoteFacts],
    typed: list[str],
    matrix: npt.NDArray[np.float32] | None,
    vectors: Mapping[str, npt.NDArray[np.float32]],
) -> tuple[str, str]:
    """The likeliest memory type of a note: from its folder's name, else from the notes most like it."""
    for part in reversed(path.split("/")[:-1]):
        word = part.casefold().rstrip("s")
        if word in MEMORY_TYPES:
            return word, f"it sits in the folder {part}/"
    if path in vectors and matrix is not None:
        sims = matrix @ vectors[path]
        best = [typed[int(i)] for i in np.argsort(-sims)[:6] if typed[int(i)] != path][:5]
        votes = Counter(str(notes[p].note_type) for p in best)
        guess, count = votes.most_common(1)[0]
        return guess, f"{count} of the {len(best)} memory notes most like it are of type {guess}"
    return "fact", "no folder or similar note says otherwise; a fact is the commonest memory"


def _is_attachment(target: str) -> bool:
    extension = posixpath.splitext(target)[1].casefold()
    # `[[Release 2.0]]` names a note; `.png`, `.pdf` or `.base` name files.
    return bool(extension) and len(extension) <= 6 and extension[1:].isalnum() and not extension[1:].isdigit()


def _is_day(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True
