"""Superseded notes: a note a review marked as replaced by a newer one is listed right below its replacement."""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Mapping, Sequence

from companion.recall.candidates import NoteInfo
from companion.recall.results import RecallItem


def replacement_name(link: str) -> str:
    """The note name a `superseded_by` value names: `[[Boiler pressure#Now|x]]` gives `boiler pressure`."""
    inner = link.strip().removeprefix("[[").removesuffix("]]")
    target = inner.split("|", 1)[0].split("#", 1)[0].strip()
    return posixpath.basename(target).removesuffix(".md").casefold()


def below_replacements(
    items: Sequence[RecallItem], infos: Mapping[str, NoteInfo], named: Collection[str] = ()
) -> list[RecallItem]:
    """The items with each superseded one moved to just below its replacement, when that is listed after it; a note
    the question names (`named`) stays where it is."""
    order = list(items)
    by_name: dict[str, str] = {}
    for item in order:
        by_name.setdefault(item.title.casefold(), item.path)
        by_name.setdefault(item.path.removesuffix(".md").casefold(), item.path)
    for item in list(order):
        info = infos.get(item.path)
        if info is None or not info.superseded_by or item.path in named:
            continue
        newer = by_name.get(replacement_name(info.superseded_by))
        if newer is None or newer == item.path:
            continue
        positions = {i.path: n for n, i in enumerate(order)}
        if positions[item.path] < positions[newer]:
            order.remove(item)
            order.insert(positions[newer], item)  # the newer note moved up one place when this one left
    return order
