"""`companion mcp`: serve the vault to an agent over the Model Context Protocol (stdio)."""

from __future__ import annotations

import argparse
from typing import Any

from companion.cli.args import add_vault_arguments, open_workspace
from companion.errors import ConfigError


def register(sub: Any) -> None:
    """Add the `mcp` subcommand."""
    p = sub.add_parser(
        "mcp",
        help="serve the vault to an agent as MCP tools, stdio or HTTP on loopback (read-only unless --allow-writes)",
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
    p.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default: the client starts the server) or streamable HTTP on 127.0.0.1",
    )
    p.add_argument("--port", type=int, default=8765, help="the HTTP port on 127.0.0.1 (default 8765)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve until the client goes away."""
    from companion.mcp_server.server import serve  # the SDK costs ~0.3 s to import: only this command pays

    if not 0 < args.port < 65536:
        raise ConfigError(f"--port {args.port}: expected a port number from 1 to 65535")

    # Opened here, before serving: a vault that cannot be found is an error on stderr and exit code 2, not a
    # server that fails every call.
    ws = open_workspace(args)
    port = args.port if args.transport == "http" else None
    serve(lambda: ws, allow_writes=args.allow_writes or ws.config.agent_writes.allow, port=port)
    return 0
