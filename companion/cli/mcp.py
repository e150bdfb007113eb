"""`companion mcp`: serve the vault to an agent over the Model Context Protocol (stdio, or HTTP with a token)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from companion.cli.args import add_vault_arguments, open_workspace
from companion.errors import ConfigError
from indexer.lock import WriterLock


def register(sub: Any) -> None:
    """Add the `mcp` subcommand."""
    p = sub.add_parser(
        "mcp",
        help="serve the vault to an agent as MCP tools, stdio or HTTP on loopback (read-only unless --allow-writes)",
        description="Run an MCP server on stdin/stdout for an agent client (Claude Code, Claude Desktop, Cursor). "
        "It answers the handshake at once, keeps the index fresh (or follows a running `companion index --watch`) "
        "and exits when the client closes the connection. Over HTTP, every request must carry the vault's bearer "
        "token (`Authorization: Bearer <token>`), which --show-token prints.",
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
    p.add_argument(
        "--show-token",
        action="store_true",
        help="print the bearer token HTTP clients must send (made on first use, kept in the vault's data "
        "directory with mode 600) and exit",
    )
    p.add_argument("--json", action="store_true", help='with --show-token: print {"token": ..., "url": ...}')
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve until the client goes away, or print the HTTP transport's token."""
    from companion.mcp_server.bearer import SHOW_TOKEN, load_token

    if not 0 < args.port < 65536:
        raise ConfigError(f"--port {args.port}: expected a port number from 1 to 65535")
    if args.json and not args.show_token:
        raise ConfigError("--json goes with --show-token (the server itself speaks only the protocol on stdout)")

    # Opened here, before serving: a vault that cannot be found is an error on stderr and exit code 2, not a
    # server that fails every call; nor is a data directory that cannot be written (exit code 9).
    ws = open_workspace(args)
    WriterLock.prepare(ws.data_dir)
    ws.long_lived = True  # an indexer started beside the server asks it for the store, never waits for it
    url = f"http://127.0.0.1:{args.port}/mcp"
    if args.show_token:
        shown = load_token(ws.paths.mcp_token)
        print(json.dumps({"token": shown, "url": url}) if args.json else shown)
        return 0

    from companion.mcp_server.server import serve  # the SDK costs ~0.3 s to import: only serving pays

    token: str | None = None
    if args.transport == "http":
        token = load_token(ws.paths.mcp_token)
        print(
            f"companion mcp: serving {url} to clients sending `Authorization: Bearer <token>` (`{SHOW_TOKEN}`)",
            file=sys.stderr,
        )
    port = args.port if args.transport == "http" else None
    serve(lambda: ws, allow_writes=args.allow_writes or ws.config.agent_writes.allow, port=port, token=token)
    return 0
