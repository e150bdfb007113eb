"""`companion recall QUERY`: the notes the index returns for a question, best first."""

from __future__ import annotations

import argparse
from typing import Any

from companion.cli.output import print_json
from companion.cli.workspace import add_vault_arguments, open_workspace


def register(sub: Any) -> None:
    """Add the `recall` subcommand."""
    p = sub.add_parser("recall", help="rank notes for a query (dense + lexical)")
    add_vault_arguments(p)
    p.add_argument("query", help="the question or words to look for")
    p.add_argument("--k", type=int, default=10, help="how many notes (default 10)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Search the index; read-only, never writes to the vault."""
    if args.k < 1:
        raise SystemExit("companion recall: --k must be at least 1")
    ws = open_workspace(args)
    try:
        hits = ws.searcher().search(args.query, k=args.k)
    finally:
        ws.close()
    if args.json:
        print_json(
            {
                "query": args.query,
                "results": [
                    {
                        "path": h.path,
                        "score": round(h.score, 6),
                        "dense": round(h.dense, 6),
                        "lexical": round(h.lexical, 6),
                        "anchor": h.anchor,
                        "title": h.title,
                        "kind": h.kind,
                        "type": h.note_type,
                        "date": h.date,
                    }
                    for h in hits
                ],
            }
        )
        return 0
    if not hits:
        print("no notes found (is the vault indexed? run `companion index`)")
    for rank, h in enumerate(hits, 1):
        where = f"#{h.anchor}" if h.anchor else ""
        print(
            f"{rank:>2}. {h.score:.3f}  {h.path}{where}  "
            f"(dense {h.dense:.3f}, bm25 {h.lexical:.2f}{', ' + h.date if h.date else ''})"
        )
    return 0
