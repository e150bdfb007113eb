"""`companion index`: build or update the index once, or keep it fresh with `--watch`."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from types import FrameType
from typing import Any

from companion.cli.output import ProgressBar, print_json
from companion.cli.workspace import Workspace, add_vault_arguments, open_workspace
from companion.errors import CompanionError
from indexer.lock import WriterLock
from indexer.sync import Indexer, IndexReport

log = logging.getLogger("companion.index")

RETRY_S = 5.0


def register(sub: Any) -> None:
    """Add the `index` subcommand."""
    p = sub.add_parser("index", help="build or update the vault's index (once, or --watch)")
    add_vault_arguments(p)
    p.add_argument("--watch", action="store_true", help="keep the index fresh until stopped")
    p.add_argument("--rebuild", action="store_true", help="drop the index and build it again")
    p.add_argument("--json", action="store_true", help="print JSON (one object per batch when watching)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Build or update; exit 0 even when some notes were skipped (they are listed)."""
    ws = open_workspace(args)
    try:
        with WriterLock(ws.data_dir):
            indexer = ws.indexer(rebuild=args.rebuild)
            bar = None if args.json else ProgressBar("indexing")
            report = indexer.sync(progress=bar)
            if bar:
                bar.close()
            _print_report(ws, report, args.json, first=True)
            if args.watch:
                return _watch(ws, indexer, args.json)
    finally:
        ws.close()
    return 0


def _watch(ws: Workspace, indexer: Indexer, as_json: bool) -> int:
    from indexer.watcher import watch  # deferred: watchfiles is only needed here

    logging.getLogger().setLevel(logging.INFO)
    stop = threading.Event()

    def _stop(signum: int, frame: FrameType | None) -> None:
        log.info("stopping (%s)", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    total = IndexReport()

    def on_batch(report: IndexReport, events: int) -> None:
        total.merge(report)
        if as_json:
            print_json({"event": "batch", "events": events, **report.as_dict()})
        else:
            log.info(
                "batch of %d events: %d indexed, %d renamed, %d deleted, %d skipped, %d chunks embedded (%.0f ms)",
                events,
                report.notes_indexed,
                report.notes_renamed,
                report.notes_deleted,
                report.notes_skipped,
                report.chunks_embedded,
                report.elapsed_s * 1000,
            )
            for path, reason in report.skipped:
                log.warning("skipped %s: %s", path, reason)

    def on_ready() -> None:
        if as_json:
            print_json({"event": "watching", "vault": str(ws.root)})
        else:
            log.info("watching %s (%s)", ws.root, ws.store_kind)

    while not stop.is_set():
        try:
            watch(indexer, stop, on_batch, debounce_ms=1600, step_ms=50, on_ready=on_ready)
        except CompanionError as exc:
            # The store or the model failed mid-batch; the journal keeps the index consistent, and the
            # next attempt's catch-up sync redoes what was lost.
            log.error("%s (retrying in %.0f s)", exc, RETRY_S)
            stop.wait(RETRY_S)
    if as_json:
        print_json({"event": "stopped", **total.as_dict()})
    else:
        log.info("stopped after %d notes indexed in this session", total.notes_indexed)
    return 0


def _print_report(ws: Workspace, report: IndexReport, as_json: bool, first: bool) -> None:
    notes, chunks = ws.manifest.counts()
    if as_json:
        print_json(
            {
                "event": "sync" if first else "batch",
                "vault": str(ws.root),
                "vault_rule": ws.location.rule,
                "data_dir": str(ws.data_dir),
                "store": ws.store_kind,
                "notes_total": notes,
                "chunks_total": chunks,
                **report.as_dict(),
            }
        )
        return
    out = sys.stdout
    print(f"vault   {ws.root}  ({ws.location.detail})", file=out)
    print(
        f"indexed {report.notes_indexed} notes ({report.notes_renamed} renamed, "
        f"{report.notes_unchanged} touched only), deleted {report.notes_deleted}, "
        f"skipped {report.notes_skipped}",
        file=out,
    )
    print(
        f"chunks  {report.chunks_embedded} embedded, {report.chunks_reused} reused, "
        f"{report.chunks_deleted} deleted  in {report.elapsed_s:.2f} s "
        f"(model {report.embed_s:.2f} s)",
        file=out,
    )
    print(f"index   {notes} notes, {chunks} chunks  [{ws.store_kind}]", file=out)
    for path, reason in report.skipped:
        print(f"skipped {path}: {reason}", file=out)
