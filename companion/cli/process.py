"""`companion process`: run the session post-processors (retain, archive, redact, forward, summarize, extract, embed).

It reads the logs and the config, writes archives, rewritten logs, summary, extracted and history notes and forwards
entries (never with `--dry-run`), and records each run in the audit log. The history notes an `embed` processor wrote
are indexed right away (embedding model and store opened only then), unless a running `companion index --watch` holds
the index, which indexes them itself, or `--no-index` is given. A forward sink or a summary endpoint that fails is a
warning (in `--json` too), not an error: the derived notes are written, the log keeps the entries the sink has not
recorded (a later run sends them, and only then drops them), and the summary falls back to the extractive one. A run
that stops midway (a full disk) fails with a message saying what it forwarded, wrote and archived, and what not.
"""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from companion.cli.args import add_vault_arguments
from companion.cli.output import print_json
from companion.config import load_config_file
from companion.errors import CompanionError, IndexLockedError, ProcessStopped
from companion.locations import DataPaths, config_path, private_folder, vault_data_dir
from companion.pipeline import progress
from companion.pipeline.run import AgentReport, process_vault
from companion.recall.scope import parse_as_of
from companion.vault.audit import AuditLog
from companion.vault.discovery import locate_vault
from companion.vault.paths import inside_vault, vault_relative
from companion.words import counted
from companion.workspace import Workspace


def register(sub: Any) -> None:
    """Add the `process` subcommand."""
    p = sub.add_parser(
        "process",
        help="run the session post-processors (retain, archive, redact, forward, summarize, extract, embed) over the "
        "agents' logs",
        description="Apply each agent's processor list (session_history and agents in the config) to its "
        "history.jsonl: drop, archive (xz), redact and forward entries, write rolling summary, extracted memory and "
        "history day notes, and index the history notes. With --dry-run, only show what would change (and send "
        "nothing).",
    )
    add_vault_arguments(p)
    p.add_argument("--config", metavar="FILE", help="the config file (default: the vault's .companion/companion.yaml)")
    p.add_argument("--agent", metavar="NAME", help="only this agent's log")
    p.add_argument("--as-of", metavar="DATETIME", help="the moment ages are counted from (default: now)")
    p.add_argument("--dry-run", action="store_true", help="write nothing; show what would be dropped and derived")
    p.add_argument("--no-index", action="store_true", help="leave the history notes for `companion index` to embed")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Process the logs; every error is a `CompanionError` with its exit code."""
    location = locate_vault(args.vault, os.environ)
    root = location.path
    path = Path(args.config).expanduser() if args.config else config_path(root)
    config = load_config_file(path, missing_ok=not args.config)
    moment = parse_as_of(args.as_of)
    now = datetime.now(UTC) if moment is None else moment.astimezone()
    data_dir = vault_data_dir(root, args.data_dir)
    if not args.dry_run:
        # The run records what it forwarded and audits itself there: a data directory it cannot write must stop it
        # before any log is touched, not after the log was rewritten.
        private_folder(data_dir)
    audit = AuditLog(data_dir)
    reports = process_vault(
        root,
        config,
        now,
        agent=args.agent,
        audit=audit,
        dry_run=args.dry_run,
        config_source=str(path),
        state_dir=DataPaths(data_dir).forward,
    )
    written = [path for r in reports for path in r.embedded]
    indexed = None
    if written and not args.no_index:
        try:
            indexed = index_notes(Workspace.open(root, data_dir=args.data_dir, chroma_url=args.chroma_url), written)
        except (OSError, CompanionError) as exc:
            # Everything else is written by now: the message says so, rather than that nothing happened.
            done = "; ".join(progress.summary(r) for r in reports)
            notes = counted(len(written), "history note")
            raise ProcessStopped(
                f"indexing the {notes} this run wrote failed: {progress.fault(exc)}. The history was processed all "
                f"the same: {done}; `companion index` indexes the notes",
                progress.exit_code(exc),
            ) from exc
    if args.json:
        out = {"as_of": now.isoformat(), "dry_run": args.dry_run, "agents": [_json(r) for r in reports]}
        print_json({**out, "indexed": indexed})
        return 0
    if not reports:
        print("no history logs found by session_history.sources")
    for report in reports:
        _print(report)
    if indexed is not None:
        print(f"history notes: {indexed['message']}")
    return 0


def index_notes(ws: Workspace, paths: list[Path]) -> dict[str, Any]:
    """Embed the history notes a run wrote, now, so recall finds them; a running watcher does it instead."""
    # The pipeline writes history notes only inside the vault; anything else is left to `companion index`.
    relative = [vault_relative(ws.root, p) for p in paths if inside_vault(ws.root, p)]
    try:
        with ws.writing(wait=False):
            report = ws.indexer().update(relative)
    except IndexLockedError:
        held = "the running indexer (`companion index --watch` or the app) indexes them"
        return {"notes": 0, "chunks": 0, "message": held}
    finally:
        ws.close()
    message = f"indexed {counted(report.notes_indexed, 'note')} ({counted(report.chunks_embedded, 'chunk')} embedded)"
    skipped = "".join(f"; skipped {p}: {why}" for p, why in report.skipped)
    return {"notes": report.notes_indexed, "chunks": report.chunks_embedded, "message": message + skipped}


def _json(report: AgentReport) -> dict[str, Any]:
    return {
        "agent": report.agent,
        "source": str(report.source),
        "entries": report.entries,
        "kept": report.kept,
        "dropped": list(report.dropped),
        "replaced": list(report.replaced),
        "archives": [{"path": str(a.path), "entries": a.entries} for a in report.archives],
        "derived": [{"kind": d.kind, "path": str(d.path), "entries": len(d.entry_ids)} for d in report.derived],
        "problems": list(report.problems),
        "appended_bytes": report.appended,
        "dry_run": report.dry_run,
        "forwards": [
            {"sink": f.sink, "target": f.target, "sent": f.sent, "pending": f.pending, "problem": f.problem}
            for f in report.forwards
        ],
        "summaries": [
            {
                "path": str(s.path),
                "entries": s.entries,
                "generated_by": s.generated_by,
                "action": s.action,
                "written": s.written,
                "reason": s.reason,
            }
            for s in report.summaries
        ],
        "extracts": [
            {
                "folder": str(x.folder),
                "found": x.found,
                "known": x.known,
                "over_budget": x.over_budget,
                "reason": x.reason,
                "notes": [
                    {
                        "path": str(n.path),
                        "kind": n.finding.kind,
                        "confidence": n.finding.confidence,
                        "entry": n.finding.entry.id,
                        "action": n.action,
                        "written": n.written,
                    }
                    for n in x.notes
                ],
            }
            for x in report.extracts
        ],
        "embeds": [
            {
                "pattern": e.pattern,
                "entries": e.entries,
                "status_left_out": e.status,
                "reason": e.reason,
                "notes": [
                    {"path": str(n.path), "day": n.day, "entries": n.entries, "added": n.added, "written": n.written}
                    for n in e.notes
                ],
            }
            for e in report.embeds
        ],
        "redacted_bad_lines": list(report.redacted_lines),
        "held": report.held,
        "warnings": list(report.warnings),
    }


def _print(report: AgentReport) -> None:
    verb = "would " if report.dry_run else ""
    print(f"{report.agent}: {report.source}")
    print(f"  {counted(report.entries, 'entry', 'entries')}; {verb}keep {report.kept}")
    print(f"  {verb}drop {len(report.dropped)}, {verb}replace (redact) {len(report.replaced)}")
    for archive in report.archives:
        print(f"  {verb}archive {archive.entries} into {archive.path}")
    for artifact in report.derived:
        print(f"  {verb}derive {artifact.kind} {artifact.path}")
    for forward in report.forwards:
        print(
            f"  {verb}forward {forward.sent} to {forward.target}"
            + (f"; {forward.pending} left" if forward.pending else "")
        )
    for summary in report.summaries:
        if summary.action == "skip":
            print(f"  summary {summary.path} left alone: {summary.reason}")
        elif summary.action == "unchanged":
            print(f"  summary {summary.path} is up to date")
        else:
            model = (
                "; the model is not asked in a dry run"
                if report.dry_run and summary.generated_by != "extractive"
                else ""
            )
            print(f"  {verb}write summary {summary.path} ({summary.generated_by}, {summary.entries} entries{model})")
    for extract in report.extracts:
        if extract.reason:
            print(f"  extract into {extract.folder}: {extract.reason}")
        for note in extract.notes:
            what = "create" if note.action == "create" else "append to"
            print(f"  {verb}{what} {note.finding.kind} note {note.path} ({note.finding.confidence:.2f})")
        if extract.over_budget:
            print(f"  {extract.over_budget} more extracted notes left for a later run (max_notes)")
    for embed in report.embeds:
        if embed.reason:
            print(f"  history notes {embed.pattern}: {embed.reason}")
        for day in embed.notes:
            entries = counted(day.entries, "entry", "entries")
            print(f"  {verb}write history note {day.path} ({entries}, {day.added} new)")
        if embed.status:
            print(f"  {embed.status} status replies (such as HEARTBEAT_OK) left out of the history notes")
    if report.redacted_lines:
        lines = ", ".join(map(str, report.redacted_lines))
        print(f"  {verb}redact secrets in bad lines {lines} (kept in the log)")
    for problem in report.problems + report.warnings:
        print(f"  warning: {problem}")
