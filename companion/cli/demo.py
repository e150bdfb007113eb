"""`companion demo [DIR]`: write a realistic demo vault, index it, and show what recall finds."""

from __future__ import annotations

import argparse
import shlex
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from companion.cli.output import ProgressBar, print_json
from companion.locations import data_root
from companion.recall.results import relevance_text
from companion.words import counted
from companion.workspace import Workspace

SAMPLE_QUERIES = (
    "where are we going skiing and what is the budget?",
    "what did we decide about the kitchen renovation?",
    "what did we talk about recently?",
)


def register(sub: Any) -> None:
    """Add the `demo` subcommand."""
    p = sub.add_parser("demo", help="write a demo vault, index it and run sample recalls")
    p.add_argument("dir", nargs="?", help="where to write it (default: <data root>/demo-vault)")
    p.add_argument("--data-dir", help="root of the companion's data")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--reset",
        action="store_true",
        help="write the demo vault afresh (by default an existing one is kept, with your curations in it)",
    )
    p.add_argument("--no-tui", action="store_true", help="do not open the app afterwards (it opens only in a terminal)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write (or refresh) the demo vault, index it incrementally, print sample recalls."""
    from companion.demo.build import write_demo_vault, written_demo

    dest = Path(args.dir) if args.dir else data_root(args.data_dir) / "demo-vault"
    kept = None if args.reset else written_demo(dest)
    # An existing demo vault may hold the user's curations (pins, tags, merges): never reset it unasked.
    summary = kept or write_demo_vault(dest, now=datetime.now().astimezone())
    ws = Workspace.open(dest, data_dir=args.data_dir)
    try:
        with ws.writing():
            bar = None if args.json else ProgressBar("indexing demo vault")
            report = ws.indexer().sync(progress=bar)
            if bar:
                bar.close()
        engine = ws.recall()
        samples = {q: engine.recall(q, k=4).results for q in SAMPLE_QUERIES}
        hot = engine.hot()[0]
    finally:
        ws.close()
    if args.json:
        print_json(
            {
                "vault": str(dest),
                "summary": summary.__dict__,
                "kept": kept is not None,
                "policy": {
                    "hot_limit": ws.config.retention.hot_limit,
                    "hot_window_days": ws.config.retention.hot_window_days,
                },
                "index": report.as_dict(),
                "samples": {
                    q: [{"path": h.path, "score": round(h.score, 4), "tier": h.tier} for h in hits]
                    for q, hits in samples.items()
                },
            }
        )
        return 0
    print(
        f"demo vault  {dest}" + ("  (kept as you left it; `companion demo --reset` writes it afresh)" if kept else "")
    )
    print(
        f"            {summary.sessions} sessions, {summary.conversations} conversation notes, "
        f"{summary.memory_notes} memory notes, {summary.other_notes} other notes"
    )
    print(
        f"indexed     {counted(report.notes_indexed, 'note')}, {counted(report.chunks_embedded, 'chunk')} embedded "
        f"in {report.elapsed_s:.1f} s"
    )
    print(
        f"hot tier    {counted(len(hot), 'session')} "
        f"(policy: {ws.config.retention.hot_limit} per user and chat, "
        f"{counted(ws.config.retention.hot_window_days, 'day')})"
    )
    for query, hits in samples.items():
        print(f"\nrecall  {query!r}")
        for rank, h in enumerate(hits, 1):
            print(f"  {rank}. {relevance_text(h):>5} {h.tier:<8} {h.path}")
    # The hint runs as printed: the same data folder as this demo, so it reads the index just built.
    data = f" --data-dir {shlex.quote(str(args.data_dir))}" if args.data_dir else ""
    print(f"\nTry:  companion recall --vault {shlex.quote(str(dest))}{data} --explain 'what is the running plan?'")
    if args.no_tui or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return 0
    from companion.tui.app import CompanionApp  # Textual is imported only when the app runs

    ws = Workspace.open(dest, data_dir=args.data_dir)
    try:
        return int(CompanionApp(ws).run() or 0)
    finally:
        ws.close()
