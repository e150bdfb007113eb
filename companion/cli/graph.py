"""`companion graph NOTE`: a note's wikilinks, backlinks and two-hop neighbourhood, unresolved links marked.

The graph comes from the links the index already holds (as the app's does): reading every note of a 6k-note vault
again took 25 s. Only an empty index falls back to reading the vault. The note's own links are read from its file,
so each target is listed once with the headings and blocks it is linked at.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from companion.cli.args import add_vault_arguments, open_workspace, sync_first
from companion.cli.output import print_json
from companion.errors import NoteError, VaultError
from companion.vault.graph import VaultGraph
from companion.vault.notes import Link
from companion.words import counted
from indexer.graphs import manifest_graph


def register(sub: Any) -> None:
    """Add the `graph` subcommand."""
    p = sub.add_parser("graph", help="a note's links, backlinks and two-hop neighbours")
    add_vault_arguments(p)
    p.add_argument("note", help="a vault path (Projects/Ski Trip.md) or a note name as a wikilink would give it")
    p.add_argument("--hops", type=int, default=2, help="neighbourhood depth (default 2)")
    p.add_argument("--no-sync", action="store_true", help="use the index as it is")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def find_note(graph: VaultGraph, name: str, root: object) -> str:
    """The vault path a user means: an exact path, a path without `.md`, or a link target; else `VaultError`."""
    if not name.strip():
        raise VaultError("give a note: its vault path or its name")
    candidates = [name, f"{name}.md"] if not name.endswith(".md") else [name]
    for path in candidates:
        if path in graph.resolver:
            return path
    target = graph.resolver.resolve(name.removesuffix(".md"), "")
    if target is None:
        raise VaultError(f"no note called {name!r} in {root} (give its vault path or its name)")
    return target


def run(args: argparse.Namespace) -> int:
    """Print the graph around one note; writes nothing in the vault."""
    if args.hops < 1:
        raise VaultError("--hops must be at least 1")
    ws = open_workspace(args)
    try:
        vault = ws.vault
        if ws.manifest.note_count() == 0:
            print("companion: the index is empty, so every note is read (run `companion index` once)", file=sys.stderr)
            graph = vault.graph()
        else:
            sync_first(ws, args)
            graph = manifest_graph(ws.manifest.notes(), vault.scan_all(), vault.session_links())
        path = find_note(graph, args.note, vault.root)
        try:
            links = vault.read_note(path).links
        except NoteError:
            links = tuple(link for link, _resolved in graph.outlinks(path))
        back = graph.backlinks(path)
        near = {p: d for p, d in graph.neighbours(path, args.hops).items() if p != path}
    finally:
        ws.close()
    outgoing = _grouped(links, graph, path)
    if args.json:
        print_json(
            {
                "note": path,
                "outlinks": [
                    {"target": target, "path": resolved, "resolved": resolved is not None, "at": places, "line": line}
                    for target, (resolved, places, line) in outgoing.items()
                ],
                "backlinks": back,
                "neighbours": [{"path": p, "hops": d} for p, d in sorted(near.items(), key=lambda x: (x[1], x[0]))],
            }
        )
        return 0
    print(path)
    print(f"links to ({len(outgoing)})")
    for target, (resolved, places, line) in outgoing.items():
        at = f"  at {', '.join(places)}" if places else ""
        print(f"  -> {resolved}{at}" if resolved else f"  -> [[{target}]]  (unresolved, line {line}){at}")
    print(f"linked from ({len(back)})")
    for p in back:
        print(f"  <- {p}")
    far = sorted(p for p, d in near.items() if d > 1)
    print(f"within {counted(args.hops, 'hop')}, not directly linked ({len(far)})")
    for p in far:
        print(f"  .. {p}")
    return 0


def _grouped(links: tuple[Link, ...], graph: VaultGraph, path: str) -> dict[str, tuple[str | None, list[str], int]]:
    """Each link target once: where it resolves, the headings (`#Heading`) and blocks (`#^id`) it is linked at, and
    the 1-based line of its first link."""
    out: dict[str, tuple[str | None, list[str], int]] = {}
    for link in links:
        if not link.target:
            continue  # a link to a heading of the note itself
        resolved, places, line = out.get(link.target, (graph.resolver.resolve(link.target, path), [], link.line + 1))
        place = f"#^{link.block}" if link.block else f"#{link.heading}" if link.heading else ""
        if place and place not in places:
            places.append(place)
        out[link.target] = (resolved, places, line)
    return out
