"""`companion archives`: list and search the cold tier, the xz archives the `archive` processor wrote, and put an
archived session note back in the vault.

It reads the config and the archive files only (streamed, never whole) and never opens the embedding model or the
index; only `restore` writes (one note, atomically, recorded in the audit log). An archive that cannot be read is a
warning naming it, not an error: the others are still listed and searched.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path
from typing import Any

from companion.cli.output import print_json
from companion.config import load_config_file
from companion.errors import ConfigError, ProcessError
from companion.locations import config_path, vault_data_dir
from companion.pipeline.coldtier import (
    ArchiveFile,
    ColdHit,
    ColdQuery,
    archive_roots,
    find_entry,
    list_archives,
    search_archives,
    string_values,
)
from companion.pipeline.sessionnotes import restore_note
from companion.recall.scope import parse_as_of
from companion.vault.audit import AuditLog
from companion.vault.discovery import locate_vault

_SNIPPET = 100
"""Characters of the matching value shown around the match."""


def register(sub: Any) -> None:
    """Add the `archives` subcommand (`list`, the default, and `search`)."""
    p = sub.add_parser(
        "archives",
        help="list and search the archived (cold) history entries",
        description="List the xz archives the archive processors wrote (each agent's destination in the config, or "
        "--folder), or search them with `companion archives search TEXT`. Unreadable archives are reported and "
        "skipped.",
    )
    _add_common(p, suppress=False)
    p.set_defaults(run=run_list)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    a = actions.add_parser("list", help="list the archive files (the default)", description="List the archive files.")
    _add_common(a, suppress=True)
    a.set_defaults(run=run_list)
    s = actions.add_parser(
        "search",
        help="search the archived entries, newest first",
        description="Find archived entries holding TEXT (case-insensitive, in any string value), newest first; "
        "each entry once, even when two archives hold it.",
    )
    s.add_argument("text", metavar="TEXT", help="the text to look for ('' matches every entry)")
    _add_common(s, suppress=True)
    s.add_argument("--since", metavar="DATE", help="only entries at or after this moment (ISO-8601; a date: 00:00)")
    s.add_argument("--until", metavar="DATE", help="only entries before this moment (a bare date: through that day)")
    s.add_argument("--limit", type=int, default=20, metavar="N", help="show at most N entries (default 20)")
    s.set_defaults(run=run_search)
    r = actions.add_parser(
        "restore",
        help="put an archived session note back in the vault",
        description="Write the archived session note ID (its vault path, as `archives search` shows it) back where it "
        "was, byte for byte. A file in the way is left alone; the restore is recorded in the audit log, so "
        "`companion undo` takes the note out again.",
    )
    r.add_argument("id", metavar="ID", help="the archived entry's id: a session note's vault path")
    _add_common(r, suppress=True)
    r.add_argument("--data-dir", default=argparse.SUPPRESS, help="root of the companion's data (for the audit log)")
    r.add_argument("--dry-run", action="store_true", help="write nothing; show what would be restored")
    r.set_defaults(run=run_restore)


def _add_common(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    # On the actions the defaults are suppressed, so `archives --json search x` keeps the --json given before.
    default: Any = argparse.SUPPRESS if suppress else None
    parser.add_argument("--vault", default=default, help="the vault folder (else AGENT_VAULT_PATH, Obsidian, ...)")
    parser.add_argument(
        "--config", default=default, metavar="FILE", help="the config file (default: the vault's companion.yaml)"
    )
    parser.add_argument(
        "--folder",
        action="append",
        default=default,
        metavar="DIR",
        help="look in this archive folder instead of the config's destinations (repeatable; no vault needed)",
    )
    parser.add_argument("--agent", default=default, metavar="NAME", help="only this agent's archives")
    parser.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS if suppress else False, help="print one JSON object"
    )


def _roots(args: argparse.Namespace) -> tuple[Path | None, tuple[Path, ...], str]:
    """The vault (none with --folder), the folders to look in, and where they came from (for messages)."""
    if args.folder:
        folders = tuple(Path(f).expanduser() for f in args.folder)
        missing = [str(f) for f in folders if not f.is_dir()]
        if missing:
            raise ConfigError(f"--folder {missing[0]}: no such folder; pass an archive destination or agent folder")
        return None, folders, "--folder"
    root = locate_vault(args.vault, os.environ).path
    path = Path(args.config).expanduser() if args.config else config_path(root)
    config = load_config_file(path, missing_ok=not args.config)
    return root, archive_roots(root, config), str(path)


def _shown(root: Path | None, path: Path) -> str:
    if root is not None:
        try:
            return path.relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


def _warn(problems: tuple[str, ...]) -> None:
    for problem in problems:
        print(f"companion: warning: {problem}", file=sys.stderr)


def run_list(args: argparse.Namespace) -> int:
    """List the archive files; unreadable ones are warnings."""
    root, roots, origin = _roots(args)
    listing = list_archives(roots, args.agent)
    if args.json:
        print_json(
            {
                "folders": [str(r) for r in roots],
                "archives": [_file_json(f) for f in listing.files],
                "problems": list(listing.problems),
            }
        )
        return 0
    if not roots:
        print(f"no archive processor in {origin}, so no archive folders to list; pass --folder DIR")
    elif not listing.files:
        print("no archives in " + ", ".join(str(r) for r in roots))
    for f in listing.files:
        span = f"{_ts(f.first_ts)} .. {_ts(f.last_ts)}" if f.first_ts else "no entries"
        print(
            f"{f.agent}  {_shown(root, f.path)}  {f.entries} entries  {span}  "
            f"{_size(f.compressed_bytes)} ({_size(f.uncompressed_bytes)} uncompressed)"
        )
    if listing.files:
        total = sum(f.entries for f in listing.files)
        print(f"{len(listing.files)} archive files, {total} entries")
    _warn(listing.problems)
    return 0


def run_search(args: argparse.Namespace) -> int:
    """Search the archives; unreadable ones are warnings."""
    if args.limit < 1:
        raise ConfigError(f"--limit {args.limit}: expected 1 or more")
    root, roots, origin = _roots(args)
    query = ColdQuery(
        text=args.text,
        since=_moment(args.since, "--since", end_of_day=False),
        until=_moment(args.until, "--until", end_of_day=True),
        agent=args.agent,
        limit=args.limit,
    )
    result = search_archives(roots, query)
    if args.json:
        print_json(
            {
                "query": {
                    "text": query.text,
                    "since": _ts(query.since) or None,
                    "until": _ts(query.until) or None,
                    "agent": query.agent,
                    "limit": query.limit,
                },
                "matched": result.matched,
                "files": result.files,
                "entries": result.entries,
                "duplicates": result.duplicates,
                "hits": [_hit_json(h) for h in result.hits],
                "problems": list(result.problems),
            }
        )
        return 0
    if not roots:
        print(f"no archive processor in {origin}, so no archives to search; pass --folder DIR")
    for hit in result.hits:
        print(f"{_ts(hit.entry.ts)}  {hit.agent}  {hit.entry.id}  {_shown(root, hit.archive)}:{hit.line}")
        print(f"  {_snippet(hit, query.text)}")
    more = f" (showing the newest {len(result.hits)})" if result.matched > len(result.hits) else ""
    print(f"{result.matched} matching entries in {result.files} archive files{more}")
    _warn(result.problems)
    return 0


def run_restore(args: argparse.Namespace) -> int:
    """Restore one archived session note; errors are messages naming the entry or the file."""
    root, roots, _origin = _roots(args)
    if root is None:
        root = locate_vault(args.vault, os.environ).path
    entry, problems = find_entry(roots, args.id, args.agent)
    _warn(problems)
    if entry is None:
        raise ProcessError(
            f"no archived entry has the id {args.id!r}; `companion archives search TEXT` shows the ids of archived "
            "entries"
        )
    dry_run = getattr(args, "dry_run", False)
    audit = None if dry_run else AuditLog(vault_data_dir(root, getattr(args, "data_dir", None)))
    restored = restore_note(root, entry, audit, dry_run=dry_run)
    if args.json:
        print_json({"id": entry.id, "path": str(restored.path), "already": restored.already, "dry_run": dry_run})
    elif restored.already:
        print(f"{_shown(root, restored.path)} is there already, unchanged; nothing to restore")
    else:
        verb = "would restore" if dry_run else "restored"
        print(f"{verb} {_shown(root, restored.path)} ({len(restored.content)} bytes) from the archive")
    return 0


def _moment(text: str | None, what: str, *, end_of_day: bool) -> dt.datetime | None:
    moment = parse_as_of(text, what)
    if moment is None or text is None:
        return None
    if end_of_day and len(text.strip()) == 10:
        # `--until 2026-03-10` reads as "through the 10th", not "before the 10th began".
        moment += dt.timedelta(days=1)
    return moment.astimezone()  # a moment without a zone is local time, as for --as-of


def _ts(moment: dt.datetime | None) -> str:
    return "" if moment is None else moment.isoformat(timespec="seconds")


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1024 * 1024):.1f} MiB"


def _snippet(hit: ColdHit, text: str) -> str:
    needle = text.casefold()
    for value in string_values(hit.entry.data):
        at = value.casefold().find(needle) if needle else 0
        if at >= 0 and value.strip():
            start = max(0, at - _SNIPPET // 2)
            piece = " ".join(value[start : start + _SNIPPET].split())
            return ("..." if start else "") + piece + ("..." if start + _SNIPPET < len(value) else "")
    return ""


def _file_json(f: ArchiveFile) -> dict[str, Any]:
    return {
        "path": str(f.path),
        "agent": f.agent,
        "entries": f.entries,
        "first_ts": _ts(f.first_ts) or None,
        "last_ts": _ts(f.last_ts) or None,
        "compressed_bytes": f.compressed_bytes,
        "uncompressed_bytes": f.uncompressed_bytes,
        "problems": list(f.problems),
    }


def _hit_json(hit: ColdHit) -> dict[str, Any]:
    return {
        "agent": hit.agent,
        "id": hit.entry.id,
        "ts": hit.entry.data["ts"],
        "archive": str(hit.archive),
        "line": hit.line,
        "entry": hit.entry.data,
    }
