"""The `companion` command line: one subcommand per job, `--json` wherever the output is data."""

from __future__ import annotations

import argparse
import errno
import json
import logging
import os
import sqlite3
import sys
import typing
from collections.abc import Sequence

from companion import __version__
from companion.errors import (
    AgentInputError,
    CompanionError,
    StorageError,
    StoreError,
    from_os_error,
    no_space_error,
    says_disk_full,
)
from companion.locations import data_root

log = logging.getLogger(__name__)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are also one JSON object on stdout when `--json` was asked for.

    Every subcommand's parser is of this class (argparse makes subparsers of the parent's class), so a script reading
    `--json` output gets `{"error", "exit_code"}` for an unknown option too, as for every other failure.
    """

    json_errors = False
    """Set by `main` when the command line holds `--json`, before parsing."""

    def error(self, message: str) -> typing.NoReturn:
        """Print the usage and the error on stderr (and, for `--json`, the error on stdout), then exit with 2."""
        if self.json_errors:
            print(json.dumps({"error": f"{self.prog}: {message}", "exit_code": 2}), flush=True)
        super().error(message)


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
        fusion,
        graph,
        importing,
        index,
        mcp,
        process,
        recall,
        recent,
        review,
        serve,
        setup,
        tui,
        vault,
    )

    parser = _Parser(
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
        review,
        process,
        importing,
        archives,
        eval,
        fusion,
        doctor,
        setup,
        demo,
        bench,
        mcp,
        serve,
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
    _Parser.json_errors = "--json" in argv
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # argparse reports an unknown option from the top-level parser, with its usage; the command's own usage
        # (`companion recall [--vault V] ...`) is the one that shows what was meant.
        _innermost(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
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
    except KeyboardInterrupt:
        resume = (
            ": what was written stays (notes read so far are searchable by their words), and `companion index` "
            "goes on from there"
            if args.command == "index"
            else ""
        )
        print(f"companion: interrupted{resume}", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (`| head`) has had enough: not an error. Point stdout at nothing so the exit flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (CompanionError, OSError, sqlite3.DatabaseError) as exc:
        known = _explained(exc, args)
        if known is None:
            raise
        if known is not exc:
            # The message replaces the traceback; `-v` still shows where the error came from.
            log.debug("the error below came from here", exc_info=exc)
        return _report(known, args)
    return code


def _innermost(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command the command line chose: `companion vault search` gives `vault search`'s."""
    while True:
        chosen = next(
            (
                action.choices[getattr(args, action.dest)]
                for action in parser._actions
                if isinstance(action, argparse._SubParsersAction) and getattr(args, action.dest, None) in action.choices
            ),
            None,
        )
        if chosen is None:
            return parser
        parser = chosen


def _explained(exc: Exception, args: argparse.Namespace) -> CompanionError | None:
    """The error to report for `exc`, or None when it is not one the command line can explain (a real bug)."""
    if isinstance(exc, OSError):
        return from_os_error(exc)
    if not _disk_full(exc):
        if isinstance(exc, sqlite3.DatabaseError):
            # A file of the index damaged after it was opened (a page garbled in the middle): say so, with the way out.
            return StoreError(
                f"A file of the index in {data_root(getattr(args, 'data_dir', None))} is damaged ({exc}): "
                "`companion doctor` names it, and `companion index --rebuild` builds the index again from the vault"
            )
        return exc if isinstance(exc, CompanionError) else None
    named = _named_os_error(exc)
    path = named.filename if named is not None and named.errno in (errno.ENOSPC, errno.EDQUOT) else None
    if isinstance(exc, CompanionError) and not isinstance(exc, StoreError):
        # Such a message says what was written and what was put back: keep it, with the cause and what to do.
        where = f" holding {os.fsdecode(path)}" if path is not None else ""
        return StorageError(
            f"{exc}; no space left on the device{where}: free some space and run it again",
            None if path is None else os.fsdecode(path),
        )
    # A store error would blame a corrupt index and suggest a rebuild, which a full disk does not need.
    if named is not None and path is not None:
        return from_os_error(named)
    # SQLite and Chroma say "database or disk is full" without a path: their files live in the data root.
    return no_space_error(str(data_root(getattr(args, "data_dir", None))))


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the errors it was raised from or while handling, outermost first."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and all(seen is not known for known in chain):
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    return chain


def _disk_full(exc: BaseException) -> bool:
    """Whether `exc`, or an error behind it, says the disk (or the quota) is full."""
    return any(
        (isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT)) or says_disk_full(str(e))
        for e in _chain(exc)
    )


def _named_os_error(exc: BaseException) -> OSError | None:
    """The first `OSError` behind `exc` that names a file."""
    return next((e for e in _chain(exc) if isinstance(e, OSError) and e.filename is not None), None)


def _report(exc: CompanionError, args: argparse.Namespace) -> int:
    """Print an error as one line on stderr (and as JSON on stdout under `--json`); return its exit code."""
    print(f"companion: {exc}", file=sys.stderr)
    if getattr(args, "json", False):
        # A script that asked for JSON reads JSON, also when the command fails.
        error: dict[str, object] = {"error": str(exc), "exit_code": exc.exit_code}
        if isinstance(exc, AgentInputError):
            error.update(error=exc.reason, field=exc.field)
        if isinstance(exc, StorageError):
            error["path"] = exc.path
        print(json.dumps(error, ensure_ascii=False), flush=True)
    return exc.exit_code
