"""`companion import`: the sessions of agents that keep them outside the vault (Claude Code, Codex CLI, Gemini CLI)
become conversation notes, one per session, so their memory starts with what was said in them.

Each agent's own folder is read unless `--source` names another (a folder or one file). Notes go to
`imports.folder` in the config (`Agents/{agent}/{project}` by default) and are indexed right away, unless a running
`companion index --watch` holds the index (it indexes them itself) or `--no-index` is given. What could not be read
is named (file and line) on stderr, or under `problems` with `--json`; it never stops the import.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from companion.cli.args import add_vault_arguments
from companion.cli.output import print_json
from companion.cli.process import index_notes
from companion.config import load_config
from companion.errors import SessionImportError
from companion.locations import vault_data_dir
from companion.pipeline.imports.run import (
    AGENT_NAMES,
    AGENTS,
    ImportReport,
    ImportRequest,
    default_root,
    import_sessions,
)
from companion.recall.scope import parse_day
from companion.vault.discovery import locate_vault
from companion.words import counted
from companion.workspace import Workspace


def register(sub: Any) -> None:
    """Add the `import` subcommand."""
    p = sub.add_parser(
        "import",
        help="import Claude Code, Codex CLI or Gemini CLI sessions as conversation notes",
        description="Read the sessions an agent keeps in its own folder (Claude Code: ~/.claude/projects, Codex CLI: "
        "$CODEX_HOME/sessions or ~/.codex/sessions, Gemini CLI: ~/.gemini/tmp) and write one conversation note per "
        "session into the vault (imports.folder in the config). User and agent text are kept, each tool call as one "
        "line; tool output and reasoning are left out; secrets are redacted. Importing again rewrites only the notes "
        "of sessions that changed, and never a note edited by hand.",
    )
    p.add_argument("agent", choices=[*AGENTS, "all"], help="whose sessions to import")
    add_vault_arguments(p)
    p.add_argument("--source", metavar="PATH", help="read the sessions here (a folder or one file), not the default")
    p.add_argument("--since", metavar="DATE", help="only sessions active on or after DATE")
    p.add_argument("--project", metavar="TEXT", help="only sessions whose project or working folder holds TEXT")
    p.add_argument("--dry-run", action="store_true", help="write nothing; show what would be imported")
    p.add_argument("--no-index", action="store_true", help="leave the notes for `companion index` to embed")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Import the sessions; a missing source folder is a `SessionImportError`."""
    root = locate_vault(args.vault, os.environ).path
    config = load_config(root)
    since = parse_day(args.since, "--since") if args.since else None
    agents = list(AGENTS) if args.agent == "all" else [args.agent]
    if args.source and len(agents) > 1:
        raise SessionImportError("--source names one agent's sessions: give the agent (claude-code, codex or gemini)")
    requests: list[ImportRequest] = []
    missing: list[str] = []
    for agent in agents:
        source = Path(args.source).expanduser() if args.source else default_root(agent, Path.home(), os.environ)
        if not source.exists():
            missing.append(f"{AGENT_NAMES[agent]}: {source}")
            continue
        requests.append(ImportRequest(agent, source, config.imports.folder, since, args.project))
    if not requests or (args.source and missing):
        raise SessionImportError(
            f"no sessions to import: {'; '.join(missing)} does not exist; give the folder with --source"
        )
    data_dir = vault_data_dir(root, args.data_dir)
    report = import_sessions(root, data_dir, requests, dry_run=args.dry_run)
    indexed = None
    if report.written and not args.dry_run and not args.no_index:
        ws = Workspace.open(root, data_dir=args.data_dir, chroma_url=args.chroma_url)
        indexed = index_notes(ws, [root / note for note in report.written])
    if args.json:
        print_json(_json(report, missing, indexed))
        return 0
    _print(report, missing, indexed)
    return 0


def _json(report: ImportReport, missing: list[str], indexed: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "dry_run": report.dry_run,
        "notes": [
            {
                "agent": n.agent,
                "session_id": n.session_id,
                "project": n.project,
                "note": n.note,
                "action": n.action,
                "turns": n.turns,
                "reason": n.reason or None,
            }
            for n in report.notes
        ],
        "not_read": report.not_read,
        "problems": report.problems,
        "missing": missing,
        "indexed": indexed,
    }


def _print(report: ImportReport, missing: list[str], indexed: dict[str, Any] | None) -> None:
    would = "would be " if report.dry_run else ""
    for note in report.notes:
        if note.action in ("created", "updated"):
            print(f"{would}{note.action:8} {note.note}  ({counted(note.turns, 'turn')})")
    for problem in report.problems:
        print(f"warning: {problem}", file=sys.stderr)
    for where in missing:
        print(f"note: no sessions folder for {where}", file=sys.stderr)
    counts = {a: sum(1 for n in report.notes if n.action == a) for a in ("created", "updated", "unchanged", "skipped")}
    done = ", ".join(f"{would}{a} {n}" for a, n in counts.items() if n)
    unchanged = f"{counted(report.not_read, 'session')} unchanged since the last import"
    print(f"{done + '; ' if done else ''}{unchanged}")
    if indexed is not None:
        print(f"imported notes: {indexed['message']}")
