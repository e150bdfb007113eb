"""The wikilink graph as recall evidence: a candidate linked (either way) with one of the strongest candidates gains
relevance, and the notes the very strongest link to become candidates themselves (the graph retrieval path).

Links are matched by name, as Obsidian resolves them: a note's file name or one of its aliases, case folded.
"""

from __future__ import annotations

from collections.abc import Sequence

from companion.recall.candidates import Hit, NoteIndex, NoteInfo
from companion.recall.scope import Scope

SOURCES = 10
"""The strongest candidates whose links count as a relevance signal."""
EXPAND = 3
"""The strongest candidates whose neighbours are added as candidates."""


def graph_signal(hits: Sequence[Hit], weight: float) -> tuple[dict[str, float], dict[str, str]]:
    """(path to boost, path to the candidate it came through) for candidates linked with one of the `SOURCES`
    strongest, each boosted by `weight` times that candidate's score (the largest such when several are)."""
    if weight <= 0:
        return {}, {}
    names = _name_index(hits)
    links_of = {h.path: {link_name(t) for t in h.info.links} for h in hits}
    boost: dict[str, float] = {}
    via: dict[str, str] = {}
    strongest = sorted(hits, key=lambda h: -h.score)[:SOURCES]
    for source in strongest:
        linked: set[str] = set()
        for name in links_of[source.path]:
            linked.update(names.get(name, ()))
        own = _names_of(source.info)
        linked.update(h.path for h in hits if links_of[h.path] & own)
        linked.discard(source.path)
        for path in linked:
            gain = weight * source.score
            if gain > boost.get(path, 0.0):
                boost[path] = gain
                via[path] = source.path
    return boost, via


def graph_neighbours(index: NoteIndex, hits: Sequence[Hit], scope: Scope) -> dict[str, tuple[NoteInfo, Hit]]:
    """The notes the `EXPAND` strongest candidates link to, within `scope`, each with the candidate linking it."""
    strongest = sorted(hits, key=lambda h: -h.score)[:EXPAND]
    wanted: dict[str, Hit] = {}
    for hit in strongest:
        for target in hit.info.links:
            wanted.setdefault(link_name(target), hit)
    if not wanted:
        return {}
    found = index.titled(wanted)
    paths = {paths[0]: wanted[name] for name, paths in found.items() if paths}
    infos = index.infos(list(paths))
    out: dict[str, tuple[NoteInfo, Hit]] = {}
    for path, info in infos.items():
        if scope.matches(path, info.kind, info.note_type, info.day, info.frontmatter):
            out[path] = (info, paths[path])
    return out


def link_name(target: str) -> str:
    """The name a link target resolves by: its last path part, without `.md`, case folded."""
    name = target.rsplit("/", 1)[-1]
    return name.removesuffix(".md").casefold()


def _names_of(info: NoteInfo) -> set[str]:
    names = {info.title.casefold()}
    if '"aliases"' not in info.fields_json:
        return names  # most notes have none: skip decoding their frontmatter
    aliases = info.frontmatter.get("aliases")
    if isinstance(aliases, list):
        names.update(str(a).casefold() for a in aliases)
    elif isinstance(aliases, str):
        names.add(aliases.casefold())
    return names


def _name_index(hits: Sequence[Hit]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for hit in hits:
        for name in _names_of(hit.info):
            out.setdefault(name, []).append(hit.path)
    return out
