"""`companion bench`: measure the product's performance targets on synthetic vaults, as JSON.

Each figure comes from running the real code paths: the indexer, the watcher, the searcher. Where a
measurement does not depend on what the vectors mean (a restart's cost, the store's size), the index may be
filled with the hashing embedder (`--embedder hash`) to save hours of model time; the output says which
embedder each figure used.
"""

from __future__ import annotations

import argparse
import logging
import resource
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from companion.cli.bench.app import tui, tui_while_indexing
from companion.cli.bench.bigvault import big_vault
from companion.cli.bench.common import cpus
from companion.cli.bench.imports import import_speed
from companion.cli.bench.indexing import cold_build, restart, save_to_searchable
from companion.cli.bench.localmodels import local_models
from companion.cli.bench.mcp import disclosure, mcp
from companion.cli.bench.models import int8_model
from companion.cli.bench.pipeline import process_history
from companion.cli.bench.recall import QUERY_MODELS, batch, nearest, recall
from companion.cli.bench.review import review
from companion.cli.bench.summaries import summaries
from companion.cli.output import print_json
from companion.embedding.modelbuild import MODEL_IDS
from companion.errors import BenchError, CompanionError

log = logging.getLogger(__name__)

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
    "models",
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
    p.add_argument("--save-notes", type=int, default=200, help="notes of the vault the saves go to (real model)")
    p.add_argument("--queries", type=int, default=200, help="queries for recall latency")
    p.add_argument(
        "--embedder",
        choices=("minilm", "hash"),
        default="hash",
        help="embedder that fills the big restart/recall vaults (the cold build always uses minilm)",
    )
    p.add_argument(
        "--query-embedder",
        choices=tuple(QUERY_MODELS),
        default="minilm",
        help="embedder for recall's questions over a hash-filled index (default minilm: the real per-query model cost "
        "is included; e5: multilingual-e5-small, which embeds questions with its query prefix)",
    )
    p.add_argument("--batch-notes", type=int, default=300, help="notes for the batch run (real model)")
    p.add_argument("--batch-queries", type=int, default=2000, help="questions in the batch run")
    p.add_argument(
        "--tui-base-notes", type=int, default=200, help="notes indexed before the app starts (tui-indexing, real model)"
    )
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
        "--models",
        default=",".join(MODEL_IDS),
        help="comma list of the local models the models measure compares (default: all; those not built are skipped)",
    )
    p.add_argument("--models-notes", type=int, default=300, help="conversation notes each model embeds (models)")
    p.add_argument("--models-long-notes", type=int, default=100, help="long notes each model embeds (models)")
    p.add_argument("--models-cold-notes", type=int, default=200, help="notes of each model's cold build (models)")
    p.add_argument("--rounds", type=int, default=2, help="times each model is measured, in turn (models)")
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
    """Run the selected measures and print one JSON object; a measure that fails is reported under its key as
    `{"error": ...}`, the others still run, and the exit status says that one failed."""
    only = [m.strip() for m in args.only.split(",") if m.strip()]
    unknown = set(only) - set(MEASURES)
    if unknown:
        raise BenchError(f"Unknown measure(s) {', '.join(sorted(unknown))}: use {', '.join(MEASURES)}")
    results: dict[str, Any] = {"machine": {"cpus": cpus(), "python": sys.version.split()[0]}}
    failed = False
    wall: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="companion-bench-") as tmp:
        work = Path(args.dir) if args.dir else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for measure, (key, step) in _steps(args, work).items():
            if measure in only:
                started = time.perf_counter()
                results[key] = _guarded(measure, step)
                wall[key] = round(time.perf_counter() - started, 1)
                failed = failed or "error" in results[key]
    results["measure_wall_s"] = wall
    results["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print_json(results)
    return 1 if failed else 0


def _steps(args: argparse.Namespace, work: Path) -> dict[str, tuple[str, Callable[[], dict[str, Any]]]]:
    """Each measure's key in the output and the call that takes it, in the order they run."""

    def mcp_figures() -> dict[str, Any]:
        figures = mcp(work / "mcp", args.mcp_notes, args.queries)
        figures["tokens_per_step"] = disclosure(work / "mcp-demo")
        return figures

    def bigvault() -> dict[str, Any]:
        (work / "bigvault").mkdir(parents=True, exist_ok=True)
        vault = Path(args.bigvault_vault) if args.bigvault_vault else None
        return big_vault(work / "bigvault", args.bigvault_notes, vault)

    models = [m.strip() for m in args.models.split(",") if m.strip()]
    return {
        "cold": ("cold_build", lambda: cold_build(work / "cold", args.cold_notes)),
        "restart": ("restart", lambda: restart(work / "restart", args.restart_notes, args.embedder)),
        "save": ("save_to_searchable", lambda: save_to_searchable(work / "save", args.saves, args.save_notes)),
        "recall": (
            "recall",
            lambda: recall(work / "recall", args.recall_notes, args.queries, args.embedder, args.query_embedder),
        ),
        "nearest": ("nearest", lambda: nearest(work / "nearest", args.nearest_notes, args.queries)),
        "batch": ("batch", lambda: batch(work / "batch", args.batch_notes, args.batch_queries)),
        "tui": ("tui", lambda: tui(work / "recall", args.recall_notes, args.embedder)),
        "tui-indexing": (
            "tui_while_indexing",
            lambda: tui_while_indexing(work / "tui-indexing", args.incoming_notes, args.tui_base_notes),
        ),
        "mcp": ("mcp", mcp_figures),
        "review": ("review", lambda: review(work / "review", args.review_notes)),
        "process": ("process", lambda: process_history(work / "process", args.history_days, args.entry_kb)),
        "import": ("import", lambda: import_speed(work / "import", args.import_sessions, args.import_turns)),
        "int8": ("int8_model", lambda: int8_model(work / "int8", args.int8_notes, args.int8_long_notes)),
        "models": (
            "models",
            lambda: local_models(
                work / "models", models, args.models_notes, args.models_long_notes, args.models_cold_notes, args.rounds
            ),
        ),
        "summaries": (
            "summaries",
            lambda: summaries(work / "summaries", args.summaries, args.summaries_heartbeats, args.queries),
        ),
        "bigvault": ("bigvault", bigvault),
    }


def _guarded(measure: str, step: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The figures of `step`, or `{"error": ...}` saying why it could not finish: one failing measure must neither
    hide the others' figures nor end the run in a traceback."""
    try:
        return step()
    except CompanionError as exc:
        log.debug("the %s measure failed here", measure, exc_info=exc)
        return {"error": str(exc)}
    except Exception as exc:
        # Not an error the bench expects (a bug, a library's own failure): its type and place say where to look.
        log.debug("the %s measure failed here", measure, exc_info=exc)
        frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
        where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
        return {"error": f"{type(exc).__name__}{where}: {exc}"}
