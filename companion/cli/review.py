"""`companion review`: the vault's review queue (near-duplicates, facts that changed, broken links, memory notes
without a type, stale notes and orphans), and accepting or skipping a suggestion.

Accepting applies an ordinary curation (planned, shown, confirmed when it moves or removes notes, audited,
undoable with `companion undo`); skipping leaves the suggestion out until one of its notes changes.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from typing import Any

from companion.cli.args import add_vault_arguments, open_workspace, sync_first
from companion.cli.curate import confirmed, curator_for, plan_json, print_plan, undo_command
from companion.cli.output import print_json
from companion.curation.suggestions import KIND_NAMES, KINDS, Suggestion
from companion.errors import ConfigError
from companion.review.session import Review
from companion.words import counted


def register(sub: Any) -> None:
    """Add the `review` subcommand and its `accept` and `skip` verbs."""
    p = sub.add_parser(
        "review",
        help="suggested curations: duplicates, changed facts, broken links, missing types, stale notes",
        description="List what the vault's index suggests curating, best first: near-duplicates to merge, memory "
        "notes whose facts changed (the older marked superseded), links to no note, memory notes without a type, "
        "stale notes and orphans. `review accept ID` applies one as an undoable curation; `review skip ID` hides "
        "it until its notes change.",
    )
    add_vault_arguments(p)
    _listing_options(p)
    p.set_defaults(run=run_list, verb=None)
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    a = verbs.add_parser("accept", help="apply a suggestion's curation (undoable)")
    a.add_argument("id", metavar="ID", help="the suggestion's id, as `companion review` lists it")
    add_vault_arguments(a, verb=True)
    a.add_argument("--yes", "-y", action="store_true", help="apply without asking, even when it moves notes")
    a.add_argument("--dry-run", action="store_true", help="print the plan and write nothing")
    a.add_argument("--json", action="store_true", help="print one JSON object")
    a.add_argument("--no-sync", action="store_true", help="use the index as it is")
    a.set_defaults(run=run_accept)
    s = verbs.add_parser("skip", help="hide a suggestion until one of its notes changes")
    s.add_argument("id", metavar="ID", help="the suggestion's id")
    add_vault_arguments(s, verb=True)
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--no-sync", action="store_true", help="use the index as it is")
    s.set_defaults(run=run_skip)


def _listing_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kind",
        action="append",
        choices=KINDS,
        metavar="KIND",
        help=f"only suggestions of this kind (repeatable): {', '.join(KINDS)}",
    )
    p.add_argument("--limit", type=int, default=None, metavar="N", help="show only the best N")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--no-sync", action="store_true", help="use the index as it is")


def run_list(args: argparse.Namespace) -> int:
    """Print the review queue; writes nothing."""
    if args.limit is not None and args.limit < 1:
        raise ConfigError("--limit must be at least 1")
    ws = open_workspace(args)
    try:
        sync_first(ws, args)
        review = Review(ws, curator_for(ws))
        queue = review.queue(datetime.now().astimezone(), kinds=tuple(args.kind or KINDS))
        notice = review.notice
    finally:
        ws.close()
    shown = queue[: args.limit]
    if args.json:
        counts = {kind: sum(1 for s in queue if s.kind == kind) for kind in KINDS}
        print_json(
            {
                "vault": str(ws.root),
                "total": len(queue),
                "counts": counts,
                "notice": notice or None,
                "suggestions": [s.as_dict() for s in shown],
            }
        )
        return 0
    if notice:
        print(f"note    {notice}", file=sys.stderr)
    if not queue:
        print("nothing to review: no duplicates, changed facts, broken links, missing types or stale notes found")
        return 0
    print(
        f"{counted(len(queue), 'suggestion')}, best first"
        + (f" (the first {len(shown)})" if len(shown) < len(queue) else "")
    )
    for suggestion in shown:
        _print(suggestion)
    print("\napply one: companion review accept ID    hide one: companion review skip ID")
    return 0


def _print(suggestion: Suggestion) -> None:
    print(f"\n{suggestion.id}  {KIND_NAMES[suggestion.kind]:<14} {suggestion.summary}")
    for line in suggestion.evidence:
        print(f"            {line}")
    print(f"            → {suggestion.proposal.describe()}")


def run_accept(args: argparse.Namespace) -> int:
    """Apply the curation a suggestion proposes, confirmed when it moves or removes notes."""
    ws = open_workspace(args)
    try:
        sync_first(ws, args)
        curator = curator_for(ws)
        review = Review(ws, curator)
        suggestion = review.find(args.id, datetime.now().astimezone())
        plan = review.plan(suggestion)
        if not args.json:
            print_plan(plan)
        if plan.changes_nothing or args.dry_run:
            if args.json:
                print_json(
                    {"suggestion": suggestion.as_dict(), **plan_json(plan, dry_run=args.dry_run, entry=None, undo=None)}
                )
            elif args.dry_run and not plan.changes_nothing:
                print("dry run: nothing was written")
            return 0
        if plan.destructive and not args.yes and not confirmed(plan, show=args.json):
            print("not applied: nothing was written", file=sys.stderr)
            return 1
        entry = curator.apply(plan, details=(("review", suggestion.kind), ("suggestion", suggestion.id)))
        undo = undo_command(ws, args, entry.id)
    finally:
        ws.close()
    if args.json:
        print_json({"suggestion": suggestion.as_dict(), **plan_json(plan, dry_run=False, entry=entry, undo=undo)})
    else:
        print(f"applied: recorded as {entry.id} in the audit log")
        print(f"undo with: {undo}")
    return 0


def run_skip(args: argparse.Namespace) -> int:
    """Hide a suggestion until one of its notes changes."""
    ws = open_workspace(args)
    try:
        sync_first(ws, args)
        review = Review(ws, curator_for(ws))
        suggestion = review.find(args.id, datetime.now().astimezone())
        review.skip(suggestion)
    finally:
        ws.close()
    if args.json:
        print_json({"skipped": suggestion.as_dict()})
    else:
        print(f"skipped {suggestion.id}: {suggestion.summary} (it returns if one of its notes changes)")
    return 0
