"""`companion curate`, `companion audit` and `companion undo`: hand curation of the vault from the command line.

The same `Curator` as the app's: every change is planned, shown, confirmed when it moves or removes notes, then
applied with a copy of every file's bytes in the audit log, so `undo` restores them exactly. None of these commands
opens the embedding model or the index: they read and write the vault's files and the audit log only.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from companion.cli.args import add_vault_arguments, open_workspace
from companion.cli.output import print_json
from companion.curation.curator import Curator, Plan, PlannedWrite
from companion.errors import ConfigError, NotConfirmedError, NotFoundError
from companion.locations import data_root
from companion.vault.audit import AuditEntry, AuditLog
from companion.workspace import Workspace

ACTIONS = ("pin", "unpin", "tag", "type", "archive", "delete", "merge")
"""What `companion curate` can do, in the order its help lists them."""

_ACTION_HELP = {
    "pin": "pin a note (pinned: true), so it keeps its full weight in recall",
    "unpin": "remove a note's pin",
    "tag": "replace a note's tags (no tags removes them)",
    "type": "set a note's type property (fact, entity, experience, ...)",
    "archive": "move a note into the archive folder, out of recall",
    "delete": "move a note to the vault's trash (.trash/), as Obsidian would",
    "merge": "append a note to another (--into), relink its backlinks, then delete it",
}


def register(sub: Any) -> None:
    """Add the `curate`, `audit` and `undo` subcommands."""
    p = sub.add_parser(
        "curate",
        help="pin, tag, type, archive, delete or merge a note (undoable)",
        description="Plan a curation, print it, and apply it with a copy of every file in the audit log, so "
        "`companion undo` restores them exactly. Archive, delete and merge ask first on a terminal; "
        "without one, pass --yes. See `companion curate ACTION -h`.",
    )
    add_vault_arguments(p, store=False)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    for action in ACTIONS:
        a = actions.add_parser(action, help=_ACTION_HELP[action], description=_ACTION_HELP[action])
        if action == "merge":
            a.add_argument(
                "note", metavar="DROP", help="the note to merge away: its vault path ('.md' optional), title or alias"
            )
            a.add_argument(
                "--into", required=True, metavar="KEEP", help="the note that receives its text (path, title or alias)"
            )
        else:
            a.add_argument(
                "note",
                metavar="NOTE",
                help="the note: its vault path such as 'Projects/Ski Trip' ('.md' optional), its title or an alias",
            )
        if action == "tag":
            a.add_argument("tags", nargs="*", metavar="TAG", help="the new tags, without '#'; none removes the tags")
        if action == "type":
            a.add_argument("type", metavar="TYPE", help="the new type, such as fact or entity")
        add_vault_arguments(a, store=False, verb=True)
        a.add_argument(
            "--yes", "-y", action="store_true", help="apply without asking, even when it moves or removes notes"
        )
        a.add_argument("--dry-run", action="store_true", help="print the plan and write nothing")
        a.add_argument("--json", action="store_true", help="print one JSON object")
        a.set_defaults(run=run_curate)

    p = sub.add_parser("audit", help="the curations recorded for a vault, newest first")
    add_vault_arguments(p, store=False)
    p.add_argument("--limit", type=int, default=None, metavar="N", help="show only the newest N entries")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run_audit)

    p = sub.add_parser("undo", help="undo a curation (by default the last one not undone yet)")
    p.add_argument("id", nargs="?", default=None, metavar="ID", help="the audit entry to undo (see `companion audit`)")
    add_vault_arguments(p, store=False)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run_undo)


# -- curate
# -------------------------------------------------------------------------------------------------------------


def run_curate(args: argparse.Namespace) -> int:
    """Plan one curation, print it, confirm it when it moves or removes notes, apply it and record it."""
    ws = open_workspace(args)
    curator = curator_for(ws)
    note = note_path(ws, curator, args.note)
    plan = _plan(ws, curator, args, note)

    if not args.json:
        print_plan(plan)
    if plan.changes_nothing or args.dry_run:
        if args.json:
            print_json(plan_json(plan, dry_run=args.dry_run, entry=None, undo=None))
        elif args.dry_run and not plan.changes_nothing:
            print("dry run: nothing was written")
        return 0
    if plan.destructive and not args.yes and not confirmed(plan, show=args.json):
        print("not applied: nothing was written", file=sys.stderr)
        return 1
    entry = curator.apply(plan)
    undo = undo_command(ws, args, entry.id)
    if args.json:
        print_json(plan_json(plan, dry_run=False, entry=entry, undo=undo))
    else:
        print(f"applied: recorded as {entry.id} in the audit log")
        print(f"undo with: {undo}")
    return 0


def _plan(ws: Workspace, curator: Curator, args: argparse.Namespace, note: str) -> Plan:
    """The plan for the action the command line asks for."""
    action = args.action
    if action in ("pin", "unpin"):
        return curator.plan_pin(note, action == "pin")
    if action == "tag":
        return curator.plan_tags(note, args.tags)
    if action == "type":
        return curator.plan_type(note, args.type)
    if action == "archive":
        return curator.plan_archive(note)
    if action == "delete":
        return curator.plan_delete(note)
    return curator.plan_merge(note_path(ws, curator, args.into), note)


def note_path(ws: Workspace, curator: Curator, raw: str) -> str:
    """The vault path a NOTE argument names: a vault path (or an absolute one inside the vault), `.md` optional, or
    the note's title or one of its aliases, resolved by `Curator.note_named`.

    A name that names no note is refused here, with any note of that name elsewhere in the vault, so a mistyped
    folder gets a suggestion rather than a bare "no such note"; a name several notes share is refused naming them.
    """
    text = raw.strip()
    if not text:
        raise NotFoundError("give a note: its path inside the vault, such as 'Projects/Ski Trip.md', or its title")
    if os.path.isabs(text):
        # A path the shell completed from outside the vault still names a note when it lies inside it.
        absolute = Path(os.path.abspath(text))
        for base in (ws.root, curator.root):
            if absolute.is_relative_to(base):
                text = absolute.relative_to(base).as_posix()
                break
        else:
            raise NotFoundError(f"{raw}: not inside the vault {ws.root}; give the note's path inside the vault")
    if ".." in text.replace("\\", "/").split("/"):
        # A bad argument (exit code 2) like a missing note, not a refused curation: no note is named at all.
        raise NotFoundError(
            f"{raw}: climbs out of its folder with '..', so it names no note in the vault {ws.root} and nothing "
            "was written; give the note's path inside the vault, such as 'Projects/Ski Trip.md'"
        )
    return curator.note_named(text)


def confirmed(plan: Plan, *, show: bool) -> bool:
    """Ask on the terminal whether to apply a plan that moves or removes notes; refuse without a terminal."""
    if not sys.stdin.isatty():
        raise NotConfirmedError(
            f"'{plan.summary}' moves or removes notes and there is no terminal to confirm it on, so nothing was "
            "written; pass --yes to apply it (or --dry-run to only see the plan)"
        )
    if show:  # stdout carries the JSON: show the plan on stderr so the question makes sense
        print_plan(plan, sys.stderr)
    sys.stdout.flush()
    # The question goes to stderr, so it is seen even when stdout is redirected.
    print("Apply? [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def print_plan(plan: Plan, stream: Any = None) -> None:
    """Print a plan's summary and each file it writes or removes (on stdout unless `stream` is given)."""
    out = stream or sys.stdout
    print(plan.summary, file=out)
    for write in plan.writes:
        print(f"  {_change(write):<6} {write.path}", file=out)


def _change(write: PlannedWrite) -> str:
    """`create`, `write` or `remove`: what a planned write does to its file."""
    if write.content is None:
        return "remove"
    return "create" if write.expected is None else "write"


def plan_json(plan: Plan, *, dry_run: bool, entry: AuditEntry | None, undo: str | None) -> dict[str, Any]:
    """A plan, and the audit entry that applied it if any, as JSON-ready data."""
    return {
        "action": plan.action,
        "summary": plan.summary,
        "destructive": plan.destructive,
        "writes": [{"path": w.path, "change": _change(w)} for w in plan.writes],
        "dry_run": dry_run,
        "applied": entry is not None,
        "entry": None if entry is None else entry_json(entry, None),
        "undo": undo,
    }


def undo_command(ws: Workspace, args: argparse.Namespace, entry_id: str) -> str:
    """The command that undoes an entry, naming the vault and data directory when they were given as options
    (without them, `companion undo` might look at another vault's audit log)."""
    words = ["companion", "undo", entry_id]
    if ws.location.rule == "flag":
        words += ["--vault", str(ws.root)]
    if getattr(args, "data_dir", None):
        words += ["--data-dir", str(data_root(args.data_dir))]
    return shlex.join(words)


# -- audit
# -------------------------------------------------------------------------------------------------------------


def run_audit(args: argparse.Namespace) -> int:
    """List the audit log, newest first, with which entries were undone and by which entry; writes nothing."""
    if args.limit is not None and args.limit < 1:
        raise ConfigError("--limit must be at least 1")
    ws = open_workspace(args)
    log = AuditLog(ws.data_dir)
    entries = log.entries()
    undone_by = {entry.undoes: entry.id for entry in entries if entry.undoes is not None}
    newest = list(reversed(entries))[: args.limit]
    if args.json:
        print_json(
            {
                "vault": str(ws.root),
                "log": str(log.log_path),
                "entries": [entry_json(entry, undone_by.get(entry.id)) for entry in newest],
            }
        )
        return 0
    if not entries:
        print(f"no curations recorded for {ws.root} yet (the audit log would be {log.log_path})")
        return 0
    for entry in newest:
        if entry.undoes is not None:
            status = f"  (undoes {entry.undoes})"
        elif entry.id in undone_by:
            status = f"  [undone by {undone_by[entry.id]}]"
        else:
            status = ""
        print(f"{entry.id}  {_local_time(entry.at)}  {entry.source:<6} {entry.action:<7}  {entry.summary}{status}")
    if len(newest) < len(entries):
        print(f"... {len(entries) - len(newest)} older entries (raise --limit to see them)")
    return 0


def entry_json(entry: AuditEntry, undone_by: str | None) -> dict[str, Any]:
    """An audit entry as JSON, with the id of the entry that undid it (None when it stands)."""
    return {
        "id": entry.id,
        "at": entry.at,
        "source": entry.source,
        "action": entry.action,
        "summary": entry.summary,
        "undoes": entry.undoes,
        "undone": undone_by is not None,
        "undone_by": undone_by,
        "changes": [{"path": c.path, "before": c.before, "after": c.after} for c in entry.changes],
    }


def _local_time(at: str) -> str:
    """An entry's UTC timestamp in local time, to the second; as written when it cannot be read."""
    try:
        return datetime.fromisoformat(at).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return at


# -- undo
# -------------------------------------------------------------------------------------------------------------


def run_undo(args: argparse.Namespace) -> int:
    """Undo one entry (or the last one not undone), restoring every file it changed byte for byte."""
    ws = open_workspace(args)
    curator = curator_for(ws)
    if args.id is not None and curator.audit.find(args.id) is None:
        raise NotFoundError(
            f"{curator.audit.log_path}: no entry '{args.id}' for the vault {ws.root}; "
            "`companion audit` lists the ids (add --vault if it is another vault)"
        )
    entry = curator.undo(args.id)
    restored = [c.path for c in entry.changes if c.after is not None]
    removed = [c.path for c in entry.changes if c.after is None]
    if args.json:
        print_json({"entry": entry_json(entry, None), "undid": entry.undoes, "restored": restored, "removed": removed})
        return 0
    print(entry.summary)
    for path in restored:
        print(f"  restored {path}")
    for path in removed:
        print(f"  removed  {path}")
    print(f"undid {entry.undoes}; recorded as {entry.id}")
    return 0


def curator_for(ws: Workspace) -> Curator:
    """The vault's curator, recording as the CLI (or as the config's `curation.source` names it)."""
    settings = ws.config.curation
    return Curator(
        ws.root, AuditLog(ws.data_dir), source=settings.source or "cli", archive_folder=settings.archive_folder
    )
