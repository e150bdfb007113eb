"""The background thread of `companion index --watch` that runs agents' processor lists when their triggers fire.

It runs beside the note watcher, never in it, so indexing is never delayed by a long run. It checks every
`interval_s` seconds and whenever it is poked (the watcher pokes it after each batch); it stats the history logs
itself, since they may sit in dot-folders or outside the index's globs, where the note watcher sees nothing. An
error in a run is reported and the agent is tried again after `retry_s`; it never stops the thread or the watcher.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, tzinfo
from pathlib import Path

from companion.config import CompanionConfig
from companion.errors import HistoryError
from companion.pipeline.history import find_sources, read_log
from companion.pipeline.run import AgentReport, process_vault
from companion.pipeline.triggers import Due, Run, TriggerState, due_agents, recorded_files, stat_sources
from companion.vault.audit import AuditLog

log = logging.getLogger("companion.pipeline.triggers")

INTERVAL_S = 30.0
"""Seconds between two checks by default."""

RETRY_S = 300.0
"""Seconds before an agent whose run failed is tried again (its triggers stay due meanwhile)."""

OnRun = Callable[[Due, list[AgentReport]], None]
"""Called after each run with why it ran and what it did."""

OnError = Callable[[str, Exception], None]
"""Called with the agent (or an empty name for the check itself) and the error."""


class AutoProcessor:
    """Checks the triggers in a thread of its own and runs `process_vault(..., agent=X)` for each due agent."""

    def __init__(
        self,
        vault_root: Path,
        config: CompanionConfig,
        data_dir: Path,
        *,
        clock: Callable[[], datetime],
        on_run: OnRun,
        on_error: OnError,
        interval_s: float = INTERVAL_S,
        retry_s: float = RETRY_S,
        tz: tzinfo | None = None,
        config_source: str = "companion.yaml",
    ) -> None:
        """Set up; nothing runs until `start` (or `check`). `clock` returns timezone-aware moments."""
        self.vault_root = vault_root
        self.config = config
        self.data_dir = data_dir
        self.clock = clock
        self.on_run = on_run
        self.on_error = on_error
        self.interval_s = interval_s
        self.retry_s = retry_s
        self.tz = tz
        self.config_source = config_source
        self.state = TriggerState.load(data_dir)
        self.started = clock()
        self._failed: dict[str, datetime] = {}
        self._reported: set[str] = set()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread (a daemon: a run cut short at exit leaves the log whole, rewrites being atomic)."""
        self._thread = threading.Thread(target=self._loop, name="companion-triggers", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        """Check soon, without waiting for the interval."""
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> bool:
        """Ask the thread to stop and wait up to `timeout` seconds; False when a run is still going."""
        self._stop.set()
        self._wake.set()
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.check()
            except Exception as exc:  # noqa: BLE001 - a bug here must never take the watcher down with it
                self.on_error("", exc)
            self._wake.wait(self.interval_s)
            self._wake.clear()

    def check(self) -> list[Due]:
        """One check: run every due agent's whole list and record it; return the agents that ran."""
        now = self.clock()
        sources = find_sources(self.vault_root, self.config.session_history.sources, self.config.sessions.folder)
        result = due_agents(
            self.config,
            stat_sources(sources),
            self.state,
            now,
            started=self.started,
            tz=self.tz,
            config_source=self.config_source,
        )
        for problem in result.problems:
            if problem not in self._reported:  # a refused list stays refused: say it once, not every check
                self._reported.add(problem)
                self.on_error("", ValueError(problem))
        ran: list[Due] = []
        for due in result.due:
            if self._stop.is_set():
                break
            failed = self._failed.get(due.agent)
            if failed is not None and (now - failed).total_seconds() < self.retry_s:
                continue
            mine = [s for s in sources if s.agent == due.agent]
            # Before the run: what it reads at the earliest, so what lands during or after it still shows as a write.
            before = stat_sources(mine).get(due.agent, ())
            try:
                reports = process_vault(
                    self.vault_root,
                    self.config,
                    now,
                    agent=due.agent,
                    audit=AuditLog(self.data_dir),
                    config_source=self.config_source,
                )
            except Exception as exc:  # noqa: BLE001 - reported, retried later; a failed run leaves the log whole
                self._failed[due.agent] = now
                self.on_error(due.agent, exc)
                continue
            self._failed.pop(due.agent, None)
            # Stat before looking at what the logs hold: a write after this stat then shows at the next check.
            after = stat_sources(mine).get(due.agent, ())
            rewritten = {str(report.source) for report in reports if _holds_what_the_run_wrote(report)}
            self.state.record(due.agent, due.keys, Run(now, recorded_files(before, after, rewritten)))
            self.state.save()
            ran.append(due)
            self.on_run(due, reports)
        return ran


def _holds_what_the_run_wrote(report: AgentReport) -> bool:
    """Whether the run rewrote this log and nothing was written to it since: then its stats after the run are the
    run's own doing. Entries appended during the run were carried over unprocessed, and any appended after it add to
    the count of entries the run kept; either way the log must count as written at the next check."""
    # The pipeline rewrites a log exactly when one of these is not empty; were they ever to disagree, the cost is one
    # extra run, never a missed write.
    if not (report.dropped or report.replaced or report.archives or report.derived) or report.appended:
        return False
    try:
        # A session-notes folder is no log: it counts as written, and one extra run settles it.
        log = read_log(report.source, report.agent)
    except HistoryError:
        return False
    return len(log.entries) == report.kept
