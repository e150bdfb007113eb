"""What a `process` run has done so far, kept as it goes, so that a run stopped midway (a full disk, an unwritable
file) says exactly what it wrote, forwarded and archived, what it did not, and which file was at fault.

A run's writes come in a fixed order (forwards, derived notes, archives, the log, the audit record), so what is not
done follows from the step that failed; the message never claims more than that.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from companion.errors import CompanionError, ProcessStopped, StorageError
from companion.pipeline.forward import ForwardReport
from companion.pipeline.history import Source
from companion.pipeline.reports import AgentReport, ArchiveWrite
from companion.words import counted

FORWARDING = "forwarding entries and computing the derived notes"
"""The first step with effects outside the run: sending, then the notes to write."""
NOTES = "writing the derived notes"
"""Summary, extracted and history notes."""
ARCHIVES = "writing the archives"
"""The `.jsonl.xz` files of the entries about to be dropped."""
LOG = "rewriting the log"
"""The history log's atomic rewrite (or the session notes' changes)."""
AUDIT = "recording the run in the audit log"
"""The last step."""

_ORDER = (FORWARDING, NOTES, ARCHIVES, LOG, AUDIT)


@dataclass
class Progress:
    """One agent's run as far as it got: updated after each write, read only when the run stops midway."""

    source: Source
    """The log (or session-notes folder) being processed."""
    step: str = FORWARDING
    """The step under way."""
    forwards: list[ForwardReport] = field(default_factory=list)
    """Each forward processor's result, as each finishes."""
    notes: list[str] = field(default_factory=list)
    """The derived notes written, in words."""
    unwritten: list[str] = field(default_factory=list)
    """The derived notes that could not be written, in words."""
    archives: list[ArchiveWrite] = field(default_factory=list)
    """The archives written (fsynced)."""
    log_done: str | None = None
    """What the log's rewrite did, once it is done."""
    audit: Path | None = None
    """The audit log the run is recorded in last."""

    def reached(self, step: str) -> bool:
        """Whether the run got as far as `step` (under way or past it)."""
        return _ORDER.index(self.step) >= _ORDER.index(step)

    def anything_done(self) -> bool:
        """Whether anything left the run: an entry sent or a file written."""
        return bool(any(f.sent for f in self.forwards) or self.notes or self.archives or self.log_done)

    def stopped(self, exc: BaseException) -> ProcessStopped:
        """The error for this run stopped by `exc`: what failed, what was done, what was not."""
        agent = self.source.agent
        done = self._done()
        # A write through a descriptor (the audit log's append) fails without a file name: the step names it.
        usual = {AUDIT: self.audit, LOG: self.source.path}.get(self.step)
        head = f"processing {agent}'s history ({self.source.path}) stopped while {self.step}: {fault(exc, usual)}"
        told = f"Done for {agent}: {'; '.join(done) if done else 'nothing'}. Not done: {'; '.join(self._not_done())}"
        return ProcessStopped(f"{head}. {told}", exit_code(exc))

    def _done(self) -> list[str]:
        done = [
            f"forwarded {counted(f.sent, 'entry', 'entries')} to {f.target} (recorded in {f.state})"
            for f in self.forwards
            if f.sent
        ]
        done += self.notes
        done += [f"archived {counted(a.entries, 'entry', 'entries')} into {a.path}" for a in self.archives]
        if self.log_done:
            done.append(self.log_done)
        return done

    def _not_done(self) -> list[str]:
        out = [f.problem for f in self.forwards if f.problem]
        if not self.reached(NOTES):
            out.append("no summary, extracted or history note was written")
        if self.unwritten:
            out.append(f"not written: {', '.join(self.unwritten)}")
        if self.log_done is None:
            where = "session notes in" if self.source.notes else "log"
            kept = f"the {where} {self.source.path} is unchanged: no entry was dropped from it or redacted in it"
            if self.archives:
                kept += " (the archives written hold copies of entries still in it; the cold tier counts each once)"
            out.append(kept)
        if self.audit is not None:
            out.append(f"the run is not recorded in the audit log {self.audit}")
        out.append(
            "run `companion process` again once that is fixed: no entry is lost (each is still in the log or in an "
            "archive) and nothing forwarded is sent again"
        )
        return out


def fault(exc: BaseException, usual: Path | None = None) -> str:
    """What failed, naming the file: an `OSError` by its file name (else `usual`, the file the step writes) and the
    system's words, else the error's message (which names its file)."""
    if isinstance(exc, OSError):
        name = os.fsdecode(exc.filename) if exc.filename is not None else str(usual or "a file")
        return f"{name}: {exc.strerror or exc}"
    return str(exc)


def exit_code(exc: BaseException) -> int:
    """The exit code of the error that stopped a run (an `OSError` is a storage error)."""
    if isinstance(exc, CompanionError):
        return exc.exit_code
    return StorageError.exit_code


def summary(report: AgentReport) -> str:
    """One agent's completed run, in a few words, for the message of a later agent's failure."""
    parts = [f"dropped {len(report.dropped)}", f"kept {report.kept}"]
    parts += [f"archived {a.entries} into {a.path}" for a in report.archives]
    parts += [f"forwarded {f.sent} to {f.target}" for f in report.forwards if f.sent]
    written = (
        sum(s.written for s in report.summaries)
        + sum(n.written for x in report.extracts for n in x.notes)
        + len(report.embedded)
    )
    if written:
        parts.append(f"wrote {counted(written, 'note')}")
    return f"{report.agent} ({', '.join(parts)})"


def stopped_among(done: Sequence[AgentReport], exc: BaseException, left: Sequence[str]) -> ProcessStopped:
    """The error for a run over several agents stopped by `exc` at one of them: the agents processed completely
    before it, and those not reached."""
    message = str(exc) if isinstance(exc, ProcessStopped) else fault(exc)
    if done:
        message += f". Processed completely before it: {'; '.join(summary(r) for r in done)}"
    if left:
        message += f". Not reached: {', '.join(left)}"
    return ProcessStopped(message, exit_code(exc))
