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
written; a sink that fails is reported in the run's report and never stops the rest of the run. A `summarize`
processor likewise sees every entry read (redacted); its note is written atomically before the archives (it derives
from the log and never takes anything out of it), and recorded in the run's audit record with its source and model.
An `extract` processor's memory notes are written the same way, right after the summary notes, and so are an `embed`
processor's history day notes (which the indexer then embeds). A derived note that changed on disk since the run read
it (the user edited it during a slow model call) is left as it is, with a warning.

The order of writes is what keeps history complete after a crash at any step: archives first (an entry is then in
the log and the archive), the log's rename second (the entry is then only in the archive), the audit record last.
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
from typing import Any

from companion.atomic import make_folders, unused_path, write_atomic
from companion.config import CompanionConfig
from companion.errors import ConfigError, ProcessError
from companion.folderlock import folder_lock
from companion.locations import DataPaths
from companion.pipeline.derived import write_embeds, write_extracts, write_summaries
from companion.pipeline.extract import EXTRACTED_BY, ExtractReport, extract_agent
from companion.pipeline.forward import ForwardReport, forward_entries, state_file
from companion.pipeline.history import BadLine, Entry, HistoryLog, Source, find_sources, read_log, rewrite_log
from companion.pipeline.processors import (
    REDACTION_VERSION,
    ArchiveProcessor,
    Artifact,
    EmbedProcessor,
    ExtractProcessor,
    ForwardProcessor,
    Processor,
    Redactor,
    RedactProcessor,
    SummarizeProcessor,
    build_processor,
)
from companion.pipeline.sessionnotes import NotesRead, apply_to_notes, markdown_changed, read_notes
from companion.pipeline.summarize import PROMPT_VERSION, SummaryReport, summarize_agent
from companion.pipeline.transcripts import EMBEDDED_BY, EmbedReport, Redaction, embed_agent
from companion.specs import ProcessorSpec
from companion.vault.audit import AuditLog, FileChange, sha256_hex
from companion.vault.paths import vault_relative

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


@dataclass(frozen=True)
class ArchiveWrite:
    """One archive file a run wrote (or would write)."""

    path: Path
    """The `.jsonl.xz` file."""
    entries: int
    """How many entries it holds."""


@dataclass(frozen=True)
class AgentReport:
    """What a run did (or, in a dry run, would do) to one agent's log."""

    agent: str
    """The agent."""
    source: Path
    """Its history log."""
    entries: int
    """Valid entries read."""
    kept: int
    """Entries left in the log (replaced ones included)."""
    dropped: tuple[str, ...]
    """Ids dropped from the log, in file order."""
    replaced: tuple[str, ...]
    """Ids rewritten in place (redaction), in file order."""
    archives: tuple[ArchiveWrite, ...]
    """Archive files written."""
    derived: tuple[Artifact, ...]
    """Other artifacts processors derived (none of the built processors make any yet)."""
    problems: tuple[str, ...]
    """Bad lines, each naming the file and line; they are kept in the log."""
    appended: int
    """Bytes appended to the log during the run and carried over."""
    dry_run: bool
    """True when nothing was written."""
    forwards: tuple[ForwardReport, ...] = ()
    """What each `forward` processor sent (or would send), with any failure to report."""
    summaries: tuple[SummaryReport, ...] = ()
    """What each `summarize` processor wrote (or would write, or left alone and why)."""
    extracts: tuple[ExtractReport, ...] = ()
    """What each `extract` processor wrote (or would write), with the notes it left alone."""
    embeds: tuple[EmbedReport, ...] = ()
    """What each `embed` processor wrote (or would write): the history day notes for the indexer."""
    redacted_lines: tuple[int, ...] = ()
    """Line numbers of bad lines (kept in the log) that redaction rewrote."""
    notes_left: tuple[str, ...] = ()
    """Session notes left as they are because they changed during the run (a session-notes source)."""

    @property
    def embedded(self) -> tuple[Path, ...]:
        """The history notes this run wrote, for the indexer to embed now."""
        return tuple(n.path for e in self.embeds for n in e.notes if n.written)

    @property
    def warnings(self) -> tuple[str, ...]:
        """The forward failures and summary problems, each naming the sink or note and what to do."""
        return (
            tuple(f.problem for f in self.forwards if f.problem)
            + tuple(w for s in self.summaries for w in s.warnings)
            + tuple(w for x in self.extracts for w in x.warnings)
            + tuple(w for e in self.embeds for w in e.warnings)
            + self.notes_left
        )


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


@dataclass(frozen=True)
class _Derivations:
    """What the list's side-effect processors made of the entries read, before anything is written."""

    forwards: tuple[ForwardReport, ...]
    summaries: tuple[SummaryReport, ...]
    extracts: tuple[ExtractReport, ...]
    embeds: tuple[EmbedReport, ...]


@dataclass(frozen=True)
class _Effects:
    """What a side-effect processor is given: the entries read (as redaction left them) and the run's settings."""

    source: Source
    seen: Sequence[Entry]
    now: datetime
    state_dir: Path | None
    env: Mapping[str, str]
    dry_run: bool
    redaction: Redaction | None
    summarizer: SummarizeProcessor | None  # extracted notes link back to the list's summary note when it has one


def _forward(p: ForwardProcessor, c: _Effects) -> ForwardReport:
    state = state_file(p, c.source.agent, c.source.path, c.state_dir)
    return forward_entries(p, c.source.agent, c.seen, state, dry_run=c.dry_run)


def _summarize(p: SummarizeProcessor, c: _Effects) -> SummaryReport:
    return summarize_agent(p, c.source.agent, c.source.path, c.seen, c.now, environ=c.env, dry_run=c.dry_run)


def _extract(p: ExtractProcessor, c: _Effects) -> ExtractReport:
    return extract_agent(p, c.source.agent, c.source.path, c.seen, environ=c.env, summary=c.summarizer)


def _embed(p: EmbedProcessor, c: _Effects) -> EmbedReport:
    return embed_agent(
        p, c.source.agent, c.source.path, c.seen, environ=c.env, redaction=c.redaction, origin=c.source.origin
    )


EFFECTS: dict[type, tuple[str, Callable[[Any, _Effects], Any]]] = {
    ForwardProcessor: ("forwards", _forward),
    SummarizeProcessor: ("summaries", _summarize),
    ExtractProcessor: ("extracts", _extract),
    EmbedProcessor: ("embeds", _embed),
}
"""The processor types with side effects, in the order they run: the report field each fills, and what it does
(sending, for forward; the notes to write, for the others, which the run writes later)."""


def _derive(
    source: Source,
    chosen: Sequence[Processor],
    outcome: _Outcome,
    now: datetime,
    state_dir: Path | None,
    env: Mapping[str, str],
    dry_run: bool,
) -> _Derivations:
    """Send what forward processors send and compute the summary, extracted and history notes (written later)."""
    summarizer = next((p for p in chosen if isinstance(p, SummarizeProcessor)), None)
    given = _Effects(source, outcome.seen, now, state_dir, env, dry_run, outcome.redaction, summarizer)
    made = {
        field: tuple(effect(p, given) for p in chosen if isinstance(p, kind))
        for kind, (field, effect) in EFFECTS.items()
    }
    return _Derivations(**made)


def _first_report(
    source: Source, log: HistoryLog, notes: NotesRead | None, outcome: _Outcome, made: _Derivations, dry_run: bool
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


@dataclass(frozen=True)
class _Wording:
    """The phrases of a run's audit summaries: what was forwarded, noted and embedded, and where from."""

    forwarded: str
    noted: str
    embedded: str


def _wording(vault_root: Path, source: Source, report: AgentReport) -> _Wording:
    sent = sum(f.sent for f in report.forwards)
    origin = vault_relative(vault_root, source.path)
    noted = "".join(
        f"; summary {vault_relative(vault_root, s.path)} from {origin} by {s.generated_by}"
        + (f" (prompt {PROMPT_VERSION})" if s.generated_by != "extractive" else "")
        for s in report.summaries
        if s.written
    ) + "".join(
        f"; {len(w)} extracted notes in {vault_relative(vault_root, x.folder)} from {origin} by {EXTRACTED_BY}"
        for x in report.extracts
        if (w := [n for n in x.notes if n.written])
    )
    embedded = "".join(
        f"; {count} history notes for {e.pattern} from {origin} by {EMBEDDED_BY}"
        for e in report.embeds
        if (count := sum(n.written for n in e.notes))
    )
    return _Wording(f", forwarded {sent}" if report.forwards else "", noted, embedded)


def _record_log_unchanged(
    audit: AuditLog, agent: str, report: AgentReport, words: _Wording, notes: list[FileChange], embeds: list[FileChange]
) -> None:
    """Audit a run that left the log as it was but wrote notes or sent entries."""
    if embeds:
        # A record of its own: history notes keep no copies, so this record cannot be undone, and the summary and
        # extracted notes (which can) must not share it.
        audit.record(
            source="process", action="embed", summary=f"Embedded {agent}'s history{words.embedded}", changes=embeds
        )
    if notes:
        summarized = any(s.written for s in report.summaries)
        audit.record(
            source="process",
            action="summarize" if summarized else "extract",
            summary=f"{'Summarized' if summarized else 'Extracted from'} {agent}'s history{words.noted}"
            f"{words.forwarded}",
            changes=notes,
        )
    elif sent := sum(f.sent for f in report.forwards):
        # Sending copies entries out of the vault: worth a record even when the log itself is unchanged.
        targets = ", ".join(sorted({f.target for f in report.forwards if f.sent}))
        audit.record(
            source="process",
            action="forward",
            summary=f"Forwarded {sent} of {agent}'s history entries to {targets}",
            changes=[],
        )


def _write_archives(vault_root: Path, outcome: _Outcome, changes: list[FileChange]) -> list[ArchiveWrite]:
    """Write every archive, never over an earlier one; each write joins `changes`."""
    written: list[ArchiveWrite] = []
    for artifact in outcome.archives:
        make_folders(artifact.path.parent)
        path = _free_path(artifact.path)
        write_atomic(path, artifact.content)
        written.append(ArchiveWrite(path, len(artifact.entry_ids)))
        changes.append(FileChange(vault_relative(vault_root, path), None, sha256_hex(artifact.content)))
    return written


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
    env = os.environ if environ is None else environ
    made = _derive(source, chosen, outcome, now, state_dir, env, dry_run)
    report = _first_report(source, log, notes, outcome, made, dry_run)
    step("derived")
    if dry_run:
        return report
    summary_changes, summaries = write_summaries(vault_root, report.summaries, audit)
    extract_changes, extracts = write_extracts(vault_root, report.extracts, audit)
    embed_changes, embeds = write_embeds(vault_root, report.embeds, audit)
    report = replace(report, summaries=summaries, extracts=extracts, embeds=embeds)
    words = _wording(vault_root, source, report)
    step("summarized")
    if not (report.dropped or report.replaced or outcome.archives or outcome.derived or outcome.bad_redacted):
        if audit is not None:
            _record_log_unchanged(audit, source.agent, report, words, summary_changes + extract_changes, embed_changes)
        return report

    changes: list[FileChange] = summary_changes + extract_changes + embed_changes
    written = _write_archives(vault_root, outcome, changes)
    step("archived")
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
    step("replaced")
    if audit is not None:
        audit.record(
            source="process",
            action="process",
            summary=(
                f"Processed {source.agent}'s history: dropped {len(report.dropped)}, replaced {len(report.replaced)}"
                + (f" and redacted {len(outcome.bad_redacted)} bad lines" if outcome.bad_redacted else "")
                + ", "
                f"archived {sum(w.entries for w in written)}, kept {report.kept}"
                f"{words.forwarded}{words.noted}{words.embedded}"
            ),
            changes=changes,
        )
    step("recorded")
    return replace(report, archives=tuple(written), appended=len(tail) - (log.length - log.size))


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
    return [
        run_agent(
            vault_root,
            s,
            plans[s.agent],
            now,
            audit=audit,
            dry_run=dry_run,
            fail_at=fail_at,
            state_dir=state_dir,
            environ=environ,
        )
        for s in sources
    ]
