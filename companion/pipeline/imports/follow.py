"""Following agents' sessions as they are written (`imports.follow`): the thread `companion index --watch` and the app
run beside their note watcher.

Once the watch of each agent's sessions folder is live, everything that changed since the last import is imported (the
catch-up); after that, each burst of changes to an agent's transcripts becomes one import of that agent. An import
stats every session but reads only those whose files changed, so a running session costs one read of its own
transcript and one rewrite of its own note, which the note watcher then indexes like any other note. A transcript is
appended many times a second while its agent works: changes are gathered for `quiet_ms` after the last one, and for at
most `gather_ms` while they keep coming, so the note trails the agent by a second or two and is rewritten at most once
per `gather_ms`.

Errors never stop the thread: a failed import is reported and tried again on the next change; a damaged line is
reported once (naming the file and line), an unfinished last line not at all, as the agent is still writing it. A
sessions folder that does not exist yet is said once, and followed as soon as it appears.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import watchfiles

from companion.config import ImportsConfig
from companion.pipeline.imports.records import INCOMPLETE_LINE
from companion.pipeline.imports.run import AGENT_NAMES, ImportReport, ImportRequest, default_root, import_sessions

log = logging.getLogger("companion.pipeline.imports")

QUIET_MS = 300
"""How long a transcript must be left alone before its session is imported."""
GATHER_MS = 2000
"""The longest changes are gathered while an agent keeps writing."""
LOOK_S = 1.0
"""How often a sessions folder that does not exist yet is looked for."""
RETRY_S = 5.0
"""After the watch itself failed (a folder removed under it, the system's watch limit), before watching again."""


@dataclass(frozen=True)
class Followed:
    """What one import of a followed agent did."""

    agent: str
    """The agent."""
    report: ImportReport = field(compare=False)
    """The import's report."""
    problems: tuple[str, ...] = ()
    """Its problems not reported before (an unfinished last line is none)."""
    catch_up: bool = False
    """Whether this was the import at the start, not one a change set off."""


OnImport = Callable[[Followed], None]
"""Told of each import that wrote a note or found a new problem."""

OnError = Callable[[str, Exception], None]
"""Told of an import or a watch that failed: the agent (empty for the watch) and the error."""


class _Transcripts(watchfiles.BaseFilter):
    """Only the agents' transcript files (`.jsonl`, `.json`); their folders' other files change for other reasons."""

    def __call__(self, change: watchfiles.Change, path: str) -> bool:
        return path.endswith((".jsonl", ".json"))


class ImportFollower:
    """Imports the followed agents' sessions once, then again whenever their transcripts change, in a thread."""

    def __init__(
        self,
        vault_root: Path,
        data_dir: Path,
        imports: ImportsConfig,
        *,
        on_import: OnImport,
        on_error: OnError,
        home: Path | None = None,
        environ: Mapping[str, str] | None = None,
        quiet_ms: int = QUIET_MS,
        gather_ms: int = GATHER_MS,
    ) -> None:
        """Set up; nothing is read until `start`. `home` and `environ` say where the agents keep their sessions."""
        self.vault_root = vault_root
        self.data_dir = data_dir
        self.imports = imports
        self.on_import = on_import
        self.on_error = on_error
        home = Path.home() if home is None else home
        environ = os.environ if environ is None else environ
        self.roots: dict[str, Path] = {agent: default_root(agent, home, environ) for agent in imports.follow}
        """Each followed agent's sessions folder."""
        self.quiet_ms = quiet_ms
        self.gather_ms = gather_ms
        self.imports_run = 0
        """How many imports have run (for tests)."""
        self._reported: set[str] = set()
        self._said_missing: set[str] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread (a daemon: an import cut short at exit leaves every note whole, writes being atomic)."""
        self._thread = threading.Thread(target=self.run, name="companion-import-follow", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> bool:
        """Ask the thread to stop and wait up to `timeout` seconds; False when an import is still going."""
        self._stop.set()
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def run(self) -> None:
        """Follow until `stop`: watch the folders that exist, and start again when a missing one appears."""
        while not self._stop.is_set():
            present = {agent: root for agent, root in self.roots.items() if root.is_dir()}
            for agent, root in self.roots.items():
                if agent not in present and agent not in self._said_missing:
                    self._said_missing.add(agent)
                    log.info("%s keeps no sessions at %s yet; followed once it does", AGENT_NAMES[agent], root)
            if not present:
                self._stop.wait(LOOK_S)
                continue
            try:
                self._watch(present)
            except Exception as exc:  # noqa: BLE001 - whatever broke the watch, the note watcher goes on, and so do we
                self.on_error("", exc)
                self._stop.wait(RETRY_S)

    def _watch(self, present: dict[str, Path]) -> None:
        missing = [root for agent, root in self.roots.items() if agent not in present]
        live = False
        for changes in watchfiles.watch(
            *present.values(),
            watch_filter=_Transcripts(),
            debounce=self.gather_ms,
            step=self.quiet_ms,
            stop_event=self._stop,
            yield_on_timeout=True,
            rust_timeout=int(LOOK_S * 1000),
            raise_interrupt=False,
        ):
            if not live:
                # The first yield means the watch is in place: what changed before it is caught up now, and what
                # changes after it is an event.
                live = True
                for agent in present:
                    self._import(agent, catch_up=True)
                continue
            if not changes:
                if any(root.is_dir() for root in missing):
                    return  # watched from the next round on, after its own catch-up
                continue
            touched = {agent for agent, root in present.items() if any(_under(path, root) for _, path in changes)}
            if not touched:
                touched = set(present)  # paths named another way (a link in the home folder's path): import them all
            for agent in sorted(touched):
                if self._stop.is_set():
                    return
                self._import(agent, catch_up=False)

    def _import(self, agent: str, *, catch_up: bool) -> None:
        request = ImportRequest(agent, self.roots[agent], self.imports.folder)
        try:
            report = import_sessions(self.vault_root, self.data_dir, [request])
        except Exception as exc:  # noqa: BLE001 - reported; the next change tries again, the watch goes on
            self.on_error(agent, exc)
            return
        finally:
            self.imports_run += 1
        fresh = tuple(p for p in report.problems if not p.endswith(INCOMPLETE_LINE) and p not in self._reported)
        self._reported.update(fresh)
        if report.written or fresh:
            self.on_import(Followed(agent, report, fresh, catch_up))


def _under(path: str, root: Path) -> bool:
    try:
        Path(path).relative_to(root)
    except ValueError:
        return False
    return True
