"""The `session_history` and `agents` sections of the config: where history logs are and which processors run.

Each processor spec is a frozen dataclass whose `type` field names it, so the config parser can pick the class from a
YAML item's `type` key. Values are checked here (`__post_init__`), so a bad value is reported with the file, line
and key like any other config error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Trigger = Literal["on_write", "on_schedule", "on_startup", "on_size_threshold", "nightly"]
"""When a processor runs by itself; fired by `companion index --watch` (see `companion/triggers.py`)."""


def _check_trigger(trigger: str | None, threshold_mb: float | None, interval_minutes: int | None) -> list[str]:
    """The problems of a processor's trigger fields (an empty list when they fit together)."""
    problems = []
    if trigger == "on_size_threshold" and threshold_mb is None:
        problems.append("trigger on_size_threshold needs threshold_mb")
    if threshold_mb is not None and trigger != "on_size_threshold":
        problems.append("threshold_mb is only used with trigger: on_size_threshold")
    if threshold_mb is not None and threshold_mb <= 0:
        problems.append("threshold_mb must be more than 0")
    if trigger == "on_schedule" and interval_minutes is None:
        problems.append("trigger on_schedule needs interval_minutes (or use trigger: nightly)")
    if interval_minutes is not None and trigger != "on_schedule":
        problems.append("interval_minutes is only used with trigger: on_schedule")
    if interval_minutes is not None and interval_minutes < 1:
        problems.append("interval_minutes must be at least 1")
    return problems


def _positive(names_values: dict[str, float | None]) -> list[str]:
    return [f"{name} must be more than 0" for name, value in names_values.items() if value is not None and value <= 0]


@dataclass(frozen=True)
class RetainSpec:
    """`type: retain`: drop entries older than `max_age_days`, then the oldest until the log fits `max_size_mb`."""

    type: Literal["retain"] = "retain"
    """The processor type."""
    max_age_days: float | None = None
    """Entries older than this many days (before the run's moment) are dropped."""
    max_size_mb: float | None = None
    """The oldest entries are dropped until the kept entries take at most this many MiB."""
    trigger: Trigger | None = None
    """When it runs by itself; none: only by `companion process`."""
    threshold_mb: float | None = None
    """The log size (MiB) that fires `on_size_threshold`."""
    interval_minutes: int | None = None
    """The interval of `on_schedule`."""

    def __post_init__(self) -> None:
        problems = _positive({"max_age_days": self.max_age_days, "max_size_mb": self.max_size_mb})
        if self.max_age_days is None and self.max_size_mb is None:
            problems.append("retain needs max_age_days or max_size_mb (or both)")
        problems += _check_trigger(self.trigger, self.threshold_mb, self.interval_minutes)
        if problems:
            raise ValueError("; ".join(problems))


@dataclass(frozen=True)
class ArchiveSpec:
    """`type: archive`: entries older than `older_than_days` (and whatever the list's other processors drop) go into an
    xz-compressed JSONL file under `destination/<agent>/` before they leave the history."""

    type: Literal["archive"] = "archive"
    """The processor type."""
    older_than_days: float | None = None
    """Entries older than this many days are archived and dropped; none: archive only what other processors drop."""
    destination: str = "./cold-storage"
    """The archive folder, relative to the vault root (or absolute); each agent gets its own subfolder."""
    trigger: Trigger | None = None
    """When it runs by itself; none: only by `companion process`."""
    threshold_mb: float | None = None
    """The log size (MiB) that fires `on_size_threshold`."""
    interval_minutes: int | None = None
    """The interval of `on_schedule`."""

    def __post_init__(self) -> None:
        problems = _positive({"older_than_days": self.older_than_days})
        if not self.destination.strip():
            problems.append("destination must name a folder")
        problems += _check_trigger(self.trigger, self.threshold_mb, self.interval_minutes)
        if problems:
            raise ValueError("; ".join(problems))


@dataclass(frozen=True)
class RedactSpec:
    """`type: redact`: replace secrets and personal data in every string value with `[REDACTED:<kind>]`."""

    type: Literal["redact"] = "redact"
    """The processor type."""
    patterns: tuple[str, ...] = ()
    """Extra regular expressions (Python syntax) redacted as `[REDACTED:pattern]`, besides the built-in kinds."""
    trigger: Trigger | None = None
    """When it runs by itself; none: only by `companion process`."""
    threshold_mb: float | None = None
    """The log size (MiB) that fires `on_size_threshold`."""
    interval_minutes: int | None = None
    """The interval of `on_schedule`."""

    def __post_init__(self) -> None:
        problems = []
        for pattern in self.patterns:
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                problems.append(f"pattern {pattern!r} is not a valid regular expression ({exc})")
                continue
            if compiled.search("") is not None:
                # An empty match would "redact" between every character.
                problems.append(f"pattern {pattern!r} matches the empty string")
        problems += _check_trigger(self.trigger, self.threshold_mb, self.interval_minutes)
        if problems:
            raise ValueError("; ".join(problems))


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class ForwardSpec:
    """`type: forward`: send each entry once (redacted, when the list redacts) to a JSONL file or an HTTP webhook."""

    type: Literal["forward"] = "forward"
    """The processor type."""
    sink: Literal["jsonl", "webhook"] = "jsonl"
    """Where entries go: lines appended to a JSONL file, or POSTed as JSON to `url`."""
    path: str | None = None
    """The JSONL file (jsonl sink), relative to the vault root (or absolute), `{agent}` expanding to the agent;
    none: `./forwarded/{agent}.jsonl`."""
    url: str | None = None
    """The webhook's http(s) URL (webhook sink); each POST body is `{"agent": ..., "entries": [...]}`."""
    token_env: str | None = None
    """The name of the environment variable holding a bearer token for the webhook (never the token itself)."""
    timeout_s: float = 10.0
    """Seconds to wait for the webhook's answer to one POST."""
    retries: int = 3
    """How many times a failed POST is tried again before the run reports it (later runs send what is left)."""
    backoff_s: float = 0.5
    """Seconds before the first retry, doubling before each further one."""
    batch: int = 100
    """Entries per POST."""
    trigger: Trigger | None = None
    """When it runs by itself; none: only by `companion process`."""
    threshold_mb: float | None = None
    """The log size (MiB) that fires `on_size_threshold`."""
    interval_minutes: int | None = None
    """The interval of `on_schedule`."""

    def __post_init__(self) -> None:
        problems = _positive({"timeout_s": self.timeout_s})
        if self.retries < 0:
            problems.append("retries must be 0 or more")
        if self.batch < 1:
            problems.append("batch must be at least 1")
        if self.sink == "webhook":
            if not self.url or not re.match(r"https?://[^\s/]+", self.url):
                problems.append("sink webhook needs url: an http:// or https:// address")
            if self.path is not None:
                problems.append("path is only used with sink: jsonl")
        else:
            if self.url is not None or self.token_env is not None:
                problems.append("url and token_env are only used with sink: webhook")
            if self.path is not None and not self.path.strip():
                problems.append("path must name a file")
        if self.token_env is not None and not _ENV_NAME.fullmatch(self.token_env):
            # Refuse anything that is not a variable name: a pasted token must not sit in the config file.
            problems.append(
                "token_env must be the name of an environment variable holding the token (such as "
                "FORWARD_TOKEN), never the token itself"
            )
        problems += _check_trigger(self.trigger, self.threshold_mb, self.interval_minutes)
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def jsonl_path(self) -> str:
        """The JSONL sink's path pattern, with its default filled in."""
        return self.path if self.path is not None else "./forwarded/{agent}.jsonl"


@dataclass(frozen=True)
class SummarizeSpec:
    """`type: summarize`: a rolling summary note of the agent's recent entries, updated in place in the vault.

    Extractive and offline by default; with `url` and `model`, an OpenAI-compatible `/chat/completions` endpoint
    proposes the text, which is validated and replaced by the extractive summary when it is unusable or unreachable.
    """

    type: Literal["summarize"] = "summarize"
    """The processor type."""
    output: str = "Memory/Summaries/{agent}.md"
    """The summary note, relative to the vault root, `{agent}` expanding to the agent; inside the vault, never in a
    dot-folder."""
    max_entries: int = 200
    """How many of the newest entries the summary covers."""
    sentences: int = 8
    """How many sentences the extractive summary keeps (and the model is asked for)."""
    url: str | None = None
    """An OpenAI-compatible endpoint (its base such as `http://localhost:11434/v1`, or the full `/chat/completions`
    address); none: extractive only."""
    model: str | None = None
    """The model the endpoint is asked for (needed with `url`)."""
    token_env: str | None = None
    """The name of the environment variable holding the endpoint's bearer token (never the token itself)."""
    timeout_s: float = 60.0
    """Seconds to wait for the endpoint's answer."""
    max_chars: int = 4000
    """The longest reply accepted from the model; a longer one is rejected in favour of the extractive summary."""
    trigger: Trigger | None = None
    """When it runs by itself; none: only by `companion process`."""
    threshold_mb: float | None = None
    """The log size (MiB) that fires `on_size_threshold`."""
    interval_minutes: int | None = None
    """The interval of `on_schedule`."""

    def __post_init__(self) -> None:
        problems = _positive({"timeout_s": self.timeout_s})
        problems += output_problems(self.output)
        if self.max_entries < 1:
            problems.append("max_entries must be at least 1")
        if self.sentences < 1:
            problems.append("sentences must be at least 1")
        if self.max_chars < 100:
            problems.append("max_chars must be at least 100")
        if self.url is not None and not re.match(r"https?://[^\s/]+", self.url):
            problems.append("url must be an http:// or https:// address")
        if self.url is not None and not (self.model or "").strip():
            problems.append("url needs model: the name of the model the endpoint serves")
        if self.url is None and (self.model is not None or self.token_env is not None):
            problems.append("model and token_env are only used with url")
        if self.token_env is not None and not _ENV_NAME.fullmatch(self.token_env):
            problems.append(
                "token_env must be the name of an environment variable holding the token (such as "
                "SUMMARY_TOKEN), never the token itself"
            )
        problems += _check_trigger(self.trigger, self.threshold_mb, self.interval_minutes)
        if problems:
            raise ValueError("; ".join(problems))


EXTRACT_KINDS = ("fact", "decision", "task")
"""The kinds of memory note the `extract` processor writes."""


@dataclass(frozen=True)
class ExtractSpec:
    """`type: extract`: facts, decisions and tasks found in the entries' text (offline rules, no model), each written
    as a typed memory note under `folder` with a link back to the agent's summary note or log."""

    type: Literal["extract"] = "extract"
    """The processor type."""
    folder: str = "Memory/Extracted"
    """The notes' folder, relative to the vault root (`{agent}` expands to the agent); never a dot-folder."""
    kinds: tuple[str, ...] = EXTRACT_KINDS
    """Which kinds to extract: any of fact, decision, task (`AGENT_VAULT_AUTO_WRITE=research` keeps fact and
    decision only)."""
    max_notes: int = 10
    """The write budget of one run: at most this many notes created or updated."""
    trigger: Trigger | None = None
    """When it runs by itself; none: only by `companion process`."""
    threshold_mb: float | None = None
    """The log size (MiB) that fires `on_size_threshold`."""
    interval_minutes: int | None = None
    """The interval of `on_schedule`."""

    def __post_init__(self) -> None:
        problems = [p.replace("output must", "folder must") for p in output_problems(self.folder + "/x.md")]
        unknown = [kind for kind in self.kinds if kind not in EXTRACT_KINDS]
        if unknown:
            problems.append(f"kinds: {', '.join(map(repr, unknown))} unknown; use any of {', '.join(EXTRACT_KINDS)}")
        if not self.kinds:
            problems.append("kinds must name at least one of " + ", ".join(EXTRACT_KINDS))
        if self.max_notes < 1:
            problems.append("max_notes must be at least 1")
        problems += _check_trigger(self.trigger, self.threshold_mb, self.interval_minutes)
        if problems:
            raise ValueError("; ".join(problems))


@dataclass(frozen=True)
class EmbedSpec:
    """`type: embed`: the entries, as redaction left them, written into one history note per agent and day, which
    the indexer embeds; recall then finds what the log said, even after `retain` has dropped it from the log."""

    type: Literal["embed"] = "embed"
    """The processor type."""
    output: str = "Memory/History/{agent}/{agent} {date}.md"
    """The day notes, relative to the vault root; `{agent}` expands to the agent and `{date}` (required) to the
    entries' day, `YYYY-MM-DD`; inside the vault, never in a dot-folder."""
    skip_status: bool = True
    """Leave out entries whose reply is a bare status word such as `HEARTBEAT_OK` or `NO_REPLY` (polls)."""
    max_chars: int = 2000
    """The most characters of one entry's text written (the rest stays in the log and the archives)."""
    trigger: Trigger | None = None
    """When it runs by itself; none: only by `companion process`."""
    threshold_mb: float | None = None
    """The log size (MiB) that fires `on_size_threshold`."""
    interval_minutes: int | None = None
    """The interval of `on_schedule`."""

    def __post_init__(self) -> None:
        problems = []
        if "{date}" not in self.output:
            problems.append("output must contain {date}: one note per day keeps each note small")
        problems += output_problems(self.output.replace("{date}", "2000-01-01"))
        if self.max_chars < 200:
            problems.append("max_chars must be at least 200")
        problems += _check_trigger(self.trigger, self.threshold_mb, self.interval_minutes)
        if problems:
            raise ValueError("; ".join(problems))


def output_problems(output: str) -> list[str]:
    """The problems of a derived note's vault-relative path pattern (an empty list when it is usable)."""
    path = output.replace("\\", "/")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if not parts or not path.endswith(".md"):
        return ["output must be a vault-relative path of a .md note, such as Memory/Summaries/{agent}.md"]
    if path.startswith("/") or re.match(r"[A-Za-z]:", path) or path.startswith("~"):
        return ["output must be relative to the vault root, not absolute"]
    if any(part == ".." for part in parts):
        return ["output must stay inside the vault (no '..')"]
    if any(part.startswith(".") for part in parts):
        # Dot-folders (.obsidian, .companion, .trash) are not notes: Obsidian and the indexer skip them.
        return ["output must not be in a dot-folder or a dot-file"]
    return []


ProcessorSpec = RetainSpec | ArchiveSpec | RedactSpec | ForwardSpec | SummarizeSpec | ExtractSpec | EmbedSpec
"""Any built processor's settings; the YAML item's `type` key picks the class."""


@dataclass(frozen=True)
class SourceConfig:
    """One place session entries come from: agents' history logs, or the vault's own session notes."""

    path: str | None = None
    """History logs: a path relative to the vault root (or absolute) with `{agent}` standing for one folder or file
    name part, such as `./agents/{agent}/history.jsonl`."""
    session_notes: str | None = None
    """The vault's session notes (`sessions.folder`, `ops/sessions/<YYYY-MM-DD>/*.md`), as the entries of the agent
    named here, one entry per note."""

    def __post_init__(self) -> None:
        if (self.path is None) == (self.session_notes is None):
            raise ValueError(
                "a source needs either path (history logs, such as ./agents/{agent}/history.jsonl) or "
                "session_notes (the name of the agent whose session notes the vault holds), not both"
            )
        if self.path is not None and "{agent}" not in self.path:
            raise ValueError(f"path {self.path!r} must contain {{agent}}, which names the agent each log belongs to")
        if self.session_notes is not None and not re.fullmatch(r"[\w.-]+", self.session_notes):
            raise ValueError("session_notes must be an agent name (letters, digits, '.', '-', '_')")


@dataclass(frozen=True)
class SessionHistoryConfig:
    """Where the agents' `history.jsonl` logs are and what is done to them by default."""

    sources: tuple[SourceConfig, ...] = ()
    """Where the entries are (logs, session notes); none configured means `companion process` has nothing to do."""
    allow_data_loss: bool = False
    """Let a processor list drop entries with no `archive` processor to keep them."""
    processors: tuple[ProcessorSpec, ...] = ()
    """The default processor list, for every agent without its own."""


@dataclass(frozen=True)
class AgentConfig:
    """One agent's overrides."""

    processors: tuple[ProcessorSpec, ...] | None = None
    """This agent's processor list, replacing the default one; none: the default list."""
    allow_data_loss: bool | None = None
    """Overrides `session_history.allow_data_loss` for this agent; none: the default."""


def spec_types() -> dict[str, type[ProcessorSpec]]:
    """The built processor types by their `type` name."""
    return {
        "retain": RetainSpec,
        "archive": ArchiveSpec,
        "redact": RedactSpec,
        "forward": ForwardSpec,
        "summarize": SummarizeSpec,
        "extract": ExtractSpec,
        "embed": EmbedSpec,
    }
