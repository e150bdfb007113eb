"""`companion recent`: the temporal tier by itself (`recall_recent`), newest first, redacted as agents are shown it."""

from __future__ import annotations

import argparse
from typing import Any

from companion.cli.args import (
    add_scope_arguments,
    add_vault_arguments,
    open_workspace,
    scope_from_args,
    sync_first,
)
from companion.cli.output import print_json
from companion.errors import ConfigError
from companion.recall.scope import parse_as_of
from companion.recall.temporal import temporal_json
from companion.secrets import redact_output, redact_text

MAX_HOURS = 24 * 3660
"""The longest window `--hours` accepts."""


def register(sub: Any) -> None:
    """Add the `recent` subcommand."""
    p = sub.add_parser("recent", help="completed sessions of the last hours, newest first")
    add_vault_arguments(p)
    p.add_argument("--hours", type=float, default=None, help="how far back (default: recall.recent_hours, 48)")
    p.add_argument("--limit", type=int, default=None, help="how many sessions (default: recall.recent_limit, 10)")
    add_scope_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """List recent sessions; read-only."""
    if args.hours is not None and not 0 < args.hours <= MAX_HOURS:
        raise ConfigError(f"--hours must be more than 0 and at most {MAX_HOURS} (ten years)")
    if args.limit is not None and args.limit < 1:
        raise ConfigError("--limit must be at least 1")
    scope = scope_from_args(args)
    as_of = parse_as_of(args.as_of)
    ws = open_workspace(args)
    try:
        sync_first(ws, args)
        items = ws.recall().recall_recent(args.hours, args.limit, as_of=as_of, scope=scope)
    finally:
        ws.close()
    if args.json:
        print_json(redact_output({"sessions": [temporal_json(t) for t in items]}))
        return 0
    if not items:
        print("no completed sessions in that window")
    for t in items:
        who = f"{t.user_id}/{t.chat_id}" if t.chat_id else t.user_id
        print(redact_text(f"{t.when:%Y-%m-%d %H:%M}  {who:<18} {t.title}"))
        if t.summary:
            print(redact_text(f"{'':18}{t.summary}"))
    return 0
