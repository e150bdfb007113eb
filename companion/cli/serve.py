"""`companion serve`: the app in a browser window on this machine, on loopback, behind a token."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shlex
import sys
import webbrowser
from typing import Any

from companion.cli.args import add_vault_arguments, open_workspace
from companion.errors import ConfigError, VaultError
from companion.locations import data_root


def register(sub: Any) -> None:
    """Add the `serve` subcommand."""
    p = sub.add_parser(
        "serve",
        help="the app in a browser window on this machine (loopback only, behind a token)",
        description="Serve the app to a browser on this machine: bound to 127.0.0.1, on a free port unless --port "
        "is given, refused without the token in the address it prints (and opens in the default browser when "
        "there is one). Each browser tab runs the app on the vault; stop with Ctrl-C.",
    )
    add_vault_arguments(p)
    p.add_argument("--port", type=int, default=None, help="the port (default: a free one)")
    p.add_argument("--read-only", action="store_true", help="write nothing: not the index, not the vault")
    p.add_argument("--no-browser", action="store_true", help="print the address only; open no browser")
    p.add_argument("--json", action="store_true", help="print the address as one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    from companion.tui.browser import TokenServer, describe, free_port, new_token

    if args.port is not None and not 1 <= args.port <= 65535:
        raise ConfigError(f"--port {args.port}: a port is between 1 and 65535")
    ws = open_workspace(args)
    try:
        if not ws.root.is_dir():
            raise VaultError(f"no vault at {ws.root} ({ws.location.detail}); point --vault or AGENT_VAULT_PATH at it")
        command = [sys.executable, "-m", "companion", "app", "--vault", str(ws.root)]
        if getattr(args, "data_dir", None):
            command += ["--data-dir", str(data_root(args.data_dir))]
        if getattr(args, "chroma_url", None):
            command += ["--chroma-url", args.chroma_url]
        if args.read_only:
            command.append("--read-only")
        title = f"Vault Companion: {ws.root.name}"
    finally:
        ws.close()

    def ready(url: str) -> None:
        if args.json:
            print(json.dumps(describe(server)), flush=True)
        else:
            print(
                f"serving the app for {title.split(': ', 1)[1]} at\n  {url}\nopen it in a browser on this machine; "
                "Ctrl-C stops",
                flush=True,
            )
        if not args.no_browser and _has_desktop():
            # No browser to open here after all: the address is printed.
            with contextlib.suppress(webbrowser.Error):
                webbrowser.get().open(url)

    server = TokenServer(
        # `exec`: textual-serve runs the command through a shell, and the app must be the process it ends.
        "exec " + shlex.join(command),
        port=args.port or free_port(),
        token=new_token(),
        title=title,
        on_ready=ready,
    )
    # When it stops, the server ends the apps of open tabs; asyncio then warns about their closed loop, which says
    # nothing to the user.
    logging.getLogger("asyncio").setLevel(logging.ERROR)
    try:
        server.serve()
    except OSError as exc:
        raise ConfigError(f"--port {server.port}: cannot listen there ({exc.strerror or exc}); choose another") from exc
    return 0


def _has_desktop() -> bool:
    """Whether a graphical browser can open here: without a display (a server, a terminal over SSH) Python would
    start a text browser in this very terminal, over the server's output."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
