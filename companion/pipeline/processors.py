"""Session post-processors: each consumes an agent's entries and says what to drop, replace or derive.

Processors only compute: they never write. The pipeline (`companion.pipeline.run`) applies their results, writes derived
artifacts and rewrites the log, so every processor gets the same safety (archive before drop, atomic rewrites).
Built: `retain`, `archive` and `redact`, which only compute; `forward` (sent through `pipeline.forward`),
`summarize` (its note written through `pipeline.summarize`), `extract` (memory notes, `pipeline.extract`) and
`embed` (day notes for the indexer to embed, `pipeline.transcripts`), whose side effects the pipeline carries out.
"""

from __future__ import annotations

import functools
import lzma
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from companion.pipeline.history import Entry, serialize
from companion.secrets import RULES_VERSION, redact_field, redact_text, redact_value
from companion.specs import (
    ArchiveSpec,
    EmbedSpec,
    ExtractSpec,
    ForwardSpec,
    ProcessorSpec,
    RedactSpec,
    RetainSpec,
    SummarizeSpec,
    Trigger,
)


@dataclass(frozen=True)
class Artifact:
    """Something a processor derives from entries, for the pipeline to write."""

    kind: str
    """What it is, such as `archive`."""
    path: Path
    """Where it is meant to go (the pipeline may pick a free name next to it)."""
    content: bytes
    """Its bytes."""
    entry_ids: tuple[str, ...] = ()
    """The entries it holds or was derived from."""


@dataclass(frozen=True)
class ProcessResult:
    """What one processor wants done to an agent's history."""

    drop: frozenset[str] = frozenset()
    """Ids of entries to remove from the history."""
    replace: dict[str, Entry] = field(default_factory=dict)
    """Entries to rewrite, by id (redaction)."""
    derived: tuple[Artifact, ...] = ()
    """Artifacts to write (archives; later summaries, memory notes)."""


class Processor(Protocol):
    """The processor interface."""

    @property
    def name(self) -> str:
        """The processor type, such as `retain`."""
        ...

    @property
    def triggers(self) -> tuple[Trigger, ...]:
        """When it runs by itself; empty: only when run by hand (`companion process`)."""
        ...

    def process(self, agent: str, entries: Sequence[Entry], now: datetime) -> ProcessResult:
        """What to drop, replace and derive for `agent`'s entries at the moment `now` (timezone-aware)."""
        ...


def _triggers(spec: ProcessorSpec) -> tuple[Trigger, ...]:
    return (spec.trigger,) if spec.trigger is not None else ()


def _line_bytes(entry: Entry) -> int:
    return len(entry.raw) + 1


@dataclass(frozen=True)
class RetainProcessor:
    """Drops entries older than `max_age_days`, then the oldest until the kept entries fit `max_size_mb`."""

    spec: RetainSpec
    """Its settings."""
    name: str = "retain"
    """The processor type."""

    @property
    def triggers(self) -> tuple[Trigger, ...]:
        """When it runs by itself."""
        return _triggers(self.spec)

    def process(self, agent: str, entries: Sequence[Entry], now: datetime) -> ProcessResult:
        """The ids to drop by age, then by size (oldest first); the size counts each kept line with its newline."""
        drop: set[str] = set()
        if self.spec.max_age_days is not None:
            cutoff = now - timedelta(days=self.spec.max_age_days)
            drop.update(e.id for e in entries if e.ts < cutoff)
        if self.spec.max_size_mb is not None:
            limit = self.spec.max_size_mb * 1024 * 1024
            left = [(e.ts, i, e) for i, e in enumerate(entries) if e.id not in drop]
            total = sum(_line_bytes(e) for _, _, e in left)
            for _, _, entry in sorted(left, key=lambda item: (item[0], item[1])):
                if total <= limit:
                    break
                drop.add(entry.id)
                total -= _line_bytes(entry)
        return ProcessResult(drop=frozenset(drop))


@dataclass(frozen=True)
class ArchiveProcessor:
    """Moves entries older than `older_than_days` into an xz-compressed JSONL file under `destination/<agent>/`."""

    spec: ArchiveSpec
    """Its settings."""
    vault_root: Path
    """What a relative destination is relative to."""
    name: str = "archive"
    """The processor type."""

    @property
    def triggers(self) -> tuple[Trigger, ...]:
        """When it runs by itself."""
        return _triggers(self.spec)

    def folder(self, agent: str) -> Path:
        """The agent's archive folder."""
        destination = Path(self.spec.destination).expanduser()
        base = destination if destination.is_absolute() else self.vault_root / destination
        return base / agent

    def pack(self, agent: str, entries: Sequence[Entry], now: datetime) -> Artifact:
        """An archive artifact holding `entries` as JSON lines (each line's bytes as they are), xz-compressed."""
        stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
        # Fed a line at a time: joining a 400 MB heartbeat log first would hold it twice.
        compressor = lzma.LZMACompressor(format=lzma.FORMAT_XZ)
        parts = [piece for e in entries for piece in (compressor.compress(e.raw), compressor.compress(b"\n"))]
        content = b"".join([*parts, compressor.flush()])
        path = self.folder(agent) / f"{agent}-{stamp}.jsonl.xz"
        return Artifact(kind="archive", path=path, content=content, entry_ids=tuple(e.id for e in entries))

    def process(self, agent: str, entries: Sequence[Entry], now: datetime) -> ProcessResult:
        """Archive and drop the old entries; without `older_than_days`, nothing (it only keeps what others drop)."""
        if self.spec.older_than_days is None:
            return ProcessResult()
        cutoff = now - timedelta(days=self.spec.older_than_days)
        old = [e for e in entries if e.ts < cutoff]
        if not old:
            return ProcessResult()
        return ProcessResult(drop=frozenset(e.id for e in old), derived=(self.pack(agent, old, now),))


REDACTION_VERSION = RULES_VERSION
"""The version of the built-in redaction rules: a change to them (a new kind) redacts history notes again."""

_IDENTITY_FIELDS = ("id", "ts", "agent")
"""Top-level fields never redacted: they address the entry."""

_CACHED_CHARS = 2048


@dataclass(frozen=True)
class Redactor:
    """Replaces secrets and personal data in text with `[REDACTED:<kind>]`."""

    patterns: tuple[str, ...] = ()
    """Extra regular expressions, redacted as `[REDACTED:pattern]`."""

    def text(self, value: str) -> str:
        """`value` with every match replaced."""
        if len(value) >= _CACHED_CHARS:
            # The same long text (a system prompt) comes back in every entry of a log: redact it once.
            return _redact_long(self.patterns, value)
        return _redact(self.patterns, value)

    def value(self, value: Any) -> Any:
        """Any JSON value with every string in it (recursively, keys excepted) redacted, and the value of a field
        named like a secret (`password`, `api_key`, ...) replaced whole."""
        return redact_value(value, self.text)

    def field(self, key: str, value: Any) -> Any:
        """The value of the field `key`, redacted as `value` redacts it."""
        return redact_field(key, value, self.text)


def _redact(patterns: tuple[str, ...], value: str) -> str:
    return redact_text(value, tuple(_compiled(extra) for extra in patterns))


@functools.lru_cache(maxsize=64)
def _redact_long(patterns: tuple[str, ...], value: str) -> str:
    return _redact(patterns, value)


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@dataclass(frozen=True)
class RedactProcessor:
    """Replaces entries holding secrets or personal data with redacted copies."""

    spec: RedactSpec
    """Its settings."""
    name: str = "redact"
    """The processor type."""

    @property
    def triggers(self) -> tuple[Trigger, ...]:
        """When it runs by itself."""
        return _triggers(self.spec)

    def process(self, agent: str, entries: Sequence[Entry], now: datetime) -> ProcessResult:
        """A redacted copy of every entry that changes; `id`, `ts` and `agent` are left as they are."""
        redactor = Redactor(self.spec.patterns)
        changed: dict[str, Entry] = {}
        for entry in entries:
            data = {
                key: value if key in _IDENTITY_FIELDS else redactor.field(key, value)
                for key, value in entry.data.items()
            }
            if data != entry.data:
                changed[entry.id] = replace(entry, data=data, raw=serialize(data))
        return ProcessResult(replace=changed)


@dataclass(frozen=True)
class ForwardProcessor:
    """Names where an agent's entries are forwarded; it never drops or replaces any.

    Sending is a side effect, so (like every write) the pipeline does it, through `companion.pipeline.forward`, with the
    entries as redaction left them.
    """

    spec: ForwardSpec
    """Its settings."""
    vault_root: Path
    """What a relative JSONL path is relative to."""
    name: str = "forward"
    """The processor type."""

    @property
    def triggers(self) -> tuple[Trigger, ...]:
        """When it runs by itself."""
        return _triggers(self.spec)

    def jsonl_path(self, agent: str) -> Path:
        """The agent's JSONL sink file (`{agent}` expanded)."""
        path = Path(self.spec.jsonl_path.replace("{agent}", agent)).expanduser()
        return path if path.is_absolute() else self.vault_root / path

    def target(self, agent: str) -> str:
        """Where `agent`'s entries go: the JSONL file or the webhook URL."""
        if self.spec.sink == "webhook":
            return self.spec.url or ""
        return str(self.jsonl_path(agent))

    def process(self, agent: str, entries: Sequence[Entry], now: datetime) -> ProcessResult:
        """Nothing to drop or replace: forwarding only copies entries elsewhere."""
        return ProcessResult()


@dataclass(frozen=True)
class SummarizeProcessor:
    """Names the agent's rolling summary note; it never drops or replaces entries.

    Asking a model and writing the note are side effects, so the pipeline does them, through `pipeline.summarize`,
    with the entries as redaction left them.
    """

    spec: SummarizeSpec
    """Its settings."""
    vault_root: Path
    """What the note's path is relative to."""
    name: str = "summarize"
    """The processor type."""

    @property
    def triggers(self) -> tuple[Trigger, ...]:
        """When it runs by itself."""
        return _triggers(self.spec)

    def note_path(self, agent: str) -> Path:
        """The agent's summary note (`{agent}` expanded), under the vault root."""
        return self.vault_root / self.spec.output.replace("{agent}", agent)

    def process(self, agent: str, entries: Sequence[Entry], now: datetime) -> ProcessResult:
        """Nothing to drop or replace: summarizing only reads entries."""
        return ProcessResult()


@dataclass(frozen=True)
class ExtractProcessor:
    """Names the folder of the agent's extracted memory notes; it never drops or replaces entries.

    Writing the notes is a side effect, so the pipeline does it, through `pipeline.extract`, with the entries as
    redaction left them.
    """

    spec: ExtractSpec
    """Its settings."""
    vault_root: Path
    """What the folder is relative to."""
    name: str = "extract"
    """The processor type."""

    @property
    def triggers(self) -> tuple[Trigger, ...]:
        """When it runs by itself."""
        return _triggers(self.spec)

    def folder(self, agent: str) -> Path:
        """The agent's extracted-notes folder (`{agent}` expanded), under the vault root."""
        return self.vault_root / self.spec.folder.replace("{agent}", agent)

    def process(self, agent: str, entries: Sequence[Entry], now: datetime) -> ProcessResult:
        """Nothing to drop or replace: extracting only reads entries."""
        return ProcessResult()


@dataclass(frozen=True)
class EmbedProcessor:
    """Names the agent's history day notes, which the indexer embeds; it never drops or replaces entries.

    Writing the notes is a side effect, so the pipeline does it, through `pipeline.transcripts`, with the entries as
    redaction left them: nothing redaction removes reaches the vault, the index or the vector store.
    """

    spec: EmbedSpec
    """Its settings."""
    vault_root: Path
    """What the notes' paths are relative to."""
    name: str = "embed"
    """The processor type."""

    @property
    def triggers(self) -> tuple[Trigger, ...]:
        """When it runs by itself."""
        return _triggers(self.spec)

    def relative(self, agent: str, day: str) -> str:
        """The vault-relative path of the agent's note of `day` (`YYYY-MM-DD`)."""
        return self.spec.output.replace("{agent}", agent).replace("{date}", day)

    def process(self, agent: str, entries: Sequence[Entry], now: datetime) -> ProcessResult:
        """Nothing to drop or replace: embedding only reads entries."""
        return ProcessResult()


AnyProcessor = (
    RetainProcessor
    | ArchiveProcessor
    | RedactProcessor
    | ForwardProcessor
    | SummarizeProcessor
    | ExtractProcessor
    | EmbedProcessor
)
"""Any built processor."""


PROCESSORS: dict[str, Callable[[Any, Path], AnyProcessor]] = {
    "retain": lambda spec, root: RetainProcessor(spec),
    "archive": ArchiveProcessor,
    "redact": lambda spec, root: RedactProcessor(spec),
    "forward": ForwardProcessor,
    "summarize": SummarizeProcessor,
    "extract": ExtractProcessor,
    "embed": EmbedProcessor,
}
"""How each processor type (a spec's `type`) is built from its spec and the vault's root."""


def build_processor(spec: ProcessorSpec, vault_root: Path) -> AnyProcessor:
    """The processor a spec describes."""
    return PROCESSORS[spec.type](spec, vault_root)
