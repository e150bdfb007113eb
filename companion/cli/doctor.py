"""`companion doctor`: which vault and why, which model and where, whether the index is healthy (its vectors, the
vector-index files, the full-text index against the notes), and what the session post-processors would work on
(the sources found, each agent's list, when its triggers last ran)."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from companion.cli.args import add_vault_arguments, open_workspace
from companion.cli.output import print_json
from companion.errors import CompanionError, StoreError
from companion.locations import config_path, models_dir
from companion.pipeline.history import find_sources
from companion.pipeline.run import plan_for
from companion.pipeline.triggers import TriggerState, processor_key
from companion.vault.audit import AuditLog
from companion.words import counted
from companion.workspace import Workspace
from indexer import fulltext
from indexer.lock import WriterLock
from indexer.remote import StoreUnavailable
from indexer.repair import health_lines, record_damage, sqlite_damage
from indexer.storefiles import damaged_files


def register(sub: Any) -> None:
    """Add the `doctor` subcommand."""
    p = sub.add_parser("doctor", help="say which vault, which model, and how healthy the index is")
    add_vault_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when the index matches the manifest, 1 when something needs attention."""
    ws = open_workspace(args)
    try:
        report = diagnose(ws)
    finally:
        ws.close()
    if args.json:
        print_json(report)
    else:
        _print(report)
    return 0 if report["healthy"] else 1


def diagnose(ws: Workspace) -> dict[str, Any]:
    """Everything doctor knows, as a JSON-ready dict."""
    damaged = sqlite_damage(ws.paths.manifest)
    if damaged is not None:
        # Nothing else can be read through a damaged manifest: say that, and the one repair.
        return {
            "vault": {"path": str(ws.root), "rule": ws.location.rule, "detail": ws.location.detail},
            "data_dir": str(ws.data_dir),
            "healthy": False,
            "errors": [
                f"the manifest ({ws.paths.manifest.name}) is damaged ({damaged}): run `companion index --rebuild` "
                "to build the index again from the vault"
            ],
        }
    # Before the manifest is opened here: opening creates a dropped full-text table again, empty.
    words = _fulltext_health(ws)
    scan = ws.vault.scan()
    notes, chunks = ws.manifest.counts()
    holder = WriterLock(ws.data_dir).holder() if WriterLock.held(ws.data_dir) else None
    skipped = ws.manifest.skipped()
    known = ws.manifest.stats()
    # A skipped file counts as read while it is as the index read it; changed since (fixed, say), it waits again.
    refused = {
        p for p, _ in skipped if (stat := scan.get(p)) is not None and known.get(p) == (stat.mtime_ns, stat.size)
    }
    report: dict[str, Any] = {
        "vault": {
            "path": str(ws.root),
            "rule": ws.location.rule,
            "detail": ws.location.detail,
            "indexable_notes": len(scan),
            "problems": [{"path": p, "reason": r} for p, r in ws.vault.problems],
        },
        "config": {"path": str(config_path(ws.root)), "exists": config_path(ws.root).exists()},
        "data_dir": str(ws.data_dir),
        "writer": holder,
        "index": {
            "notes": notes,
            "chunks": chunks,
            "pending": len(ws.manifest.queue.pending()),
            "to_embed": ws.manifest.queue.unembedded_totals()[0],
            "skipped": [{"path": p, "reason": r} for p, r in skipped],
            # Indexed, yet with something for the user to fix (properties read line by line): not unhealthy.
            "problems": [{"path": p, "reason": r} for p, r in ws.manifest.problems()],
            # A summary left out as boilerplate was read and judged: it is indexed as far as it ever will be; and a
            # skipped file was read and refused, which the lines of `skipped` say, not "not yet indexed".
            "stale": len(
                set(scan) - {n.path for n in ws.manifest.notes()} - ws.manifest.stats_of_chatter().keys() - refused
            ),
        },
        "fulltext": words,
        "model": {"cache": str(models_dir())},
        "store": {"kind": ws.store_kind},
        "healthy": True,
        "errors": [],
    }
    if words["problems"]:
        report["healthy"] = False
        report["errors"] += words["problems"]
    try:
        choice = ws.model_choice()  # before the model loads: a model that fails to load is still explained
        if choice is not None:
            report["model"].update(chosen_because=choice.reason, hint=choice.hint)
        embedder = ws.embedder()
        folder = getattr(embedder, "model_dir", None)
        report["model"].update({"id": embedder.model_id, "dim": embedder.dim, "path": str(folder) if folder else None})
        report["store"].update(_store_health(ws))
        if report["store"]["problems"]:
            report["healthy"] = False
            report["errors"] += report["store"]["problems"]
        elif report["index"]["pending"] and not report["writer"]:
            report["healthy"] = False
            report["errors"].append("an interrupted run left writes to undo: run `companion index` to repair")
    except CompanionError as exc:
        report["healthy"] = False
        report["errors"].append(str(exc))
    for name, path, repair in (
        ("the manifest", ws.paths.manifest, "run `companion index --rebuild`"),
        (
            "the access statistics store",
            ws.paths.access,
            "run `companion index`: it sets the file aside and starts afresh",
        ),
    ):
        reason = sqlite_damage(path)
        if reason is not None:
            report["healthy"] = False
            report["errors"].append(f"{name} ({path.name}) is damaged ({reason}): {repair}")
    try:
        report["audit"] = {"entries": len(AuditLog(ws.data_dir).entries())}
    except CompanionError as exc:
        report["healthy"] = False
        report["errors"].append(str(exc))
    if report["errors"] and holder:
        # Every repair writes the index, which that process holds: it comes first.
        report["errors"].append(
            f"pid {holder.get('pid')} (`{holder.get('purpose')}`) holds the index: stop it (if it hangs, "
            f"`kill {holder.get('pid')}`), then make the repair"
        )
    report["session_history"] = session_history(ws)
    if report["session_history"]["errors"]:
        report["healthy"] = False
        report["errors"] += report["session_history"]["errors"]
    return report


def _fulltext_health(ws: Workspace) -> dict[str, Any]:
    """The full-text index against the manifest's notes, row by row, and FTS5's own check of its index; a failure of
    that check is recorded for the next `companion index` (which does not repeat it: 8 s at 50k notes)."""
    if not ws.paths.manifest.exists():
        return fulltext.FulltextHealth(0, 0).as_dict()
    health = fulltext.file_health(ws.paths.manifest)
    if health.broken:
        record_damage(ws.paths, [], fulltext=health.broken)
    return health.as_dict()


def _store_health(ws: Workspace) -> dict[str, Any]:
    """Every vector read back and compared with the manifest, by whichever process holds the store."""
    if not ws.chroma_url:
        damaged = damaged_files(ws.paths.chroma, deep=True)
        if damaged:
            return {
                "problems": [
                    f"the vector index files are damaged ({'; '.join(damaged)}): run `companion index` to repair "
                    "them (every chunk is embedded again)"
                ]
            }
        if not ws.paths.chroma.exists() and ws.manifest.queue.embedded_count():
            return {
                "vectors": 0,
                "missing": ws.manifest.queue.embedded_count(),
                "problems": [
                    f"the vector store folder {ws.paths.chroma} is missing: run `companion index` to embed every "
                    "chunk again"
                ],
            }
    try:
        health = ws.store().health(sorted(ws.manifest.queue.embedded_ids()))
    except StoreUnavailable:
        raise
    except StoreError as exc:
        if ws.chroma_url:
            raise
        record_damage(ws.paths, [], whole=str(exc))
        return {
            "problems": [
                f"the vector store is damaged ({exc}): run `companion index` to repair it (every chunk is "
                "embedded again)"
            ]
        }
    writing = not ws.owner.owned and WriterLock.held(ws.data_dir)
    if writing:
        # Another process is writing: vectors of its current batch are in the store before the manifest names
        # them, a chunk it replaces may go between two reads, and a batch may be embedded between the manifest's
        # read and the store's. Only what cannot be in flight, read again after the check, counts as damage.
        in_flight = set(ws.manifest.queue.pending())
        expected = ws.manifest.queue.embedded_ids()
        health = dataclasses.replace(
            health,
            orphans=[i for i in health.orphans if i not in in_flight and i not in expected],
            missing=[i for i in health.missing if i not in in_flight and i in expected],
            unreadable=[i for i in health.unreadable if i not in in_flight and i in expected],
        )
    record_damage(ws.paths, health.unreadable)
    return {
        "vectors": health.vectors,
        "orphans": len(health.orphans),
        "missing": len(health.missing),
        "unreadable": len(health.unreadable),
        "checked_by": "this process" if ws.owner.owned or ws.chroma_url else "the process writing the index",
        "problems": health_lines(health),
    }


def session_history(ws: Workspace) -> dict[str, Any]:
    """The sources the config's `session_history` finds, each agent's processor list and its triggers' last runs."""
    out: dict[str, Any] = {"sources": [], "agents": [], "errors": []}
    config = ws.config
    if not config.session_history.sources:
        return out
    state = TriggerState.load(ws.data_dir)
    try:
        sources = find_sources(ws.root, config.session_history.sources, config.sessions.folder)
    except CompanionError as exc:
        out["errors"].append(str(exc))
        return out
    for source in sources:
        try:
            size = (
                sum(p.stat().st_size for p in source.path.rglob("*.md")) if source.notes else source.path.stat().st_size
            )
        except OSError:
            size = None
        out["sources"].append({"agent": source.agent, "path": str(source.path), "notes": source.notes, "bytes": size})
    for agent in sorted({s.agent for s in sources}):
        try:
            plan = plan_for(config, agent, str(config_path(ws.root)))
        except CompanionError as exc:
            out["errors"].append(str(exc))
            continue
        processors = []
        for index, spec in enumerate(plan.specs):
            last = state.last(agent, processor_key(index, spec))
            processors.append(
                {"type": spec.type, "trigger": spec.trigger, "last_run": last.at.isoformat() if last else None}
            )
        out["agents"].append({"agent": agent, "own_list": plan.own_list, "processors": processors})
    return out


def _print(report: dict[str, Any]) -> None:
    if "index" not in report:  # the manifest could not be read: only where, and what is wrong
        print(f"vault     {report['vault']['path']}")
        print(f"data      {report['data_dir']}")
        for error in report["errors"]:
            print(f"error     {error}")
        print("NOT healthy")
        return
    vault, index, store, model = report["vault"], report["index"], report["store"], report["model"]
    print(f"vault     {vault['path']}")
    print(f"          {vault['detail']}")
    print(f"          {vault['indexable_notes']} indexable notes")
    for problem in vault["problems"]:
        print(f"          problem: {problem['path']}: {problem['reason']}")
    cfg = report["config"]
    print(f"config    {cfg['path']}{'' if cfg['exists'] else ' (absent: defaults)'}")
    print(f"data      {report['data_dir']}")
    print(f"model     {model.get('id', '?')} ({model.get('dim', '?')} dims) from {model.get('path') or model['cache']}")
    if model.get("chosen_because"):
        print(f"          chosen for this vault: {model['chosen_because']}")
    if model.get("hint"):
        print(f"          {model['hint']}")
    print(f"store     {store['kind']}")
    if "vectors" in store:
        print(
            f"          {store['vectors']} vectors, {store.get('orphans', 0)} orphans, {store.get('missing', 0)} "
            f"missing, {store.get('unreadable', 0)} unreadable (every vector read back)"
        )
    print(
        f"index     {counted(index['notes'], 'note')}, {counted(index['chunks'], 'chunk')}, "
        f"{index['pending']} pending, "
        f"{counted(index['stale'], 'note')} not yet indexed"
        + (f", {counted(index['to_embed'], 'chunk')} still to embed (`companion index`)" if index["to_embed"] else "")
    )
    for skipped in index["skipped"]:
        print(f"          skipped: {skipped['path']}: {skipped['reason']}")
    for problem in index["problems"]:
        print(f"          problem: {problem['path']}: {problem['reason']}")
    words = report["fulltext"]
    if words["rows"] is not None:
        checked = "its index checked" if words["index_checked"] else "its index not checked (being written)"
        rows, notes = counted(words["rows"], "row"), counted(words["notes"], "note")
        print(f"words     {rows} for {notes} in the full-text index, {checked}")
    if report["writer"]:
        writer = report["writer"]
        print(f"writer    pid {writer.get('pid')} ({writer.get('purpose')})")
    history = report.get("session_history") or {}
    for source in history.get("sources", []):
        size = f"{source['bytes'] / 2**20:.1f} MiB" if source["bytes"] is not None else "unreadable"
        kind = "session notes" if source["notes"] else "log"
        print(f"history   {source['agent']}: {kind} {source['path']} ({size})")
    for agent in history.get("agents", []):
        steps = ", ".join(
            p["type"] + (f" [{p['trigger']}, last {p['last_run'] or 'never'}]" if p["trigger"] else "")
            for p in agent["processors"]
        )
        print(
            f"          {agent['agent']} ({'own list' if agent['own_list'] else 'default list'}): {steps or 'nothing'}"
        )
    for error in report["errors"]:
        print(f"error     {error}")
    print("healthy" if report["healthy"] else "NOT healthy")
