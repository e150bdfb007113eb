"""Runs an agent's processor list over its history log, safely: nothing is lost by accident.

A run reads the log (remembering how many bytes it read), asks each processor what to drop, replace and derive,
writes the archives atomically, then rewrites the log atomically with the kept lines (byte for byte) and the
replaced ones. Before the rename, bytes appended to the live log since the read are copied onto the new file, so a
line the recorder writes during a run survives. Anything dropped is archived first when the list has an `archive`
processor; a list that drops without one is refused unless `allow_data_loss` is set. Redaction runs before every
other processor, so nothing archived, derived, embedded or forwarded holds what it removes; it also rewrites the bad
lines (kept in the log as they are otherwise), so a secret in a malformed line does not stay there for good. Every
run that changes something is recorded in the audit log.

A `forward` processor sees every entry read (redacted), wherever it stands in the list, so an entry another processor
drops in the same run is still forwarded once. Sending happens right after the computation, before anything is
written; a sink that fails is reported in the run's report and the derived notes are written all the same. A `summarize`
processor likewise sees every entry read (redacted); its note is written atomically before the archives (it derives
from the log and never takes anything out of it), and recorded in the run's audit record with its source and model.
An `extract` processor's memory notes are written the same way, right after the summary notes, and so are an `embed`
processor's history day notes (which the indexer then embeds). A derived note that changed on disk since the run read
it (the user edited it during a slow model call) is left as it is, with a warning.

The order of writes is what keeps history complete after a crash at any step: archives first (an entry is then in
the log and the archive), the log's rename second (the entry is then only in the archive), the audit record last.
The log is trimmed only once everything derived from its entries is durable: when a forward left entries unsent (or
unrecorded) or a derived note could not be written, the run drops nothing (redaction still applies), says why, and a
later run drops them. A run that fails midway (a full disk) raises `ProcessStopped`, whose message lists what was
forwarded, written and archived before the failure and what was not (`companion.pipeline.progress`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from companion.atomic import make_folders, unused_path, write_atomic
from companion.config import CompanionConfig
from companion.errors import CompanionError, ConfigError, ProcessError
from companion.folderlock import folder_lock
from companion.locations import DataPaths
from companion.pipeline.derived import write_embeds, write_extracts, write_summaries
from companion.pipeline.effects import Derivations, Given, derive, unsettled
from companion.pipeline.history import BadLine, Entry, HistoryLog, Source, find_sources, read_log, rewrite_log
from companion.pipeline.processors import (
    REDACTION_VERSION,
    ArchiveProcessor,
    Artifact,
    Processor,
    Redactor,
    RedactProcessor,
    build_processor,
)
from companion.pipeline.progress import ARCHIVES, AUDIT, LOG, NOTES, Progress, stopped_among
from companion.pipeline.reports import AgentReport, ArchiveWrite
from companion.pipeline.runaudit import record_log_unchanged, record_processed, wording
from companion.pipeline.sessionnotes import NotesRead, apply_to_notes, markdown_changed, read_notes
from companion.pipeline.transcripts import Redaction
from companion.specs import ProcessorSpec
from companion.vault.audit import AuditLog, FileChange, sha256_hex
from companion.vault.paths import vault_relative
from companion.words import counted

__all__ = ["STEPS", "AgentPlan", "AgentReport", "ArchiveWrite", "plan_for", "process_vault", "run_agent"]

STEPS = ("read", "computed", "derived", "summarized", "archived", "history-written", "replaced", "recorded")
"""The steps of a run, in order; `fail_at` is called with each name once that step is done."""

FailAt = Callable[[str], None]
"""A hook called between steps (tests raise from it to simulate a crash there)."""


@dataclass(frozen=True)
class AgentPlan:
    """Which processors run for one agent, and whether they may drop entries without archiving them."""

    agent: str
    """The agent."""
    specs: tuple[ProcessorSpec, ...]
    """Its list: its own when configured, else the default one."""
    allow_data_loss: bool
    """Its own setting when given, else the default one."""
    own_list: bool
    """Whether the list is the agent's own (an override)."""


def plan_for(config: CompanionConfig, agent: str, source: str = "companion.yaml") -> AgentPlan:
    """The processor list of one agent; `ConfigError` when it would drop entries with nothing to archive them."""
    override = config.agents.get(agent)
    own = override is not None and override.processors is not None
    specs = override.processors if override is not None and override.processors is not None else None
    if specs is None:
        specs = config.session_history.processors
    allow = config.session_history.allow_data_loss
    if override is not None and override.allow_data_loss is not None:
        allow = override.allow_data_loss
    types = {spec.type for spec in specs}
    if "retain" in types and "archive" not in types and not allow:
        where = f"agents.{agent}.processors" if own else "session_history.processors"
        raise ConfigError(
            f"{source}: {where}: the list for agent '{agent}' drops entries (retain) but has no archive processor, "
            "so they would be lost; add an archive processor to the list, or set allow_data_loss: true"
        )
    return AgentPlan(agent=agent, specs=specs, allow_data_loss=allow, own_list=own)


def _ordered(processors: Sequence[Processor]) -> list[Processor]:
    # Redaction first, whatever its place in the list: nothing archived or derived may hold what it removes.
    return [p for p in processors if isinstance(p, RedactProcessor)] + [
        p for p in processors if not isinstance(p, RedactProcessor)
    ]


@dataclass
class _Outcome:
    current: dict[str, Entry]
    dropped: dict[str, Entry]
    replaced: set[str]
    archives: list[Artifact]
    derived: list[Artifact]
    # Every entry read, as redaction left it (dropped ones included): what forward processors send.
    seen: list[Entry] = field(default_factory=list)
    # Bad lines (kept in the log) with secrets in them, by line number, as the list's redaction rewrites them.
    bad_redacted: dict[int, bytes] = field(default_factory=dict)
    # The list's redaction, which history notes apply again to the sections they keep.
    redaction: Redaction | None = None


def _compute(plan: AgentPlan, log: HistoryLog, processors: Sequence[Processor], now: datetime) -> _Outcome:
    position = {e.id: i for i, e in enumerate(log.entries)}
    outcome = _Outcome({e.id: e for e in log.entries}, {}, set(), [], [])
    archive_owner: dict[int, Artifact] = {}
    for processor in _ordered(processors):
        result = processor.process(plan.agent, tuple(outcome.current.values()), now)
        for entry_id, entry in result.replace.items():
            if entry_id in outcome.current:
                outcome.current[entry_id] = entry
                outcome.replaced.add(entry_id)
        for entry_id in result.drop:
            if entry_id in outcome.current:
                outcome.dropped[entry_id] = outcome.current.pop(entry_id)
        for artifact in result.derived:
            if artifact.kind == "archive":
                archive_owner[id(processor)] = artifact
            else:
                outcome.derived.append(artifact)
    archivers = [p for p in processors if isinstance(p, ArchiveProcessor)]
    held = {entry_id for artifact in archive_owner.values() for entry_id in artifact.entry_ids}
    loose = [entry for entry_id, entry in outcome.dropped.items() if entry_id not in held]
    if loose and archivers:
        # What other processors (retain) dropped goes into the first archive of the list, with what it took itself.
        first = archivers[0]
        mine = archive_owner.get(id(first))
        together = [outcome.dropped[i] for i in mine.entry_ids] if mine else []
        together = sorted(together + loose, key=lambda e: position[e.id])
        archive_owner[id(first)] = first.pack(plan.agent, together, now)
    elif loose and not plan.allow_data_loss:
        raise ProcessError(
            f"{log.path}: {len(loose)} entries of agent '{plan.agent}' would be dropped with no archive to keep them; "
            "nothing was written. Add an archive processor to the list, or set allow_data_loss: true"
        )
    outcome.archives = [archive_owner[id(p)] for p in archivers if id(p) in archive_owner]
    outcome.seen = [outcome.current.get(e.id) or outcome.dropped[e.id] for e in log.entries]
    redaction = _redaction([p for p in processors if isinstance(p, RedactProcessor)])
    # A session note that cannot be read is only named, never rewritten.
    for line in log.lines if not log.notes else ():
        if isinstance(line, BadLine) and redaction is not None:
            # A line that is not a valid entry stays in the log, but a secret in it must not.
            new = redaction.text(line.raw.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
            if new != line.raw:
                outcome.bad_redacted[line.line] = new
    outcome.redaction = redaction
    return outcome


def _redaction(redactors: Sequence[RedactProcessor]) -> Redaction | None:
    """The list's redaction as one text function with a signature of its rules (none without `redact`)."""
    if not redactors:
        return None
    chosen = [Redactor(p.spec.patterns) for p in redactors]

    def text(value: str) -> str:
        for redactor in chosen:
            value = redactor.text(value)
        return value

    rules = json.dumps([REDACTION_VERSION, *[list(p.spec.patterns) for p in redactors]])
    return Redaction(text, hashlib.sha256(rules.encode("utf-8")).hexdigest()[:12])


def _new_lines(log: HistoryLog, outcome: _Outcome) -> bytes:
    out: list[bytes] = []
    for line in log.lines:
        if isinstance(line, BadLine):
            out.append(outcome.bad_redacted.get(line.line, line.raw))
        elif line.id in outcome.dropped:
            continue
        else:
            out.append(outcome.current[line.id].raw)
    return b"".join(raw + b"\n" for raw in out)


def _free_path(path: Path) -> Path:
    # Two runs in the same second (or a crashed run's leftover) must never overwrite an archive.
    return unused_path(path, lambda n: path.with_name(path.name.replace(".jsonl.xz", f"-{n}.jsonl.xz")))


def run_agent(
    vault_root: Path,
    source: Source,
    plan: AgentPlan,
    now: datetime,
    *,
    audit: AuditLog | None = None,
    dry_run: bool = False,
    fail_at: FailAt | None = None,
    processors: Sequence[Processor] | None = None,
    state_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> AgentReport:
    """Run one agent's list over its log at moment `now` (timezone-aware); with `dry_run`, write nothing.

    Forward processors keep their state in `state_dir`; none: in `forward/` of the audit log's data dir, and with no
    audit log either, hidden next to the history log. `environ` (default: the process's) holds the auto-write,
    dedupe and token variables summaries read.
    """
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    if dry_run:
        return _run_agent(vault_root, source, plan, now, audit, True, fail_at, processors, state_dir, environ)
    with _one_run_per_log(source.path) if not source.notes else folder_lock(source.path):
        return _run_agent(vault_root, source, plan, now, audit, False, fail_at, processors, state_dir, environ)


def _one_run_per_log(path: Path) -> AbstractContextManager[None]:
    """The log's folder, locked for a whole run: a manual `companion process` and the trigger thread of
    `index --watch` take turns, instead of one renaming the log under the other (whose rewrite, and the lines
    appended to it, would be lost)."""
    return folder_lock(path.parent)


def _first_report(
    source: Source, log: HistoryLog, notes: NotesRead | None, outcome: _Outcome, made: Derivations, dry_run: bool
) -> AgentReport:
    """The run's report as computed, before anything is written (all a dry run returns)."""
    order = [e.id for e in log.entries]
    dropped = tuple(i for i in order if i in outcome.dropped)
    replaced = tuple(
        i
        for i in order
        if i in outcome.replaced
        and i not in outcome.dropped
        and (notes is None or markdown_changed(notes, outcome.current[i]))
    )
    return AgentReport(
        agent=source.agent,
        source=source.path,
        entries=len(order),
        kept=len(order) - len(dropped),
        dropped=dropped,
        replaced=replaced,
        archives=tuple(ArchiveWrite(a.path, len(a.entry_ids)) for a in outcome.archives),
        derived=tuple(outcome.derived),
        problems=log.problems,
        appended=0,
        dry_run=dry_run,
        forwards=made.forwards,
        summaries=made.summaries,
        extracts=made.extracts,
        embeds=made.embeds,
        redacted_lines=tuple(sorted(outcome.bad_redacted)),
    )


def _write_archives(
    vault_root: Path, outcome: _Outcome, changes: list[FileChange], progress: Progress
) -> list[ArchiveWrite]:
    """Write every archive (each fsynced), never over an earlier one; each write joins `changes` and `progress`."""
    for artifact in outcome.archives:
        make_folders(artifact.path.parent)
        path = _free_path(artifact.path)
        write_atomic(path, artifact.content)
        progress.archives.append(ArchiveWrite(path, len(artifact.entry_ids)))
        changes.append(FileChange(vault_relative(vault_root, path), None, sha256_hex(artifact.content)))
    return list(progress.archives)


def _kept_whole(outcome: _Outcome) -> _Outcome:
    """The outcome with nothing dropped (and so nothing to archive): what a run applies when the entries it would
    drop are not yet forwarded or written into every derived note. Replacements (redaction) still apply."""
    current = {**outcome.current, **outcome.dropped}
    return replace(outcome, current=current, dropped={}, archives=[])


def _write_notes(vault_root: Path, report: AgentReport, audit: AuditLog | None, progress: Progress) -> _Written:
    """Write the summary, extracted and history notes; what was written joins `progress`."""
    progress.step = NOTES
    summary_changes, summaries = write_summaries(vault_root, report.summaries, audit)
    extract_changes, extracts = write_extracts(vault_root, report.extracts, audit)
    embed_changes, embeds = write_embeds(vault_root, report.embeds, audit)
    progress.notes += [f"wrote the summary note {s.path}" for s in summaries if s.written]
    progress.notes += [f"wrote {counted(len(x.notes), 'extracted note')} in {x.folder}" for x in extracts if x.notes]
    progress.notes += [f"wrote {counted(len(e.notes), 'history note')}" for e in embeds if e.notes]
    progress.unwritten += [f"the summary note {s.path}" for s in summaries if s.reason == "not written"]
    for before, after in zip(report.extracts, extracts, strict=True):
        if missed := len(before.notes) - len(after.notes):
            progress.unwritten.append(f"{counted(missed, 'extracted note')} in {before.folder}")
    for made, done in zip(report.embeds, embeds, strict=True):
        if missed := len(made.notes) - len(done.notes):
            progress.unwritten.append(f"{counted(missed, 'history note')} ({made.pattern})")
    written = replace(report, summaries=summaries, extracts=extracts, embeds=embeds)
    return _Written(written, summary_changes + extract_changes, embed_changes)


@dataclass(frozen=True)
class _Written:
    """The report once the derived notes are written, and the notes' changes for the audit log."""

    report: AgentReport
    notes: list[FileChange]
    embeds: list[FileChange]


def _run_agent(
    vault_root: Path,
    source: Source,
    plan: AgentPlan,
    now: datetime,
    audit: AuditLog | None,
    dry_run: bool,
    fail_at: FailAt | None,
    processors: Sequence[Processor] | None,
    state_dir: Path | None,
    environ: Mapping[str, str] | None,
) -> AgentReport:
    step = fail_at or (lambda name: None)
    notes = read_notes(vault_root, source.path, source.agent) if source.notes else None
    log = notes.log if notes is not None else read_log(source.path, source.agent)
    step("read")
    chosen = list(processors) if processors is not None else [build_processor(s, vault_root) for s in plan.specs]
    outcome = _compute(plan, log, chosen, now)
    step("computed")
    if state_dir is None and audit is not None:
        state_dir = DataPaths(audit.folder.parent).forward
    given = Given(now, state_dir, os.environ if environ is None else environ, dry_run)
    if dry_run:
        made = derive(source, chosen, outcome.seen, outcome.redaction, given)
        report = _first_report(source, log, notes, outcome, made, dry_run)
        step("derived")
        return report
    progress = Progress(source, audit=audit.log_path if audit is not None else None)
    try:
        return _apply(vault_root, source, log, notes, chosen, outcome, given, audit, step, progress)
    except (OSError, CompanionError) as exc:
        # Whatever was sent and written before stays: say exactly what, instead of a generic failure.
        raise progress.stopped(exc) from exc


def _apply(
    vault_root: Path,
    source: Source,
    log: HistoryLog,
    notes: NotesRead | None,
    chosen: Sequence[Processor],
    outcome: _Outcome,
    given: Given,
    audit: AuditLog | None,
    step: FailAt,
    progress: Progress,
) -> AgentReport:
    """Forward, write the derived notes, then (once all of that is durable) the archives, the log and the audit
    record, in that order; `progress` follows along."""
    made = derive(source, chosen, outcome.seen, outcome.redaction, given, progress)
    step("derived")
    written = _write_notes(vault_root, _first_report(source, log, notes, outcome, made, False), audit, progress)
    report = written.report
    held = unsettled(made, report) if outcome.dropped else None
    if held is not None:
        outcome = _kept_whole(outcome)
        done = Derivations(report.forwards, report.summaries, report.extracts, report.embeds)
        report = replace(_first_report(source, log, notes, outcome, done, False), held=held)
    words = wording(vault_root, source, report)
    step("summarized")
    if not (report.dropped or report.replaced or outcome.archives or outcome.derived or outcome.bad_redacted):
        progress.step = AUDIT
        if audit is not None:
            record_log_unchanged(audit, source.agent, report, words, written.notes, written.embeds)
        return report

    changes: list[FileChange] = written.notes + written.embeds
    progress.step = ARCHIVES
    archives = _write_archives(vault_root, outcome, changes, progress)
    step("archived")
    progress.step = LOG
    tail = b""
    if notes is not None:
        step("history-written")
        rewritten = {i: outcome.current[i] for i in report.replaced}
        applied = apply_to_notes(vault_root, notes, set(report.dropped), rewritten)
        changes[:0] = applied.changes
        report = replace(report, notes_left=applied.warnings)
    else:
        new = _new_lines(log, outcome)
        tail = rewrite_log(log, new, step)
        changes.insert(0, FileChange(vault_relative(vault_root, log.path), log.digest, sha256_hex(new + tail)))
    progress.log_done = (
        f"rewrote {'the session notes in' if notes is not None else 'the log'} {source.path}: dropped "
        f"{len(report.dropped)}, redacted {len(report.replaced)}, kept {report.kept}"
    )
    step("replaced")
    progress.step = AUDIT
    if audit is not None:
        record_processed(audit, report, words, len(outcome.bad_redacted), sum(a.entries for a in archives), changes)
    step("recorded")
    return replace(report, archives=tuple(archives), appended=len(tail) - (log.length - log.size))


def process_vault(
    vault_root: Path,
    config: CompanionConfig,
    now: datetime,
    *,
    agent: str | None = None,
    audit: AuditLog | None = None,
    dry_run: bool = False,
    fail_at: FailAt | None = None,
    config_source: str = "companion.yaml",
    state_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[AgentReport]:
    """Run every agent's list (or only `agent`'s) over the logs the config's sources find.

    Every agent's list is checked before any log is touched, so a refused list changes nothing anywhere. `state_dir`
    is where forward processors remember what they sent (see `run_agent`).
    """
    sources = find_sources(vault_root, config.session_history.sources, config.sessions.folder)
    if not config.session_history.sources:
        raise ConfigError(
            f"{config_source}: session_history.sources is empty, so there are no history logs to process; add "
            "one such as `- path: ./agents/{agent}/history.jsonl`"
        )
    if agent is not None:
        sources = [s for s in sources if s.agent == agent]
        if not sources:
            raise ProcessError(f"{vault_root}: no history log of agent '{agent}' is found by session_history.sources")
    plans = {s.agent: plan_for(config, s.agent, config_source) for s in sources}
    reports: list[AgentReport] = []
    for number, source in enumerate(sources):
        try:
            report = run_agent(
                vault_root,
                source,
                plans[source.agent],
                now,
                audit=audit,
                dry_run=dry_run,
                fail_at=fail_at,
                state_dir=state_dir,
                environ=environ,
            )
        except (OSError, CompanionError) as exc:
            left = [s.agent for s in sources[number + 1 :]]
            if dry_run or (not reports and not left):
                raise
            # The agents before this one were processed completely: the message must not hide that.
            raise stopped_among(reports, exc, left) from exc
        reports.append(report)
    return reports
