"""`companion mcp`: serve the vault to an agent over the Model Context Protocol (stdio)."""

from __future__ import annotations

import argparse
from typing import Any

from companion.cli.args import add_vault_arguments, open_workspace


def register(sub: Any) -> None:
    """Add the `mcp` subcommand."""
    p = sub.add_parser(
        "mcp",
        help="serve the vault to an agent as MCP tools over stdio (read-only unless --allow-writes)",
        description="Run an MCP server on stdin/stdout for an agent client (Claude Code, Claude Desktop, Cursor). "
        "It answers the handshake at once, keeps the index fresh (or follows a running `companion index --watch`) "
        "and exits when the client closes the connection.",
    )
    add_vault_arguments(p)
    p.add_argument(
        "--allow-writes",
        action="store_true",
        help="offer remember, vault_write and vault_delete (checked, budgeted, audited, undoable); "
        "also `agent_writes: {allow: true}` in the config",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve until the client goes away."""
    from companion.mcp_server.server import serve_stdio  # the SDK costs ~0.3 s to import: only this command pays

    # Opened here, before serving: a vault that cannot be found is an error on stderr and exit code 2, not a
    # server that fails every call.
    ws = open_workspace(args)
    serve_stdio(lambda: ws, allow_writes=args.allow_writes or ws.config.agent_writes.allow)
    return 0
