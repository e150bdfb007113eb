"""The options commands share: which vault, data directory and store (every vault command), and the filters of the
commands that recall (`recall`, `recent`, `context`, `eval`) with their JSON shapes."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from companion.cli.output import ProgressBar, model_change_line
from companion.errors import ConfigError
from companion.recall.results import RecallItem
from companion.recall.scope import Scope, parse_day, parse_where, path_pattern
from companion.vault.sessions import SessionSummary
from companion.words import counted, duration, significant
from companion.workspace import CATCH_UP_EMBED_S, Workspace


def add_scope_arguments(parser: argparse.ArgumentParser) -> None:
    """`--as-of`, `--where`, `--since`, `--until`, `--path` and `--no-sync`."""
    parser.add_argument(
        "--as-of",
        metavar="DATETIME",
        help="answer as if it were this moment (ISO-8601; sets the hot window, decay and 'last week')",
    )
    parser.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="only notes whose frontmatter FIELD equals VALUE (repeatable; kind, type, path, title work too)",
    )
    parser.add_argument("--since", metavar="DATE", help="only notes dated on or after DATE")
    parser.add_argument("--until", metavar="DATE", help="only notes dated on or before DATE")
    parser.add_argument(
        "--path", metavar="GLOB", help="only notes whose vault path matches GLOB (a folder's name: the notes under it)"
    )
    parser.add_argument(
        "--no-sync",
        action="store_true",
        help="answer from the index as it is (by default it is brought up to date first, unless a watcher runs)",
    )


def add_record_argument(parser: argparse.ArgumentParser, what: str, default: str = "") -> None:
    """`--record / --no-record`: whether `what` counts as accessed (`default` says what the command does without
    either)."""
    parser.add_argument(
        "--record",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"count {what} as accessed" + (f"; {default}" if default else ""),
    )


def json_lines(lines: Iterable[str], source: str) -> Iterator[tuple[int, str, dict[str, Any] | str]]:
    """For each non-blank JSONL line: (line number, "<source>, line N", the object or an error message)."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{source}, line {number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, where, f"{where}: not JSON ({exc.msg})"
            continue
        yield number, where, obj if isinstance(obj, dict) else f"{where}: expected a JSON object"


def scope_from_args(args: argparse.Namespace) -> Scope:
    """The `Scope` the options describe."""
    since = parse_day(args.since, "--since") if args.since else None
    until = parse_day(args.until, "--until") if args.until else None
    if since and until and since > until:
        raise ConfigError(f"--since {since} is after --until {until}")
    return Scope(parse_where(args.where), since, until, path_pattern(args.path) if args.path else None)


def sync_first(ws: Workspace, args: argparse.Namespace) -> None:
    """Bring the index up to date unless `--no-sync`; say so on stderr when there was work to do."""
    if getattr(args, "no_sync", False):
        return

    def say_if_new() -> None:
        if ws.manifest.note_count() == 0 and not ws.manifest.skipped() and (notes := len(ws.vault.scan())):
            print(
                f"companion: {ws.root} has never been indexed: indexing its {counted(notes, 'note')} before "
                f"answering (every word first, then meaning for at most {CATCH_UP_EMBED_S:.0f} s; "
                "`companion index` builds it all)",
                file=sys.stderr,
            )

    bar = ProgressBar("indexing")
    report = ws.catch_up(progress=bar, reading=bar.reading, on_start=say_if_new)
    bar.close()
    if ws.model_change is not None:
        print(f"companion: {model_change_line(ws.model_change)}", file=sys.stderr)
    if report is not None and (report.notes_indexed or report.notes_deleted):
        print(
            f"companion: indexed {counted(report.notes_indexed, 'note')}, removed {report.notes_deleted} "
            "before answering",
            file=sys.stderr,
        )
    if report is not None and report.chunks_left:
        built = int(100 * ws.searcher().built())
        when = f", about {duration(report.left_s)}" if report.left_s is not None else ""
        print(
            f"companion: the meaning side of the index is {built}% built ({counted(report.chunks_left, 'chunk')} "
            f"to embed{when}): `companion index` finishes it; until then the notes without it are found by their "
            "words",
            file=sys.stderr,
        )


def item_json(item: RecallItem, explain: bool = True, match: bool | None = None) -> dict[str, Any]:
    """One recalled note as JSON (with `match`, whether it reaches the relevance floor, when given)."""
    # The relevance leads: it is the number a reader compares across questions; `score` orders this list only.
    out: dict[str, Any] = {
        "path": item.path,
        "title": item.title,
        "relevance": None if item.relevance is None else round(item.relevance, 6),
        **({} if match is None else {"match": match}),
        "score": significant(item.score),
        "tier": item.tier,
        "kind": item.kind,
        "type": item.note_type,
        "date": item.date,
        "anchor": item.anchor,
    }
    e = item.explanation
    if explain and e is not None:
        out["explanation"] = {
            "dense": round(e.dense, 6),
            "lexical": round(e.lexical, 6),
            "dense_norm": round(e.dense_norm, 6),
            "lexical_norm": round(e.lexical_norm, 6),
            "dense_weight": round(e.dense_weight, 6),
            "coverage": round(e.coverage, 6),
            "relevance": round(e.relevance, 6),
            "named": e.named,
            "fusion": {name: round(value, 4) for name, value in e.fusion},
            "words": round(e.words, 6),
            "graph": round(e.graph, 6),
            "graph_via": e.graph_via,
            "date": round(e.date, 6),
            "decay": round(e.decay.value, 6),
            "decay_curve": round(e.decay.curve, 6),
            "decay_resistance": round(e.decay.resistance, 6),
            "decay_lift": round(e.decay.lift, 6),
            "pinned": e.decay.pinned,
            "superseded_by": e.superseded_by or None,
            "days_since_access": None if e.decay.days_since_access is None else round(e.decay.days_since_access, 3),
            "access_count": e.access.access_count,
            "last_accessed_at": e.access.last_accessed_at.isoformat() if e.access.last_accessed_at else None,
            "raw": None if e.raw is None else significant(e.raw),
            "final": significant(e.final),
        }
    return out


def session_json(s: SessionSummary) -> dict[str, Any]:
    """A hot session as JSON (without its body)."""
    return {
        "path": s.path,
        "date": s.date,
        "time": s.time,
        "user_id": s.user_id,
        "chat_id": s.chat_id,
        "user_msg": s.user_msg,
        "sentinel_msg": s.sentinel_msg,
    }


def add_vault_arguments(parser: argparse.ArgumentParser, *, store: bool = True, verb: bool = False) -> None:
    """The options every vault command takes; without `store`, no `--chroma-url` (for commands that never open the
    index, so their help does not offer an option they ignore).

    A command group (`vault`, `memory`, `curate`) takes them before its verb too (`companion vault --vault V search
    ...`): it calls this on its own parser, then with `verb` on each verb's, where an option left out must not
    overwrite the value given before the verb (argparse copies a verb's defaults over the group's values).
    """
    default: Any = argparse.SUPPRESS if verb else None
    parser.add_argument(
        "--vault", default=default, help="the vault folder (else AGENT_VAULT_PATH, Obsidian, ~/.agent_vault)"
    )
    parser.add_argument(
        "--data-dir",
        default=default,
        help="root of the companion's data (else COMPANION_DATA_DIR, else the platform data dir)",
    )
    if not store:
        return
    parser.add_argument(
        "--chroma-url",
        default=default,
        help="use a Chroma server (e.g. http://127.0.0.1:8000) instead of the embedded store",
    )


def open_workspace(args: argparse.Namespace) -> Workspace:
    """The workspace the command line names (`--vault`, `--data-dir`, `--chroma-url`, where the command has them)."""
    return Workspace.open(
        getattr(args, "vault", None),
        data_dir=getattr(args, "data_dir", None),
        chroma_url=getattr(args, "chroma_url", None),
    )
