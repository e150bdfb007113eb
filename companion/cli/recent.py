"""`companion recent`: the temporal tier by itself (`recall_recent`), or every session of a period (`--period 'last
week'`), newest first, each with its exchange, redacted as agents are shown it."""

from __future__ import annotations

import argparse
from typing import Any

from companion.agent.periods import EXAMPLES, RecentSessions, sessions_of
from companion.cli.args import (
    add_scope_arguments,
    add_vault_arguments,
    open_workspace,
    scope_from_args,
    sync_first,
)
from companion.cli.output import print_json
from companion.errors import ConfigError
from companion.recall.dates import find_date_range
from companion.recall.scope import parse_as_of
from companion.secrets import redact_output, redact_text
from companion.vault.sessions import local_moment
from companion.words import counted

MAX_HOURS = 24 * 3660
"""The longest window `--hours` accepts."""


def register(sub: Any) -> None:
    """Add the `recent` subcommand."""
    p = sub.add_parser("recent", help="completed sessions of the last hours, newest first")
    add_vault_arguments(p)
    p.add_argument("--hours", type=float, default=None, help="how far back (default: recall.recent_hours, 48)")
    p.add_argument("--limit", type=int, default=None, help="how many sessions (default: recall.recent_limit, 10)")
    p.add_argument(
        "--period",
        metavar="WORDS",
        help="every session of a period instead of the last hours: 'last week', 'yesterday', 'in March', "
        "'on 3 November', 2026-11-03",
    )
    add_scope_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """List recent sessions; read-only."""
    if args.hours is not None and not 0 < args.hours <= MAX_HOURS:
        raise ConfigError(f"--hours must be more than 0 and at most {MAX_HOURS} (ten years)")
    if args.limit is not None and args.limit < 1:
        raise ConfigError("--limit must be at least 1")
    if args.period is not None and args.hours is not None:
        raise ConfigError("give --hours or --period, not both")
    scope = scope_from_args(args)
    moment = local_moment(parse_as_of(args.as_of))
    period = None
    if args.period is not None:
        period = find_date_range(args.period, moment)
        if period is None:
            raise ConfigError(f"--period {args.period!r} names no past period; say e.g. {EXAMPLES}")
    ws = open_workspace(args)
    try:
        sync_first(ws, args)
        engine = ws.recall()
        if period is not None:
            found = sessions_of(engine, period, moment, args.limit or engine.settings.recent_limit, scope)
        else:
            found = RecentSessions(tuple(engine.recall_recent(args.hours, args.limit, as_of=moment, scope=scope)))
    finally:
        ws.close()
    if args.json:
        print_json(redact_output(found.as_json()))
        return 0
    if period is not None:
        print(f"the sessions of {period.start} .. {period.end} ('{period.phrase}'), newest first")
        if not found.sessions:
            print("no sessions in that period")
    elif not found.sessions:
        print("no completed sessions in that window")
    for t in found.sessions:
        who = f"{t.user_id}/{t.chat_id}" if t.chat_id else t.user_id
        # A summary's title is the user's message, which its exchange line starts with: one line says both.
        said = t.summary if t.summary and t.title and t.summary.startswith(t.title) else t.title
        print(redact_text(f"{t.when:%Y-%m-%d %H:%M}  {who:<18} {said}"))
        if t.summary and said != t.summary:
            print(redact_text(f"{'':18}{t.summary}"))
    if found.more:
        print(f"and {counted(found.more, 'more session')} of that period (--limit shows more)")
    return 0
