"""The wikilink graph from the index: every note's link targets and aliases are in the manifest already.

Reading them back costs a query and some JSON; reading every note again (what `ObsidianVault.graph` does) costs
seconds in a large vault, too slow for an app that shows the graph of whatever note is highlighted.

Session summaries are the one kind of note the index leaves out on purpose (their folder is in `index.exclude`, to
keep agents' notes out of recall), yet their links belong in the graph: a note an agent's session links to has that
session among its backlinks, and is no orphan. Their links come from the vault reader (`session_links`), which
keeps them by file stat as it keeps the hot tier's sessions, so neither the indexer nor the manifest reads them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from companion.vault.graph import VaultGraph
from companion.vault.notes import Link
from companion.vault.parse import aliases_of
from companion.vault.resolve import LinkResolver
from indexer.records import NoteRecord


def manifest_graph(
    records: Iterable[NoteRecord],
    vault_files: Iterable[str],
    sessions: Mapping[str, Sequence[str]] | None = None,
) -> VaultGraph:
    """The link graph of indexed notes (`Manifest.notes()`) and of the session summaries (their link targets, from
    `ObsidianVault.session_links`); the vault's other files (from `scan_all`: attachments, and notes the index leaves
    out) are what else links may point at. A session the index holds after all (its folder taken out of
    `index.exclude`) counts once, as indexed."""
    records = list(records)
    links = {r.path: [Link(target=t) for t in r.link_targets] for r in records}
    for path, targets in (sessions or {}).items():
        links.setdefault(path, [Link(target=t) for t in targets])
    aliases = {r.path: aliases_of(r.frontmatter) for r in records if '"alias' in r.fields_json}
    # Every file resolves a link, as in Obsidian: notes the index leaves out (templates, excluded files) included.
    files = list(dict.fromkeys([*vault_files, *links]))
    return VaultGraph.from_links(links, LinkResolver(files, aliases))
