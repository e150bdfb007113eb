"""The processors with effects outside the log (forward, summarize, extract, embed): what each makes of the entries
read, and whether all of it is durable, which the log's trim waits for.

Forwarding sends at once (each sink records what it accepted); the notes are only computed here and written by the
run. An entry dropped from the log is out of reach of every later run, so a run drops entries only once every
forward has recorded them and every derived note is written; otherwise it keeps them in the log for the next run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from companion.pipeline.extract import ExtractReport, extract_agent
from companion.pipeline.forward import ForwardReport, forward_entries, state_file
from companion.pipeline.history import Entry, Source
from companion.pipeline.processors import (
    EmbedProcessor,
    ExtractProcessor,
    ForwardProcessor,
    Processor,
    SummarizeProcessor,
)
from companion.pipeline.progress import Progress
from companion.pipeline.reports import AgentReport
from companion.pipeline.summarize import SummaryReport, summarize_agent
from companion.pipeline.transcripts import EmbedReport, Redaction, embed_agent


@dataclass(frozen=True)
class Derivations:
    """What the list's side-effect processors made of the entries read, before anything is written."""

    forwards: tuple[ForwardReport, ...]
    """What each forward processor sent."""
    summaries: tuple[SummaryReport, ...]
    """The summary notes to write."""
    extracts: tuple[ExtractReport, ...]
    """The extracted notes to write."""
    embeds: tuple[EmbedReport, ...]
    """The history day notes to write."""


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


@dataclass(frozen=True)
class Given:
    """The run's settings the side-effect processors need."""

    now: datetime
    """The run's moment."""
    state_dir: Path | None
    """Where forward processors keep their state (none: next to the log)."""
    env: Mapping[str, str]
    """The auto-write, dedupe and token variables."""
    dry_run: bool
    """Send and write nothing."""


def derive(
    source: Source,
    chosen: Sequence[Processor],
    seen: Sequence[Entry],
    redaction: Redaction | None,
    given: Given,
    progress: Progress | None = None,
) -> Derivations:
    """Send what forward processors send (each result joins `progress` as it comes) and compute the summary,
    extracted and history notes (written later)."""
    summarizer = next((p for p in chosen if isinstance(p, SummarizeProcessor)), None)
    effects = _Effects(source, seen, given.now, given.state_dir, given.env, given.dry_run, redaction, summarizer)
    made: dict[str, tuple[Any, ...]] = {}
    for kind, (name, effect) in EFFECTS.items():
        results = []
        for processor in chosen:
            if isinstance(processor, kind):
                results.append(effect(processor, effects))
                if progress is not None and isinstance(processor, ForwardProcessor):
                    progress.forwards.append(results[-1])
        made[name] = tuple(results)
    return Derivations(**made)


def unsettled(made: Derivations, report: AgentReport) -> str | None:
    """Why the entries read cannot be dropped yet, or none: a forward that did not send (or record) them all, or a
    derived note the run computed but could not write (`report` is the run's report after the writes)."""
    why = [
        f"{f.pending or 'some'} entries are not recorded as forwarded to {f.target}" for f in made.forwards if f.problem
    ]
    meant = sum(s.action == "write" for s in made.summaries) + sum(len(x.notes) for x in made.extracts)
    meant += sum(len(e.notes) for e in made.embeds)
    written = sum(s.written for s in report.summaries) + sum(n.written for x in report.extracts for n in x.notes)
    written += sum(n.written for e in report.embeds for n in e.notes)
    if written < meant:
        why.append(f"{meant - written} of the {meant} derived notes could not be written")
    if not why:
        return None
    return (
        f"{report.source}: nothing was dropped from the log this run, because {' and '.join(why)} (see above); its "
        "entries stay in it until a run has forwarded and written everything derived from them"
    )
