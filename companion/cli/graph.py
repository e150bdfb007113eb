"""`companion graph NOTE`: a note's wikilinks, backlinks and two-hop neighbourhood, unresolved links marked."""

from __future__ import annotations

import argparse
from typing import Any

from companion.cli.args import add_vault_arguments, open_workspace
from companion.cli.output import print_json
from companion.errors import VaultError
from companion.vault.reader import ObsidianVault
from companion.words import counted


def register(sub: Any) -> None:
    """Add the `graph` subcommand."""
    p = sub.add_parser("graph", help="a note's links, backlinks and two-hop neighbours")
    add_vault_arguments(p)
    p.add_argument("note", help="a vault path (Projects/Ski Trip.md) or a note name as a wikilink would give it")
    p.add_argument("--hops", type=int, default=2, help="neighbourhood depth (default 2)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def find_note(vault: ObsidianVault, name: str) -> str:
    """The vault path a user means: an exact path, a path without `.md`, or a link target; else `VaultError`."""
    if not name.strip():
        raise VaultError("give a note: its vault path or its name")
    graph = vault.graph()
    candidates = [name, f"{name}.md"] if not name.endswith(".md") else [name]
    for path in candidates:
        if path in graph.resolver:
            return path
    target = graph.resolver.resolve(name.removesuffix(".md"), "")
    if target is None:
        raise VaultError(f"no note called {name!r} in {vault.root} (give its vault path or its name)")
    return target


def run(args: argparse.Namespace) -> int:
    """Print the graph around one note; reads the vault, writes nothing."""
    if args.hops < 1:
        raise VaultError("--hops must be at least 1")
    ws = open_workspace(args)
    try:
        vault = ws.vault
        path = find_note(vault, args.note)
        graph = vault.graph()
        out = graph.outlinks(path)
        back = graph.backlinks(path)
        near = {p: d for p, d in graph.neighbours(path, args.hops).items() if p != path}
    finally:
        ws.close()
    if args.json:
        print_json(
            {
                "note": path,
                "outlinks": [
                    {"target": link.target, "path": resolved, "resolved": resolved is not None, "line": link.line + 1}
                    for link, resolved in out
                ],
                "backlinks": back,
                "neighbours": [{"path": p, "hops": d} for p, d in sorted(near.items(), key=lambda x: (x[1], x[0]))],
            }
        )
        return 0
    print(path)
    print(f"links to ({len(out)})")
    for link, resolved in out:
        print(f"  -> {resolved}" if resolved else f"  -> [[{link.target}]]  (unresolved, line {link.line + 1})")
    print(f"linked from ({len(back)})")
    for p in back:
        print(f"  <- {p}")
    far = sorted(p for p, d in near.items() if d > 1)
    print(f"within {counted(args.hops, 'hop')}, not directly linked ({len(far)})")
    for p in far:
        print(f"  .. {p}")
    return 0
