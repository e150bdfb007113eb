"""The audit records of a `process` run: one per run that changed the log, else one for the notes it wrote (or the
entries it sent), in the words the audit log shows."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from companion.pipeline.extract import EXTRACTED_BY
from companion.pipeline.history import Source
from companion.pipeline.reports import AgentReport
from companion.pipeline.summarize import PROMPT_VERSION
from companion.pipeline.transcripts import EMBEDDED_BY
from companion.vault.audit import AuditLog, FileChange
from companion.vault.paths import vault_relative


@dataclass(frozen=True)
class Wording:
    """The phrases of a run's audit summaries: what was forwarded, noted and embedded, and where from."""

    forwarded: str
    """`, forwarded N` (empty without a forward processor)."""
    noted: str
    """The summary and extracted notes written, each with its source and model."""
    embedded: str
    """The history notes written, with their source."""


def wording(vault_root: Path, source: Source, report: AgentReport) -> Wording:
    """The phrases for what `report` sent and wrote."""
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
    return Wording(f", forwarded {sent}" if report.forwards else "", noted, embedded)


def record_log_unchanged(
    audit: AuditLog, agent: str, report: AgentReport, words: Wording, notes: list[FileChange], embeds: list[FileChange]
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


def record_processed(
    audit: AuditLog, report: AgentReport, words: Wording, bad_redacted: int, archived: int, changes: list[FileChange]
) -> None:
    """Audit a run that rewrote the log (or the session notes), with every file it wrote."""
    audit.record(
        source="process",
        action="process",
        summary=(
            f"Processed {report.agent}'s history: dropped {len(report.dropped)}, replaced {len(report.replaced)}"
            + (f" and redacted {bad_redacted} bad lines" if bad_redacted else "")
            + f", archived {archived}, kept {report.kept}{words.forwarded}{words.noted}{words.embedded}"
        ),
        changes=changes,
    )
