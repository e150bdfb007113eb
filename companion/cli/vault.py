"""`companion vault search|read|list|links|graph|timeline` and `companion memory query`: the agent API from a shell.

The same calls the MCP server's tools make, with the same checks: a bad argument exits 2 naming it (as JSON on
stdout with `--json`, so a script reading JSON gets JSON either way). What they print is redacted as an agent is
shown it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from companion.agent.api import MEMORY_MODES, AgentApi
from companion.agent.views import no_good_match
from companion.agent.writes import MEMORY_TYPES, AgentWriter, WriteSource
from companion.cli.args import add_vault_arguments, open_workspace, sync_first
from companion.cli.output import print_json
from companion.recall.scope import parse_where
from companion.secrets import redact_output
from companion.words import counted


def register(sub: Any) -> None:
    """Add the `vault` and `memory` subcommands."""
    vault = sub.add_parser("vault", help="search, read, list and follow the vault's notes as an agent does")
    add_vault_arguments(vault)
    verbs = vault.add_subparsers(dest="verb", metavar="VERB", required=True)

    p = _verb(verbs, "search", "hybrid recall with the decay, as vault_search")
    p.add_argument("query", help="what to look for")
    p.add_argument("-k", "--k", type=int, default=10, help="how many notes (default 10)")
    p.add_argument("--where", action="append", default=[], metavar="FIELD=VALUE", help="frontmatter filter")
    p.add_argument("--since", help="first day of the note's date")
    p.add_argument("--until", help="last day of the note's date")
    p.add_argument("--path", help="a glob on the vault path")
    p.add_argument("--as-of", help="answer as if at this ISO moment")
    p.add_argument(
        "--no-record",
        action="store_true",
        help="do not count the notes read or put in a context as used (a search never counts)",
    )
    p.set_defaults(run=_run(_search))

    p = _verb(verbs, "read", "one note whole, with its links and backlinks")
    p.add_argument("note", help="a vault path, a title or an alias")
    p.set_defaults(run=_run(lambda api, a: api.read(a.note).as_json(), _print_note))

    p = _verb(verbs, "list", "notes in a folder, of a type, with a tag, within dates; newest first")
    p.add_argument("--folder", help="a vault folder")
    p.add_argument("--type", dest="note_type", help="a frontmatter type")
    p.add_argument("--tag", help="a tag of the tags property")
    p.add_argument("--since", help="first day of the note's date")
    p.add_argument("--until", help="last day of the note's date")
    p.add_argument("--limit", type=int, default=100, help="most notes (default 100)")
    p.set_defaults(run=_run(_list, _print_list))

    p = _verb(verbs, "links", "a note's links (unresolved ones marked) and backlinks")
    p.add_argument("note", help="a vault path, a title or an alias")
    p.set_defaults(run=_run(lambda api, a: api.links(a.note).as_json(), _print_links))

    p = _verb(verbs, "graph", "every note within some links of one, and the links among them")
    p.add_argument("note", help="a vault path, a title or an alias")
    p.add_argument("--hops", type=int, default=2, help="how far (1-4, default 2)")
    p.set_defaults(run=_run(lambda api, a: api.graph(a.note, a.hops).as_json(), _print_graph))

    p = _verb(verbs, "timeline", "sessions and dated notes before and after a day, a moment or a note (default: now)")
    p.add_argument("--date", help="a day (2026-10-05) or a moment (2026-10-05T14:00)")
    p.add_argument("--note", help="a note (path, title or alias) to put in its time")
    p.add_argument("--before", type=int, default=5, help="entries before it (0-50, default 5)")
    p.add_argument("--after", type=int, default=5, help="entries after it (0-50, default 5)")
    p.add_argument("--days", type=int, default=30, help="how many days either side to look (default 30)")
    p.set_defaults(run=_run(_timeline, _print_timeline))

    p = _verb(
        verbs, "write", "write a note by title, or update the note with that title (agent rules: dedupe, budgets)"
    )
    p.add_argument("title", help="the note's title (a name, not a path)")
    p.add_argument("--content", help="the Markdown body (else read from standard input)")
    p.add_argument("--folder", help="where a new note goes (default: agent_writes.notes_folder)")
    p.add_argument("--type", dest="note_type", help="its frontmatter type")
    p.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")
    p.add_argument("--ignore-dedupe", action="store_true", help="write even when another note holds the same text")
    p.set_defaults(run=_run(_write, _print_written))

    p = _verb(verbs, "delete", "move a note to Obsidian's trash (undo with `companion undo`)")
    p.add_argument("note", help="a vault path, a title or an alias")
    p.set_defaults(run=_run(lambda api, a: _writer(api).delete(a.note).as_json(), _print_written))

    p = _verb(sub, "remember", "write a typed memory note (type, confidence, source, tags)")
    p.add_argument("type", choices=MEMORY_TYPES, help="the kind of memory")
    p.add_argument("text", help="the memory")
    p.add_argument("--title", help="its title (default: its first words)")
    p.add_argument("--confidence", type=float, help="0 to 1")
    p.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")
    p.add_argument("--session", help="the session note it came from")
    p.add_argument("--ignore-dedupe", action="store_true", help="write even when another note holds the same text")
    p.set_defaults(run=_run(_remember, _print_written))

    memory = sub.add_parser("memory", help="query memory by one retrieval path (exact, type, lexical, hybrid or graph)")
    add_vault_arguments(memory)
    verbs = memory.add_subparsers(dest="verb", metavar="VERB", required=True)
    p = _verb(verbs, "query", "exact, type, lexical, hybrid or graph")
    p.add_argument("mode", choices=MEMORY_MODES, help="the retrieval path")
    p.add_argument("query", help="a title or alias (exact, graph), a type (type), or words (lexical, hybrid)")
    p.add_argument("-k", "--k", type=int, default=10, help="how many notes (default 10)")
    p.set_defaults(run=_run(_memory))


def _verb(verbs: Any, name: str, help: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = verbs.add_parser(name, help=help)
    add_vault_arguments(p, verb=True)
    p.add_argument("--no-sync", action="store_true", help="use the index as it is")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _run(
    work: Callable[[AgentApi, argparse.Namespace], dict[str, Any]],
    show: Callable[[dict[str, Any]], None] | None = None,
) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        ws = open_workspace(args)
        try:
            sync_first(ws, args)
            api = AgentApi(ws, record=not getattr(args, "no_record", False))
            # The agent API redacts what it reads; a write's answer names what was written, redacted here.
            data = redact_output(work(api, args))
        finally:
            ws.close()
        if args.json:
            print_json(data)
        else:
            (show or _print_found)(data)
        return 0

    return run


def _found(items: Any) -> list[dict[str, Any]]:
    return [f.as_json() for f in items]


def _search(api: AgentApi, args: argparse.Namespace) -> dict[str, Any]:
    where = dict(parse_where(args.where)) if args.where else None
    found = api.search(
        args.query, k=args.k, where=where, since=args.since, until=args.until, path=args.path, as_of=args.as_of
    )
    return {"results": _found(found), "no_good_match": no_good_match(found)}


def _writer(api: AgentApi) -> AgentWriter:
    # A command the user typed is an explicit write: allowed, under the same checks, budgets and audit as an agent's.
    return AgentWriter(api.workspace, WriteSource("cli"), allowed=True)


def _write(api: AgentApi, args: argparse.Namespace) -> dict[str, Any]:
    content = args.content if args.content is not None else sys.stdin.read()
    done = _writer(api).write(
        args.title,
        content,
        folder=args.folder,
        note_type=args.note_type,
        tags=args.tag,
        ignore_dedupe=args.ignore_dedupe,
    )
    return done.as_json()


def _remember(api: AgentApi, args: argparse.Namespace) -> dict[str, Any]:
    done = _writer(api).remember(
        args.type,
        args.text,
        title=args.title,
        confidence=args.confidence,
        tags=args.tag,
        session=args.session,
        ignore_dedupe=args.ignore_dedupe,
    )
    return done.as_json()


def _print_written(data: dict[str, Any]) -> None:
    where = f" -> {data['moved_to']}" if data.get("moved_to") else ""
    print(f"{data['action']} {data['path']}{where}  (undo: companion undo {data['audit_entry']})")
    for target in data["unresolved_links"]:
        print(f"  unresolved link: [[{target}]]")


def _memory(api: AgentApi, args: argparse.Namespace) -> dict[str, Any]:
    found = api.memory_query(args.mode, args.query, k=args.k)
    return {"mode": args.mode, "results": _found(found), "no_good_match": no_good_match(found)}


def _list(api: AgentApi, args: argparse.Namespace) -> dict[str, Any]:
    notes = api.list_notes(
        folder=args.folder, note_type=args.note_type, tag=args.tag, since=args.since, until=args.until, limit=args.limit
    )
    return {"notes": [n.as_json() for n in notes]}


def _timeline(api: AgentApi, args: argparse.Namespace) -> dict[str, Any]:
    line = api.timeline(date=args.date, note=args.note, before=args.before, after=args.after, days=args.days)
    return line.as_json()


def _print_timeline(data: dict[str, Any]) -> None:
    anchor = data["anchor"]
    print(f"around {anchor['note'] or anchor['when']}  ({anchor['source']}: {anchor['when']}, ±{data['days']} days)")
    if not data["entries"]:
        print("nothing happened then")
    marks = {"before": " ", "at": ">", "after": " "}
    for n, e in enumerate(data["entries"], 1):
        print(f"{marks[e['position']]}{n:>2}. {e['when']:<16}  {e['kind']:<7}  {e['path']}")
        if e["summary"]:
            print(f"       {e['summary']}")


def _print_found(data: dict[str, Any]) -> None:
    results = data["results"]
    if not results:
        print("nothing found")
    elif data.get("no_good_match"):
        print("no good match: no note is relevant enough; the closest ones are")
    for n, r in enumerate(results, 1):
        # Recall's own results carry their relevance (one scale for every question); the other retrieval paths
        # (exact, type, lexical, graph) rank by a score of their own.
        shown = r["relevance"] if r.get("relevance") is not None else r["score"]
        print(f"{n:>2}. {shown:.3f} {r['tier']:<8} {r['path']}" + (f"  ({r['date'][:10]})" if r["date"] else ""))
        snippet = " ".join(r["snippet"].split())
        if snippet:
            print(f"      {snippet[:200]}")


def _print_note(data: dict[str, Any]) -> None:
    print(data["path"])
    for key, value in data["frontmatter"].items():
        print(f"  {key}: {value}")
    print()
    print(data["body"].rstrip())
    print()
    _print_links(data)


def _print_links(data: dict[str, Any]) -> None:
    links = data.get("links", data.get("outgoing", []))
    print(f"links to ({len(links)})")
    for link in links:
        print(f"  -> {link['path']}" if link["resolved"] else f"  -> [[{link['target']}]]  (unresolved)")
    print(f"linked from ({len(data['backlinks'])})")
    for path in data["backlinks"]:
        print(f"  <- {path}")


def _print_list(data: dict[str, Any]) -> None:
    if not data["notes"]:
        print("no notes")
    for n in data["notes"]:
        print(f"{(n['date'] or '')[:10]:<10}  {n['type'] or '':<12}  {n['path']}")


def _print_graph(data: dict[str, Any]) -> None:
    for node in data["nodes"]:
        print(f"{'  ' * node['hops']}{node['path']}" + (f"  ({counted(node['hops'], 'hop')})" if node["hops"] else ""))
    print(f"{counted(len(data['edges']), 'link')} among them")
