"""`companion bench`: measure the product's performance targets on synthetic vaults, as JSON.

Each figure comes from running the real code paths: the indexer, the watcher, the searcher. Where a
measurement does not depend on what the vectors mean (a restart's cost, the store's size), the index may be
filled with the hashing embedder (`--embedder hash`) to save hours of model time; the output says which
embedder each figure used.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
from pathlib import Path
from typing import Any

from companion.cli.bench.app import tui, tui_while_indexing
from companion.cli.bench.bigvault import big_vault
from companion.cli.bench.common import cpus
from companion.cli.bench.imports import import_speed
from companion.cli.bench.indexing import cold_build, restart, save_to_searchable
from companion.cli.bench.mcp import disclosure, mcp
from companion.cli.bench.models import int8_model
from companion.cli.bench.pipeline import process_history
from companion.cli.bench.recall import batch, nearest, recall
from companion.cli.bench.review import review
from companion.cli.bench.summaries import summaries
from companion.cli.output import print_json

MEASURES = (
    "cold",
    "restart",
    "save",
    "recall",
    "nearest",
    "batch",
    "tui",
    "tui-indexing",
    "process",
    "import",
    "mcp",
    "review",
    "int8",
    "summaries",
    "bigvault",
)
DEFAULT_MEASURES = tuple(m for m in MEASURES if m != "bigvault")
"""What runs without `--only`: the big vault takes about half an hour of model time, so it is asked for by name."""


def register(sub: Any) -> None:
    """Add the `bench` subcommand."""
    p = sub.add_parser("bench", help="measure indexing and recall speed on synthetic vaults (JSON)")
    p.add_argument(
        "--only",
        default=",".join(DEFAULT_MEASURES),
        help=f"comma list of {', '.join(MEASURES)} (default: all but bigvault)",
    )
    p.add_argument("--cold-notes", type=int, default=500, help="notes for the cold build (real model)")
    p.add_argument("--restart-notes", type=int, default=10_000, help="notes for the restart check")
    p.add_argument("--recall-notes", type=int, default=10_000, help="notes for recall latency")
    p.add_argument("--nearest-notes", type=int, default=2000, help="notes for exact against approximate search")
    p.add_argument("--saves", type=int, default=50, help="saves for save-to-searchable latency")
    p.add_argument("--queries", type=int, default=200, help="queries for recall latency")
    p.add_argument(
        "--embedder",
        choices=("minilm", "hash"),
        default="hash",
        help="embedder that fills the big restart/recall vaults (the cold build always uses minilm)",
    )
    p.add_argument(
        "--query-embedder",
        choices=("minilm", "hash"),
        default="minilm",
        help="embedder for recall's questions (default minilm: the real per-query model cost is included)",
    )
    p.add_argument("--batch-notes", type=int, default=300, help="notes for the batch run (real model)")
    p.add_argument("--batch-queries", type=int, default=2000, help="questions in the batch run")
    p.add_argument(
        "--incoming-notes", type=int, default=1000, help="notes written into the vault while the app runs (real model)"
    )
    p.add_argument("--history-days", type=int, default=21, help="days of heartbeat history (144 entries a day)")
    p.add_argument("--entry-kb", type=int, default=154, help="size of one heartbeat entry in KB (a busy agent's: ~154)")
    p.add_argument("--import-sessions", type=int, default=200, help="generated Claude Code sessions to import")
    p.add_argument("--import-turns", type=int, default=40, help="exchanges in each generated session")
    p.add_argument("--mcp-notes", type=int, default=10_000, help="notes behind the MCP server (hashing embedder)")
    p.add_argument("--review-notes", type=int, default=10_000, help="ordinary notes of the review queue's vault")
    p.add_argument("--int8-notes", type=int, default=300, help="conversation notes the two models embed (int8)")
    p.add_argument("--int8-long-notes", type=int, default=100, help="long notes the two models embed (int8)")
    p.add_argument(
        "--summaries", type=int, default=10_000, help="session summaries of the summaries vault (real model)"
    )
    p.add_argument(
        "--summaries-heartbeats",
        type=float,
        default=30,
        help="percent of those summaries that are heartbeat polls answered HEARTBEAT_OK",
    )
    p.add_argument("--bigvault-notes", type=int, default=5000, help="long notes of the big vault (real model)")
    p.add_argument(
        "--bigvault-vault", metavar="DIR", help="build this vault instead of a generated one (a probe note is added)"
    )
    p.add_argument("--dir", help="work folder (default: a temporary folder, removed afterwards)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the selected measures and print one JSON object."""
    only = [m.strip() for m in args.only.split(",") if m.strip()]
    unknown = set(only) - set(MEASURES)
    if unknown:
        raise SystemExit(f"companion bench: unknown measure(s) {', '.join(sorted(unknown))}")
    results: dict[str, Any] = {"machine": {"cpus": cpus(), "python": sys.version.split()[0]}}
    with tempfile.TemporaryDirectory(prefix="companion-bench-") as tmp:
        work = Path(args.dir) if args.dir else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if "cold" in only:
            results["cold_build"] = cold_build(work / "cold", args.cold_notes)
        if "restart" in only:
            results["restart"] = restart(work / "restart", args.restart_notes, args.embedder)
        if "save" in only:
            results["save_to_searchable"] = save_to_searchable(work / "save", args.saves)
        if "recall" in only:
            results["recall"] = recall(
                work / "recall", args.recall_notes, args.queries, args.embedder, args.query_embedder
            )
        if "nearest" in only:
            results["nearest"] = nearest(work / "nearest", args.nearest_notes, args.queries)
        if "batch" in only:
            results["batch"] = batch(work / "batch", args.batch_notes, args.batch_queries)
        if "tui" in only:
            results["tui"] = tui(work / "recall", args.recall_notes, args.embedder)
        if "tui-indexing" in only:
            results["tui_while_indexing"] = tui_while_indexing(work / "tui-indexing", args.incoming_notes)
        if "mcp" in only:
            results["mcp"] = mcp(work / "mcp", args.mcp_notes, args.queries)
            results["mcp"]["tokens_per_step"] = disclosure(work / "mcp-demo")
        if "review" in only:
            results["review"] = review(work / "review", args.review_notes)
        if "process" in only:
            results["process"] = process_history(work / "process", args.history_days, args.entry_kb)
        if "import" in only:
            results["import"] = import_speed(work / "import", args.import_sessions, args.import_turns)
        if "int8" in only:
            results["int8_model"] = int8_model(work / "int8", args.int8_notes, args.int8_long_notes)
        if "summaries" in only:
            results["summaries"] = summaries(
                work / "summaries", args.summaries, args.summaries_heartbeats, args.queries
            )
        if "bigvault" in only:
            vault = Path(args.bigvault_vault) if args.bigvault_vault else None
            (work / "bigvault").mkdir(parents=True, exist_ok=True)
            results["bigvault"] = big_vault(work / "bigvault", args.bigvault_notes, vault)
    results["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print_json(results)
    return 0
