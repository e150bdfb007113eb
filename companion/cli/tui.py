"""`companion app` (and `companion` alone): the terminal app on a vault."""

from __future__ import annotations

import argparse
from typing import Any

from companion.cli.args import add_vault_arguments, open_workspace
from companion.errors import VaultError
from companion.recall.scope import parse_as_of
from indexer.lock import WriterLock


def register(sub: Any) -> None:
    """Add the `app` subcommand."""
    p = sub.add_parser("app", help="open the terminal app (the default when no command is given)")
    add_vault_arguments(p)
    p.add_argument("--read-only", action="store_true", help="write nothing: not the index, not the vault")
    p.add_argument("--as-of", metavar="DATETIME", help="show the vault as it was at this moment")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Open the app; returns its exit code."""
    from companion.tui.app import CompanionApp  # Textual is imported only when the app runs

    as_of = parse_as_of(args.as_of)
    ws = open_workspace(args)
    if not ws.root.is_dir():
        # Only the fallback can be missing (a --vault or AGENT_VAULT_PATH that does not exist is refused earlier):
        # refuse as `companion index` does, instead of an app waiting forever on a vault that is not there.
        ws.close()
        raise VaultError(
            f"no vault at {ws.root} ({ws.location.detail}); point --vault or AGENT_VAULT_PATH at your vault, "
            "or try the app on a demo vault with `companion demo`"
        )
    try:
        if not args.read_only:
            # A data directory that cannot be written fails here, with one message and exit code 9, rather than as a
            # retrying error inside the app.
            WriterLock.prepare(ws.data_dir)
        code = CompanionApp(ws, as_of=as_of, read_only=args.read_only).run()
    finally:
        ws.close()
    return int(code or 0)
