"""`companion index`: build or update the index once, or keep it fresh with `--watch`."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from datetime import datetime
from types import FrameType
from typing import TYPE_CHECKING, Any

from companion.cli.args import add_vault_arguments, open_workspace
from companion.cli.output import JsonProgress, ProgressBar, model_change_line, print_json
from companion.errors import CompanionError
from companion.locations import config_path
from companion.pipeline.autorun import INTERVAL_S, AutoProcessor
from companion.pipeline.imports.run import AGENT_NAMES
from companion.pipeline.run import AgentReport
from companion.pipeline.triggers import Due
from companion.words import counted
from companion.workspace import Workspace
from indexer.repair import Mended
from indexer.report import IndexReport
from indexer.sync import Indexer

if TYPE_CHECKING:
    from companion.pipeline.imports.follow import Followed, ImportFollower

log = logging.getLogger("companion.index")

RETRY_S = 5.0

TRIGGER_INTERVAL_ENV = "COMPANION_TRIGGER_INTERVAL_S"
"""Seconds between two trigger checks while watching (tests shorten it); `--trigger-interval` wins over it."""


def register(sub: Any) -> None:
    """Add the `index` subcommand."""
    p = sub.add_parser("index", help="build or update the vault's index (once, or --watch)")
    add_vault_arguments(p)
    p.add_argument("--watch", action="store_true", help="keep the index fresh until stopped")
    p.add_argument("--rebuild", action="store_true", help="drop the index and build it again")
    p.add_argument("--json", action="store_true", help="print JSON (one object per batch when watching)")
    # Hidden: how often --watch checks the session-history triggers; only tests need to change it.
    p.add_argument("--trigger-interval", type=float, metavar="SECONDS", help=argparse.SUPPRESS)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Build or update; exit 0 even when some notes were skipped (they are listed)."""
    ws = open_workspace(args)
    ws.long_lived = bool(args.watch)
    try:
        with ws.writing():
            mended = None if args.rebuild else ws.mend(full=True, move_model=True)
            indexer = ws.indexer(rebuild=args.rebuild, move_model=True)
            indexer.logs_skips = False  # the summary below and each watched batch's lines name them
            if ws.model_change is not None and not args.json:
                # Said before the work: a whole vault is embedded again, which can take a while.
                print(model_change_line(ws.model_change), file=sys.stderr)
            bar = JsonProgress() if args.json else ProgressBar("indexing")
            report = indexer.sync(progress=bar, reading=bar.reading)
            bar.close()
            _print_report(ws, report, args.json, first=True, mended=mended)
            if args.watch:
                return _watch(ws, indexer, args.json, _trigger_interval(args))
    finally:
        ws.close()
    return 0


def _trigger_interval(args: argparse.Namespace) -> float:
    value: float | None = args.trigger_interval
    if value is None:
        try:
            value = float(os.environ.get(TRIGGER_INTERVAL_ENV, INTERVAL_S))
        except ValueError:
            value = INTERVAL_S
    return max(0.05, value)


def _auto_processor(ws: Workspace, as_json: bool, interval_s: float, emit: threading.Lock) -> AutoProcessor | None:
    """The trigger thread of the session-history processors, when the config names history sources."""
    if not ws.config.session_history.sources:
        return None

    def on_run(due: Due, reports: list[AgentReport]) -> None:
        with emit:
            for r in reports:
                if as_json:
                    print_json(
                        {
                            "event": "processed",
                            "agent": r.agent,
                            "source": str(r.source),
                            "reasons": list(due.reasons),
                            "entries": r.entries,
                            "kept": r.kept,
                            "dropped": len(r.dropped),
                            "replaced": len(r.replaced),
                            "archived": sum(a.entries for a in r.archives),
                        }
                    )
                else:
                    log.info(
                        "processed %s (%s): %d entries, kept %d, dropped %d, replaced %d, archived %d",
                        r.agent,
                        ", ".join(due.reasons),
                        r.entries,
                        r.kept,
                        len(r.dropped),
                        len(r.replaced),
                        sum(a.entries for a in r.archives),
                    )

    def on_error(agent: str, exc: Exception) -> None:
        with emit:
            if as_json:
                print_json({"event": "process_error", "agent": agent or None, "error": str(exc)})
            elif isinstance(exc, CompanionError | ValueError):
                log.error("session processing%s: %s", f" of {agent}" if agent else "", exc)
            else:
                log.error("session processing%s failed", f" of {agent}" if agent else "", exc_info=exc)

    return AutoProcessor(
        ws.root,
        ws.config,
        ws.data_dir,
        clock=lambda: datetime.now().astimezone(),
        on_run=on_run,
        on_error=on_error,
        interval_s=interval_s,
        config_source=str(config_path(ws.root)),
    )


def _import_follower(ws: Workspace, as_json: bool, emit: threading.Lock) -> ImportFollower | None:
    """The thread importing the sessions of the agents `imports.follow` names; their notes reach the index through
    the note watcher, like any other note."""
    if not ws.config.imports.follow:
        return None
    from companion.pipeline.imports.follow import ImportFollower  # deferred: watchfiles is only needed here

    def on_import(done: Followed) -> None:
        written = done.report.written
        with emit:
            if as_json:
                print_json(
                    {
                        "event": "imported",
                        "agent": done.agent,
                        "catch_up": done.catch_up,
                        "notes": written,
                        "problems": list(done.problems),
                    }
                )
                return
            if written:
                shown = ", ".join(written[:3]) + (f" and {len(written) - 3} more" if len(written) > 3 else "")
                log.info("imported %s from %s: %s", counted(len(written), "note"), AGENT_NAMES[done.agent], shown)
            for problem in done.problems:
                log.warning("import of %s: %s", AGENT_NAMES[done.agent], problem)

    def on_error(agent: str, exc: Exception) -> None:
        what = f"import of {AGENT_NAMES[agent]}" if agent else "watch of the agents' sessions"
        with emit:
            if as_json:
                print_json({"event": "import_error", "agent": agent or None, "error": str(exc)})
            elif isinstance(exc, CompanionError | OSError):
                log.error("%s: %s (tried again on the next change)", what, exc)
            else:
                log.error("%s failed (tried again on the next change)", what, exc_info=exc)

    return ImportFollower(ws.root, ws.data_dir, ws.config.imports, on_import=on_import, on_error=on_error)


def _watch(ws: Workspace, indexer: Indexer, as_json: bool, trigger_interval_s: float = INTERVAL_S) -> int:
    from indexer.watcher import watch  # deferred: watchfiles is only needed here

    logging.getLogger().setLevel(logging.INFO)
    stop = threading.Event()
    emit = threading.Lock()  # the trigger thread prints too: one JSON line must never cut into another

    def _stop(signum: int, frame: FrameType | None) -> None:
        log.info("stopping (%s)", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    total = IndexReport()

    auto = _auto_processor(ws, as_json, trigger_interval_s, emit)
    follower = _import_follower(ws, as_json, emit)

    def on_batch(report: IndexReport, events: int) -> None:
        total.merge(report)
        if auto is not None:
            # A batch means the vault is busy; the history logs are stat'ed by the trigger thread itself,
            # since the note watcher filters out `.jsonl` files and dot-folders.
            auto.poke()
        with emit:
            _log_batch(report, events, as_json)

    def on_ready() -> None:
        with emit:
            if as_json:
                print_json({"event": "watching", "vault": str(ws.root)})
            else:
                log.info("watching %s (%s)", ws.root, ws.store_kind)

    if auto is not None:
        auto.start()
    if follower is not None:
        follower.start()
    try:
        while not stop.is_set():
            try:
                watch(indexer, stop, on_batch, debounce_ms=1600, step_ms=50, on_ready=on_ready)
            except CompanionError as exc:
                # The store or the model failed mid-batch; the journal keeps the index consistent, and the
                # next attempt's catch-up sync redoes what was lost.
                log.error("%s (retrying in %.0f s)", exc, RETRY_S)
                stop.wait(RETRY_S)
    finally:
        if follower is not None and not follower.stop():
            log.warning("an import is still going; it is left to finish or be cut (every note is written whole)")
        if auto is not None and not auto.stop():
            log.warning("a session-history run is still going; it is left to finish or be cut (logs stay whole)")
    if as_json:
        print_json({"event": "stopped", **total.as_dict()})
    else:
        log.info("stopped after %d notes indexed in this session", total.notes_indexed)
    return 0


def _log_batch(report: IndexReport, events: int, as_json: bool) -> None:
    if as_json:
        print_json({"event": "batch", "events": events, **report.as_dict()})
        return
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
    for path, problem in report.problems:
        log.warning("problem %s: %s", path, problem)


def _print_report(ws: Workspace, report: IndexReport, as_json: bool, first: bool, mended: Mended | None = None) -> None:
    notes, chunks = ws.manifest.counts()
    # The notes indexed with a problem to fix (properties read line by line), then the vault's own problems.
    problems = report.problems + (ws.vault.problems if first else [])
    repaired = mended.actions if mended else []
    choice = ws.model_choice() if first else None
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
                "left_out": ws.vault.left_out,
                "problems": [{"path": p, "reason": r} for p, r in problems],
                "repaired": repaired,
                "model_change": None
                if ws.model_change is None
                else {"from": ws.model_change[0], "to": ws.model_change[1]},
                **(
                    {}
                    if choice is None
                    else {"model": {"id": choice.model_id, "chosen_because": choice.reason, "hint": choice.hint}}
                ),
            }
        )
        return
    out = sys.stdout
    print(f"vault   {ws.root}  ({ws.location.detail})", file=out)
    for line in repaired:
        print(f"repaired {line}", file=out)
    if choice is not None:
        print(f"model   {choice.model_id}, chosen for this vault: {choice.reason}", file=out)
        if choice.hint:
            print(f"hint    {choice.hint}", file=out)
    print(
        f"indexed {counted(report.notes_indexed, 'note')} ({report.notes_renamed} renamed, "
        f"{report.notes_unchanged} touched only), deleted {report.notes_deleted}, "
        f"skipped {report.notes_skipped}"
        + (
            f"; {counted(report.sessions_left_out, 'session summary', 'session summaries')} left out as boilerplate"
            if report.sessions_left_out
            else ""
        ),
        file=out,
    )
    print(
        f"chunks  {report.chunks_embedded} embedded, {report.chunks_reused} reused, "
        f"{report.chunks_deleted} deleted  in {report.elapsed_s:.2f} s "
        f"(model {report.embed_s:.2f} s)"
        + (f"; {counted(report.titles_embedded, 'title')} embedded" if report.titles_embedded else ""),
        file=out,
    )
    print(f"index   {counted(notes, 'note')}, {counted(chunks, 'chunk')}  [{ws.store_kind}]", file=out)
    if report.chunks_left:
        print(
            f"waiting {counted(report.chunks_left, 'chunk')} still to embed: every note is searchable by its words, "
            "the newest by their meaning too; `companion index` again finishes it",
            file=out,
        )
    if first and ws.vault.left_out:
        reasons = ", ".join(f"{n} in {why}" for why, n in sorted(ws.vault.left_out.items(), key=lambda x: -x[1]))
        print(f"left out {counted(sum(ws.vault.left_out.values()), 'note')}: {reasons}", file=out)
    for path, reason in report.skipped:
        print(f"skipped {path}: {reason}", file=out)
    for path, reason in problems:
        print(f"problem {path}: {reason}", file=out)
