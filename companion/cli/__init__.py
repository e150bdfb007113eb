"""The `companion` command line: one subcommand per job, `--json` wherever the output is data."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence

from companion import __version__
from companion.errors import AgentInputError, CompanionError


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (each command module adds its own subcommand)."""
    from companion.cli import (
        archives,
        bench,
        context,
        curate,
        demo,
        doctor,
        eval,
        graph,
        index,
        mcp,
        process,
        recall,
        recent,
        tui,
        vault,
    )

    parser = argparse.ArgumentParser(
        prog="companion",
        description="See, tune and curate what an AI agent remembers in an Obsidian vault.",
    )
    parser.add_argument("--version", action="version", version=f"companion {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in (
        tui,
        index,
        recall,
        recent,
        context,
        graph,
        vault,
        curate,
        process,
        archives,
        eval,
        doctor,
        demo,
        bench,
        mcp,
    ):
        module.register(sub)
    return parser


_TOP_LEVEL = {"-h", "--help", "--version", "-v", "--verbose"}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; errors the companion understands become a message and an exit code."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in _TOP_LEVEL):
        argv = ["app", *argv]  # `companion [--vault V]` opens the app
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(message)s",
        datefmt="%H:%M:%S",
        stream=sys.stderr,
    )
    if args.command is None:
        parser.print_help()
        return 0
    try:
        code: int = args.run(args)
    except CompanionError as exc:
        print(f"companion: {exc}", file=sys.stderr)
        if getattr(args, "json", False):
            # A script that asked for JSON reads JSON, also when the command fails.
            error: dict[str, object] = {"error": str(exc), "exit_code": exc.exit_code}
            if isinstance(exc, AgentInputError):
                error.update(error=exc.reason, field=exc.field)
            print(json.dumps(error, ensure_ascii=False), flush=True)
        return exc.exit_code
    except KeyboardInterrupt:
        print("companion: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (`| head`) has had enough: not an error. Point stdout at nothing so the exit flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code
