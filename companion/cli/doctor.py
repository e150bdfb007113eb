"""`companion doctor`: which vault and why, which model and where, whether the index is healthy, and what the session
post-processors would work on (the sources found, each agent's list, when its triggers last ran)."""

from __future__ import annotations

import argparse
from typing import Any

from companion.cli.args import add_vault_arguments, open_workspace
from companion.cli.output import print_json
from companion.errors import CompanionError
from companion.locations import config_path, models_dir
from companion.pipeline.history import find_sources
from companion.pipeline.run import plan_for
from companion.pipeline.triggers import TriggerState, processor_key
from companion.words import counted
from companion.workspace import Workspace
from indexer.lock import WriterLock


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
    scan = ws.vault.scan()
    notes, chunks = ws.manifest.counts()
    holder = WriterLock(ws.data_dir).holder()
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
            "pending": len(ws.manifest.pending()),
            "skipped": [{"path": p, "reason": r} for p, r in ws.manifest.skipped()],
            "stale": len(set(scan) - {n.path for n in ws.manifest.notes()}),
        },
        "model": {"cache": str(models_dir())},
        "store": {"kind": ws.store_kind},
        "healthy": True,
        "errors": [],
    }
    try:
        embedder = ws.embedder()
        folder = getattr(embedder, "model_dir", None)
        report["model"].update({"id": embedder.model_id, "dim": embedder.dim, "path": str(folder) if folder else None})
        store = ws.store()
        ids = store.ids()
        manifest_ids = ws.manifest.chunk_ids()
        report["store"].update(
            {
                "vectors": len(ids),
                "orphans": len(ids - manifest_ids),
                "missing": len(manifest_ids - ids),
            }
        )
        if ids != manifest_ids or report["index"]["pending"]:
            report["healthy"] = False
            report["errors"].append(
                "the vector store and the manifest disagree: run `companion index` to repair, "
                "or `companion index --rebuild`"
            )
    except CompanionError as exc:
        report["healthy"] = False
        report["errors"].append(str(exc))
    report["session_history"] = session_history(ws)
    if report["session_history"]["errors"]:
        report["healthy"] = False
        report["errors"] += report["session_history"]["errors"]
    return report


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
    print(f"store     {store['kind']}")
    if "vectors" in store:
        print(f"          {store['vectors']} vectors, {store['orphans']} orphans, {store['missing']} missing")
    print(
        f"index     {counted(index['notes'], 'note')}, {counted(index['chunks'], 'chunk')}, "
        f"{index['pending']} pending, "
        f"{counted(index['stale'], 'note')} not yet indexed"
    )
    for skipped in index["skipped"]:
        print(f"          skipped: {skipped['path']}: {skipped['reason']}")
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
