"""Superseded notes: a note a review marked as replaced by a newer one is listed below its replacement."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Hashable, Mapping, Sequence

from companion.recall.candidates import NoteInfo
from companion.recall.results import RecallItem


def replacement_name(link: str) -> str:
    """The note a `superseded_by` value names, lower-cased, without brackets, heading, alias or `.md`:
    `[[Memory/Boiler now#Now|x]]` gives `memory/boiler now`."""
    inner = link.strip().removeprefix("[[").removesuffix("]]")
    return inner.split("|", 1)[0].split("#", 1)[0].strip().removesuffix(".md").casefold()


def below_replacements(
    items: Sequence[RecallItem], infos: Mapping[str, NoteInfo], group: Callable[[RecallItem], Hashable]
) -> list[RecallItem]:
    """The items with each superseded one moved to just below its replacement when that is listed after it in the
    same `group` (a note the question names, the matches, the rest: an item never leaves its group, so a match is
    never pushed among the non-matches). A chain (V1 replaced by V2, replaced by V3) ends newest first."""
    order = list(items)
    superseded = [i for i in order if (info := infos.get(i.path)) is not None and info.superseded_by]
    if not superseded:
        return order  # the common case, on every recall: nothing to look up
    by_name: dict[str, str] = {}
    for item in order:
        by_name.setdefault(item.path.removesuffix(".md").casefold(), item.path)
        by_name.setdefault(item.title.casefold(), item.path)
    newer_of: dict[str, str] = {}
    for item in superseded:
        name = replacement_name(infos[item.path].superseded_by)
        newer = by_name.get(name) or by_name.get(posixpath.basename(name))
        if newer is not None and newer != item.path:
            newer_of[item.path] = newer
    # Each pass moves an item below its replacement; a chain needs as many passes as it has links, and a cycle of
    # supersedes (a user's slip) stops after as many passes as there are items.
    for _ in range(len(newer_of)):
        moved = False
        for item in list(order):
            newer = newer_of.get(item.path)
            if newer is None:
                continue
            positions = {i.path: n for n, i in enumerate(order)}
            replacement = order[positions[newer]]
            if positions[item.path] < positions[newer] and group(item) == group(replacement):
                order.remove(item)
                order.insert(positions[newer], item)  # the replacement moved up one place when this one left
                moved = True
        if not moved:
            break
    return order
