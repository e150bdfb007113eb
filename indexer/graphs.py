"""The wikilink graph from the index: every note's link targets and aliases are in the manifest already.

Reading them back costs a query and some JSON; reading every note again (what `ObsidianVault.graph` does) costs
seconds in a large vault, too slow for an app that shows the graph of whatever note is highlighted.
"""

from __future__ import annotations

from collections.abc import Iterable

from companion.vault.graph import VaultGraph
from companion.vault.notes import Link
from companion.vault.parse import aliases_of
from companion.vault.resolve import LinkResolver
from indexer.manifest import NoteRecord


def manifest_graph(records: Iterable[NoteRecord], vault_files: Iterable[str]) -> VaultGraph:
    """The link graph of indexed notes (`Manifest.notes()`); the vault's other files (from `scan_all`: attachments,
    and notes the index leaves out) are what else links may point at."""
    records = list(records)
    links = {r.path: [Link(target=t) for t in r.link_targets] for r in records}
    aliases = {r.path: aliases_of(r.frontmatter) for r in records if '"alias' in r.fields_json}
    # Every file resolves a link, as in Obsidian: notes the index leaves out (templates, excluded files) included.
    files = list(dict.fromkeys([*vault_files, *links]))
    return VaultGraph.from_links(links, LinkResolver(files, aliases))
