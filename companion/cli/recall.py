"""`companion recall QUERY` and `companion recall --batch FILE.jsonl`: recalled notes, best first, with tiers.

Query mode is read-only for the vault. A listing is not a use: recall counts nothing as accessed unless told to
(`--record`, for results put in an agent's context), and then only the matches; a replay with `--as-of` never
does, so measuring recall never changes it. What it prints, text or JSON, passes through the secret redaction: its
output goes into agents' contexts.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from companion.cli.args import (
    add_record_argument,
    add_scope_arguments,
    add_vault_arguments,
    item_json,
    json_lines,
    open_workspace,
    scope_from_args,
    session_json,
    sync_first,
)
from companion.cli.output import print_json
from companion.errors import CompanionError, ConfigError
from companion.recall import shown
from companion.recall.engine import Recall
from companion.recall.recap import session_line
from companion.recall.results import Located, RecalledContext, relevance_text
from companion.recall.scope import Scope, parse_as_of, where_from_mapping
from companion.recall.temporal import TemporalItem, temporal_json
from companion.secrets import redact_output, redact_text
from companion.words import counted
from companion.workspace import Workspace


def register(sub: Any) -> None:
    """Add the `recall` subcommand."""
    p = sub.add_parser("recall", help="recall notes for a question: hot, warm and temporal tiers")
    add_vault_arguments(p)
    p.add_argument("query", nargs="?", help="the question or words to look for")
    p.add_argument("-k", "--k", type=int, default=None, help="how many notes (default: the policy's warm_results)")
    add_scope_arguments(p)
    p.add_argument("--batch", metavar="FILE.jsonl", help="answer one JSON query per line ('-' for stdin)")
    p.add_argument("--explain", action="store_true", help="show every part of each score")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_record_argument(
        p,
        "the matches shown",
        "by default no: a listing is not a use (say --record when the results go into an agent's context)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Recall one question or a batch."""
    if args.k is not None and args.k < 1:
        raise ConfigError("--k must be at least 1")
    if (args.query is None) == (args.batch is None):
        raise ConfigError("give either a QUERY or --batch FILE.jsonl")
    if args.query is not None and not args.query.strip():
        raise ConfigError(
            "the QUERY is empty, so it matches nothing: give words to look for "
            "(`companion recent` lists the latest sessions)"
        )
    scope = scope_from_args(args)
    as_of = parse_as_of(args.as_of)
    lines = _read_batch_file(args.batch, scope) if args.batch is not None else None
    ws = open_workspace(args)
    try:
        sync_first(ws, args)
        engine = ws.recall()
        if lines is not None:
            return _batch(engine, args, lines)
        context = engine.recall(args.query, k=args.k, as_of=as_of, scope=scope)
        if args.record and as_of is None:
            engine.record(used(context))
        why = "" if context.results else _why_nothing(ws, scope, args.no_sync)
        # The index's chunk anchors are its own ids: show the heading or block Obsidian opens, and the passage.
        located = {
            i.path: shown.located(engine, i) for i in context.shown(len(context.results)) if i.explanation is not None
        }
    finally:
        ws.close()
    if args.json:
        print_json(redact_output(context_json(context, located)))
    else:
        _print(context, args.explain, why, located)
    return 0


_BUILT_IN_FIELDS = frozenset({"kind", "type", "path", "title"})


def _why_nothing(ws: Workspace, scope: Scope, no_sync: bool) -> str:
    """Why a recall found nothing: a folder without notes, an empty index, a filter on a field no note has, or simply
    no match."""
    if ws.manifest.note_count() == 0:
        notes = ws.vault.scan()
        if not notes and not ws.vault.left_out:
            return (
                f"no notes found: {ws.root} holds no notes. A vault is a folder of Markdown notes (`.md` files, in "
                "any subfolders), such as an Obsidian vault; point --vault or AGENT_VAULT_PATH at one"
            )
        if not notes:
            skipped = sum(ws.vault.left_out.values())
            reasons = ", ".join(sorted(ws.vault.left_out))
            verb = "is" if skipped == 1 else "are all"
            return (
                f"no notes found: the {counted(skipped, 'note')} in {ws.root} {verb} left out of the index by {reasons}"
            )
        if no_sync:
            return "no notes found: the index is empty (run `companion index`, or leave out --no-sync)"
        return "no notes found: the index is empty (a running `companion index --watch` may still be building it)"
    keys = [key for key, _value in scope.where if key.casefold() not in _BUILT_IN_FIELDS]
    unknown = sorted(set(keys) - ws.manifest.fields_held(keys))
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        return f"no notes found: no indexed note has the field {names} (check its spelling, as in the notes)"
    return "no notes found" + (f" within {scope.describe()}" if not scope.empty else "")


def used(context: RecalledContext) -> list[str]:
    """The notes a recall's reader was given as matches (what `--record` counts as accessed): never a note below
    the relevance floor, never one listed by time only."""
    return [i.path for i in context.matched if i.explanation is not None]


def context_json(context: RecalledContext, located: dict[str, Located] | None = None) -> dict[str, Any]:
    """A `RecalledContext` as JSON (with each result's link and snippet where `located` has them): the matches, or
    when none reaches the relevance floor the closest notes, each with `match` saying which it is."""
    located = located or {}
    r, p = context.date_range, context.period
    listed = _listed(context)
    return {
        "query": context.query,
        "as_of": context.as_of.isoformat(timespec="seconds"),
        "recap": context.recap,
        "date_range": None if r is None else {"start": str(r.start), "end": str(r.end), "phrase": r.phrase},
        "period": None
        if p is None
        else {"start": str(p.start), "end": str(p.end), "phrase": p.phrase, "more": context.period_more},
        "results": [
            {
                **_with_place(item_json(i, match=i.matches(context.floor)), located.get(i.path)),
                **_session(listed.get(i.path)),
            }
            for i in context.shown(len(context.results))
        ],
        "no_good_match": context.no_good_match,
        "hot": [session_json(s) for s in context.sessions],
        "pushed_out": [session_json(s) for s in context.pushed_out],
        "temporal": [temporal_json(t) for t in context.temporal],
        "notice": context.notice,
        "dense_built": round(context.dense_built, 4),
    }


def _print(context: RecalledContext, explain: bool, why: str = "", located: dict[str, Located] | None = None) -> None:
    located = located or {}
    if context.full_notice:
        _say(f"note    {context.full_notice}")
    if context.date_range is not None:
        r = context.date_range
        _say(f"dates   '{r.phrase}' = {r.start} .. {r.end}")
    if context.period is not None:
        p = context.period
        more = f"; {context.period_more} more not listed (`companion recent --period '{p.phrase}'` lists them)"
        _say(f"recap   the sessions of {p.start} .. {p.end} first, newest first{more if context.period_more else ''}")
    elif context.recap:
        _say("recap   recent sessions first, by time")
    if not context.results:
        _say(why or "no notes found")
    elif context.no_good_match:
        _say("no good match: no note is relevant enough; the closest ones are")
    listed = _listed(context)
    for rank, item in enumerate(context.shown(len(context.results)), 1):
        place = located.get(item.path)
        where = f"  › {place.heading}" if place is not None and place.heading else ""
        date = f"  ({item.date[:10]})" if item.date else ""
        _say(f"{rank:>2}. {relevance_text(item):>5} {item.tier:<8} {item.path}{where}{date}")
        if item.path in listed:
            _say(f"      {session_line(listed[item.path])}")
        elif place is not None and place.snippet and item.explanation is not None:
            _say(f"      {place.snippet}")
        if explain and item.explanation is not None:
            for line in item.explanation.lines():
                _say(f"      {line}")
    if context.sessions:
        _say(
            f"hot     {counted(len(context.sessions), 'session')}: "
            + ", ".join(f"{s.date} {s.time}" for s in context.sessions)
        )
    if context.temporal and context.period is None:
        _say(f"recent  {counted(len(context.temporal), 'session')} in the temporal tier (companion recent lists them)")


def _say(text: str) -> None:
    print(redact_text(text))


@dataclass(frozen=True)
class BatchQuery:
    """One line of a batch file."""

    id: str
    """The caller's id, echoed back."""
    query: str
    """The question."""
    k: int | None
    """How many notes."""
    as_of: str | None
    """ISO-8601 moment."""
    scope: Scope
    """`where` of the line combined with the command line's scope."""


def read_batch(stream: TextIO, source: str, base: Scope) -> Iterator[BatchQuery | tuple[str, str]]:
    """Parse a batch file line by line: a `BatchQuery`, or (id, error message) for a line that cannot be used."""
    for number, where, obj in json_lines(stream, source):
        if isinstance(obj, str):
            yield (f"line {number}", obj)
            continue
        qid = str(obj.get("id", f"line {number}"))
        query, k, as_of = obj.get("query"), obj.get("k"), obj.get("as_of")
        if not isinstance(query, str):
            yield (qid, f"{where}: `query` must be a string")
            continue
        if not query.strip():
            yield (qid, f"{where}: `query` is empty, so it matches nothing: give words to look for")
        elif k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            yield (qid, f"{where}: `k` must be a whole number of at least 1")
        elif as_of is not None and not isinstance(as_of, str):
            yield (qid, f"{where}: `as_of` must be an ISO-8601 string")
        else:
            try:
                extra = where_from_mapping(obj.get("where"), where)
                if as_of is not None:
                    parse_as_of(as_of, f"{where}: as_of")
            except ConfigError as exc:
                yield (qid, str(exc))
                continue
            scope = Scope(base.where + extra, base.since, base.until, base.path_glob)
            yield BatchQuery(qid, query, k, as_of, scope)


def _read_batch_file(name: str, scope: Scope) -> list[BatchQuery | tuple[str, str]]:
    source = "stdin" if name == "-" else name
    try:
        if name == "-":
            return list(read_batch(sys.stdin, source, scope))
        with open(name, encoding="utf-8") as stream:
            return list(read_batch(stream, source, scope))
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read the batch file ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def _batch(engine: Recall, args: argparse.Namespace, lines: list[BatchQuery | tuple[str, str]]) -> int:
    # One pass through the model for every question, instead of one call per question.
    engine.index.embed_queries([q.query for q in lines if isinstance(q, BatchQuery)])
    failed = 0
    record = bool(args.record)
    default_as_of = parse_as_of(args.as_of)
    for entry in lines:
        if not isinstance(entry, BatchQuery):
            failed += 1
            print_json(redact_output({"id": entry[0], "error": entry[1], "results": []}))
            continue
        try:
            as_of = parse_as_of(entry.as_of) if entry.as_of else default_as_of
            context = engine.recall(entry.query, k=entry.k or args.k, as_of=as_of, scope=entry.scope)
        except CompanionError as exc:
            failed += 1
            print_json(redact_output({"id": entry.id, "error": str(exc), "results": []}))
            continue
        if record and as_of is None:
            engine.record(used(context))
        listed = context.shown(len(context.results))
        print_json(
            redact_output(
                {
                    "id": entry.id,
                    "results": [item_json(i, explain=args.explain, match=i.matches(context.floor)) for i in listed],
                    "no_good_match": context.no_good_match,
                    # The tiers of the line's own moment, as a single `recall --as-of` gives them.
                    "as_of": context.as_of.isoformat(timespec="seconds"),
                    "hot": [session_json(s) for s in context.sessions],
                    "pushed_out": [session_json(s) for s in context.pushed_out],
                    "temporal": [temporal_json(t) for t in context.temporal],
                }
            )
        )
    if failed:
        print(f"companion: {failed} of {len(lines)} batch lines failed (see their `error`)", file=sys.stderr)
        return 1
    return 0


def _listed(context: RecalledContext) -> dict[str, TemporalItem]:
    """The sessions a recall listed by time (a period's, the temporal tier's), by the path of their note."""
    return {t.path: t for t in (*context.temporal, *context.period_sessions)}


def _session(item: TemporalItem | None) -> dict[str, Any]:
    """A session listed by time, for its result's JSON: when, who, and its exchange on one line."""
    return {} if item is None else {"session": {**temporal_json(item), "line": session_line(item)}}


def _with_place(data: dict[str, Any], place: Located | None) -> dict[str, Any]:
    if place is not None:
        data["link"] = place.link
        data["heading"] = place.heading
        data["snippet"] = place.snippet
    return data
