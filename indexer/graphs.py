"""The wikilink graph from the index: every note's link targets and aliases are in the manifest already.

Reading them back costs a query and some JSON; reading every note again (what `ObsidianVault.graph` does) costs
seconds in a large vault, too slow for an app that shows the graph of whatever note is highlighted.
"""

from __future__ import annotations

from companion.graph import VaultGraph
from companion.notes import Link
from companion.parse import aliases_of
from companion.resolve import LinkResolver
from companion.vault import ObsidianVault
from indexer.manifest import Manifest


def manifest_graph(manifest: Manifest, vault: ObsidianVault) -> VaultGraph:
    """The link graph of the indexed notes; attachments come from a scan of the vault, so links to them resolve."""
    records = manifest.notes()
    links = {r.path: [Link(target=t) for t in r.link_targets] for r in records}
    aliases = {r.path: aliases_of(r.frontmatter) for r in records if '"alias' in r.fields_json}
    files = [path for path in vault.scan_all() if not path.endswith(".md")]
    files.extend(links)
    return VaultGraph.from_links(links, LinkResolver(files, aliases))
