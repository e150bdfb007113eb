"""When agents' processor lists run by themselves: the processor triggers, decided from a frozen clock.

Each processor spec may name a `trigger`:

- `on_startup`: once per process start (the moment the checker started is an argument);
- `on_write`: the agent's history log changed (size or modification time) since the list last ran;
- `on_schedule`: every `interval_minutes` since the list last ran (60 when not given);
- `nightly`: once per local calendar day, at the first check at or after 03:00 local time;
- `on_size_threshold`: the log is larger than `threshold_mb` MiB and changed since the list last ran.

A processor with no `trigger` never runs by itself: only `companion process`, by hand, runs it.

When any processor of an agent is due, the agent's WHOLE list runs (so an `archive` still keeps what `retain`
drops), and the run is recorded for every processor of the list. The records live in `pipeline/triggers.json`
in the vault's data directory, written atomically, and only once something has run.

Deciding is pure (`due_agents` takes the clock, the file stats and the state; `recorded_files` picks the stats a run
leaves behind); `stat_sources` and `TriggerState.load`/`save` are the only parts that touch the disk.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from pathlib import Path
from typing import Any

from companion.atomic import write_atomic
from companion.config import CompanionConfig
from companion.errors import CompanionError
from companion.locations import TRIGGERS_STATE, DataPaths, private_folder
from companion.pipeline.history import Source
from companion.pipeline.run import plan_for
from companion.specs import ProcessorSpec

STATE_FILE = TRIGGERS_STATE
"""The state file, relative to the vault's data directory."""

DEFAULT_INTERVAL_MINUTES = 60
"""The interval of `on_schedule` when a spec gives none."""

NIGHTLY_AT = time(3, 0)
"""The local time after which `nightly` fires, once a day."""

MIB = 1024 * 1024


@dataclass(frozen=True)
class FileStat:
    """One history log's size and modification time, as seen at a check or around a run."""

    path: str
    """The log file."""
    size: int
    """Its size in bytes."""
    mtime_ns: int
    """Its modification time (nanoseconds since the epoch)."""


@dataclass(frozen=True)
class Run:
    """The last run of one processor of an agent's list."""

    at: datetime
    """When it ran (timezone-aware)."""
    files: tuple[FileStat, ...]
    """The agent's logs as the run is known to have seen them (see `recorded_files`): a log that differs from these
    at a later check was written since."""


@dataclass(frozen=True)
class Due:
    """An agent whose list is due, and why."""

    agent: str
    """The agent."""
    reasons: tuple[str, ...]
    """One per due processor, such as `retain (on_write)`."""
    keys: tuple[str, ...]
    """The keys of every processor of its list (all are recorded after the run)."""


@dataclass(frozen=True)
class Check:
    """What one check found."""

    due: tuple[Due, ...]
    """The agents to run, by name."""
    problems: tuple[str, ...]
    """Agents whose list cannot run (a refused list), one message each."""


def processor_key(index: int, spec: ProcessorSpec) -> str:
    """The state key of a list's processor: its place and type, so an edited list starts fresh."""
    return f"{index}:{spec.type}"


class TriggerState:
    """The last run of every agent's processors; loaded from and saved to `pipeline/triggers.json`."""

    def __init__(self, path: Path | None = None, runs: dict[str, dict[str, Run]] | None = None) -> None:
        """A state saved to `path` (never saved when none), starting from `runs`."""
        self.path = path
        """The JSON file, or none for a state kept in memory only."""
        self.runs: dict[str, dict[str, Run]] = runs if runs is not None else {}
        """Agent -> processor key -> its last run."""

    @classmethod
    def load(cls, data_dir: Path) -> TriggerState:
        """The state of a vault's data directory; empty when the file is missing or unreadable."""
        path = DataPaths(data_dir).triggers
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            # A missing or damaged file only means every trigger starts fresh; processing is safe to repeat.
            return cls(path)
        runs: dict[str, dict[str, Run]] = {}
        agents = raw.get("agents") if isinstance(raw, dict) else None
        for agent, keys in (agents or {}).items():
            for key, record in keys.items():
                run = _run_from_json(record)
                if run is not None:
                    runs.setdefault(agent, {})[key] = run
        return cls(path, runs)

    def last(self, agent: str, key: str) -> Run | None:
        """The last run of one processor of an agent, if any."""
        return self.runs.get(agent, {}).get(key)

    def record(self, agent: str, keys: tuple[str, ...], run: Run) -> None:
        """Note that `agent`'s list ran: every processor in `keys` gets `run`."""
        self.runs.setdefault(agent, {}).update({key: run for key in keys})

    def save(self) -> None:
        """Write the state atomically (creating `pipeline/`); nothing happens for an in-memory state."""
        if self.path is None:
            return
        data = {
            "version": 1,
            "agents": {
                agent: {key: _run_to_json(run) for key, run in sorted(keys.items())}
                for agent, keys in sorted(self.runs.items())
            },
        }
        private_folder(self.path.parent)
        write_atomic(self.path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))


def _run_to_json(run: Run) -> dict[str, Any]:
    return {
        "at": run.at.isoformat(),
        "files": [{"path": f.path, "size": f.size, "mtime_ns": f.mtime_ns} for f in run.files],
    }


def _run_from_json(record: Any) -> Run | None:
    try:
        at = datetime.fromisoformat(record["at"])
        files = tuple(FileStat(str(f["path"]), int(f["size"]), int(f["mtime_ns"])) for f in record["files"])
    except (KeyError, TypeError, ValueError):
        return None
    return Run(at, files) if at.tzinfo is not None else None


def stat_sources(sources: list[Source]) -> dict[str, tuple[FileStat, ...]]:
    """Each agent's logs as they are now (a log that vanished since it was found is left out); a session-notes
    folder counts as one file, see `_stat_notes`."""
    out: dict[str, list[FileStat]] = {}
    for source in sources:
        try:
            stat = _stat_notes(source.path) if source.notes else _stat_file(source.path)
        except OSError:
            continue
        out.setdefault(source.agent, []).append(stat)
    return {agent: tuple(sorted(files, key=lambda f: f.path)) for agent, files in out.items()}


def _stat_file(path: Path) -> FileStat:
    info = os.stat(path)
    return FileStat(str(path), info.st_size, info.st_mtime_ns)


def _stat_notes(folder: Path) -> FileStat:
    """A session-notes folder as one file: the notes' total size and the newest change among the notes and their
    day folders (a note removed changes its folder's time), so a note written, edited or removed is a write."""
    size, newest = 0, os.stat(folder).st_mtime_ns
    with os.scandir(folder) as days:
        for day in days:
            if not day.is_dir(follow_symlinks=False):
                continue
            newest = max(newest, day.stat().st_mtime_ns)
            with os.scandir(day.path) as notes:
                for note in notes:
                    if note.name.endswith(".md") and note.is_file():
                        info = note.stat()
                        size += info.st_size
                        newest = max(newest, info.st_mtime_ns)
    return FileStat(str(folder), size, newest)


def recorded_files(
    before: tuple[FileStat, ...], after: tuple[FileStat, ...], rewritten: Collection[str]
) -> tuple[FileStat, ...]:
    """The logs to record for a run, from their stats just `before` and just `after` it.

    Each log is recorded as it was before the run, the state the run read from at the earliest, so a write that lands
    while it runs or right after it still differs at the next check and makes `on_write` fire again. Only the logs
    in `rewritten` (paths of logs the run rewrote itself and that hold exactly what it wrote) are recorded as after
    it, so the run's own rewrite is not taken for a write. A log that appeared during the run is left out: it counts
    as changed at the next check.
    """
    now = {f.path: f for f in after}
    return tuple(now[f.path] if f.path in rewritten and f.path in now else f for f in before)


def _nightly_day(moment: datetime, tz: tzinfo | None) -> date:
    # The local day whose 03:00 last passed: a run at 01:00 still belongs to the previous night.
    local = moment.astimezone(tz).replace(tzinfo=None)
    return (local - timedelta(hours=NIGHTLY_AT.hour, minutes=NIGHTLY_AT.minute)).date()


def is_due(
    spec: ProcessorSpec,
    last: Run | None,
    files: tuple[FileStat, ...],
    now: datetime,
    *,
    started: datetime,
    tz: tzinfo | None = None,
) -> bool:
    """Whether one processor's trigger fires at `now`, given its last run and the agent's logs now.

    A processor that never ran counts as changed (`on_write`) and as overdue (`on_schedule`); `nightly` still
    waits for 03:00. `tz` is the local time zone of `nightly` (the system's when none).
    """
    trigger = spec.trigger
    if trigger is None:
        return False
    changed = last is None or last.files != files
    if trigger == "on_startup":
        return last is None or last.at < started
    if trigger == "on_write":
        return changed
    if trigger == "on_schedule":
        interval = timedelta(minutes=spec.interval_minutes or DEFAULT_INTERVAL_MINUTES)
        return last is None or now - last.at >= interval
    if trigger == "nightly":
        local = now.astimezone(tz)
        if local.time() < NIGHTLY_AT:
            return False
        return last is None or _nightly_day(last.at, tz) < local.date()
    if trigger == "on_size_threshold":
        limit = (spec.threshold_mb or 0) * MIB
        # Only after a change too: a list that cannot shrink the log below the limit must not run every check.
        return changed and any(f.size > limit for f in files)
    raise ValueError(f"unknown trigger {trigger!r}")


def due_agents(
    config: CompanionConfig,
    stats: Mapping[str, tuple[FileStat, ...]],
    state: TriggerState,
    now: datetime,
    *,
    started: datetime,
    tz: tzinfo | None = None,
    config_source: str = "companion.yaml",
) -> Check:
    """The agents (those with logs in `stats`) whose list is due at `now`; `now` and `started` are timezone-aware."""
    if now.tzinfo is None or started.tzinfo is None:
        raise ValueError("now and started must be timezone-aware")
    due: list[Due] = []
    problems: list[str] = []
    for agent in sorted(stats):
        try:
            plan = plan_for(config, agent, config_source)
        except CompanionError as exc:
            problems.append(str(exc))
            continue
        keys = tuple(processor_key(i, spec) for i, spec in enumerate(plan.specs))
        reasons = tuple(
            f"{spec.type} ({spec.trigger})"
            for key, spec in zip(keys, plan.specs, strict=True)
            if is_due(spec, state.last(agent, key), stats[agent], now, started=started, tz=tz)
        )
        if reasons:
            due.append(Due(agent, reasons, keys))
    return Check(tuple(due), tuple(problems))
