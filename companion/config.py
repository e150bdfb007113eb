"""The vault's own settings, `.companion/companion.yaml`, validated on load.

The schema is the dataclasses below: each section is a frozen dataclass and each field's type says
what YAML value it takes, so adding a setting is adding a field. Validation walks the YAML node tree
rather than the loaded data, so every error can name the file, the line and the key, and list what
is allowed there.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from companion.atomic import write_atomic
from companion.errors import ConfigError
from companion.locations import config_path
from companion.retention import RetentionPolicy
from companion.specs import AgentConfig, SessionHistoryConfig
from companion.yamlschema import build


@dataclass(frozen=True)
class IndexConfig:
    """Which notes are embedded and indexed."""

    include: tuple[str, ...] = ("**/*.md",)
    """Globs of notes to index (vault-relative, POSIX; `**` matches any depth)."""
    exclude: tuple[str, ...] = ("ops/**",)
    """Globs never indexed. `ops/` holds the agent's own files and chatter; its session summaries are indexed
    by their own rule (`sessions.recall`), their boilerplate left out.
    """
    conversation_folders: tuple[str, ...] = ()
    """Folders whose notes are conversation notes even without `type: conversation`."""
    max_note_mb: float = 5
    """Notes larger than this many MiB are reported and skipped."""
    templates: bool = False
    """Index the templates folder too (Obsidian's Templates plugin, `.obsidian/templates.json`, and Templater's):
    left out by default, as a template's placeholders are not something anyone remembers."""

    def __post_init__(self) -> None:
        # Written so NaN fails too; 0 or less would skip every note, infinity cannot be counted in bytes.
        if not 0 < self.max_note_mb < math.inf:
            raise ValueError(
                f"max_note_mb: expected a positive number (more than 0), got {self.max_note_mb:g}: it is the size in "
                "MiB above which a note is skipped (default 5)"
            )


@dataclass(frozen=True)
class SessionsConfig:
    """Where the agent writes its session summaries."""

    folder: str = "ops/sessions"
    """Vault-relative folder holding `<YYYY-MM-DD>/*.md` session summaries."""
    recall: bool = True
    """Index the summaries (whatever `index.exclude` says of their folder), so sessions older than the hot window
    are recalled by what was said; their boilerplate is left out (see `boilerplate_sessions`)."""
    boilerplate_sessions: int = 5
    """A user message, reply or body written the same way (case, digits, punctuation and spacing aside) in at least
    this many summaries is boilerplate (heartbeats, acknowledgements, status polls): neither embedded nor searched,
    and an exchange whose two sides are both boilerplate is no recall candidate. 0 keeps every part."""

    def __post_init__(self) -> None:
        # 1 would make every text boilerplate (each is written once at least): nothing would be recalled.
        if self.boilerplate_sessions < 0 or self.boilerplate_sessions == 1:
            raise ValueError(
                f"boilerplate_sessions: expected 0 or 2 and more, got {self.boilerplate_sessions}: it is how many "
                "summaries a repeated text must appear in to be boilerplate (default 5; 0 keeps everything)"
            )


@dataclass(frozen=True)
class StoreConfig:
    """Where the index lives."""

    chroma_url: str | None = None
    """A Chroma server such as `http://127.0.0.1:8000`; null for the embedded store in the data directory."""


@dataclass(frozen=True)
class EmbeddingConfig:
    """Which embedding model turns notes into vectors."""

    provider: Literal["minilm", "openai", "hash"] = "minilm"
    """`minilm` (the offline models built at install: all-MiniLM-L6-v2 and multilingual-e5-small), `openai` (an
    OpenAI-compatible endpoint), or `hash` (a fast word-hashing embedder with no semantics, for tests and benchmarks
    only)."""
    model: str | None = None
    """The model: for `minilm`, null or `auto` (the default) chooses by the vault's languages:
    `multilingual-e5-small` when a tenth of its notes or more are in another language than English (and its weights
    are installed), else `all-MiniLM-L6-v2`; a vault embedded with the multilingual model keeps it. Or name one:
    `all-MiniLM-L6-v2` (English), `all-MiniLM-L6-v2-int8` (the same with int8 matrix products, about 1.6x faster on
    a CPU), `multilingual-e5-small` (about 100 languages: a question in English finds a note in Spanish and the
    reverse; 12 layers, so about twice as slow to index) or `multilingual-e5-small-int8`; for `openai`, the
    server's model name.
    Changing it embeds every note again at the next `companion index` (the words index is kept and searched meanwhile):
    an index never mixes two models' vectors."""
    url: str | None = None
    """Base URL of the OpenAI-compatible endpoint."""
    api_key_env: str | None = None
    """Name of the environment variable holding the API key (never the key itself)."""


@dataclass(frozen=True)
class RecallConfig:
    """How recall ranks and which tiers it adds (the policy's budgets live in `retention`)."""

    fusion: Literal["learned", "weighted"] = "learned"
    """How a note's dense and BM25 evidence become one relevance: `learned`, a logistic model over what decides it
    (see `fusion_weights`), or `weighted`, the hand-set weighted sum below (`dense_weight`, `lexical_trust`,
    `every_word_weight`...), which the learned model does not read."""
    fusion_weights: str = ""
    """A JSON file of learned fusion weights (`companion fusion train` writes one), relative to the vault unless
    absolute; empty uses those shipped with the companion."""
    relevance_floor: float = 0.4
    """With the learned fusion, the relevance (a probability of being an answer, with the graph and date boosts)
    below which a note is not a match (the weighted sum holds its relevance to 0.1 instead):
    recall shows such notes only as the closest ones when nothing is above it, never counts them as used, and never
    puts them in an agent's context."""
    dense_weight: float = 0.75
    """Share of the dense (embedding) side in a note's relevance when no note holds the question's words; the rest
    is BM25 (see `lexical_trust`)."""
    lexical_trust: float = 0.6
    """How far a note holding the question's words moves the share toward BM25: the share is `dense_weight x (1 -
    lexical_trust x coverage^3)`, coverage being the idf-weighted share of the question's words the best BM25 note
    holds (0.75 down to 0.3 with the defaults); 0 keeps `dense_weight` for every question."""
    unspaced_dense_weight: float = 0.2
    """The most the dense share may be for a question written mostly in an unspaced script (Chinese, Japanese, Thai,
    Khmer...): the English model, all-MiniLM-L6-v2, was trained on English, so its similarities there are noise and
    BM25 over character pairs leads. 1 lifts the cap (for a multilingual embedding model)."""
    dense_span: float = 0.3
    """Cosine similarity below the best candidate's at which the dense side scales to 0 (each candidate's is scaled
    against the best one, so a list of 5 and one of 500 scale alike); 0 scales min-max over the candidates. Learned
    weights that carry the span they were fitted with (the multilingual model's shipped ones) use theirs."""
    graph_weight: float = 0.05
    """How much a wikilink to or from a strong candidate adds to a note's relevance."""
    date_weight: float = 0.5
    """How much a note dated inside a date the question names ("in March", "last week") adds."""
    every_word_weight: float = 1.0
    """How much a note holding every word of the question adds (a known-item search: the words a user typed on
    purpose find the note that has them all, however the embeddings rank it); 0 turns it off."""
    candidates: int = 50
    """Notes taken from each side (dense, lexical) before fusing."""
    temporal_context: bool = True
    """The always-on tier of recent session titles and times (on by default; a recap question adds it anyway)."""
    recent_hours: int = 48
    """How far back the temporal tier looks."""
    recent_limit: int = 10
    """How many sessions the temporal tier lists."""
    surfaced_minutes: int = 10
    """How long the notes an agent was last shown stay nameable as `@1`, `@2`... and `@last` (a
    recent-context cache, so a follow-up can say "that note")."""
    context_policy: str = (
        "Memory below is recalled from the user's vault. Prefer structured notes over raw transcripts; "
        "newer statements override older ones; say when memory is missing instead of guessing."
    )
    """The compact memory policy every assembled context starts with (never trimmed)."""
    context_instruction: str = "Answer the current message, using the recalled memory where it is relevant."
    """The operation instruction every assembled context carries (never trimmed)."""

    def __post_init__(self) -> None:
        problems = []
        for name in (
            "dense_weight",
            "graph_weight",
            "date_weight",
            "every_word_weight",
            "lexical_trust",
            "unspaced_dense_weight",
            "relevance_floor",
        ):
            if not 0.0 <= getattr(self, name) <= 1.0:
                problems.append(f"{name} must be within 0 and 1")
        for name in ("candidates", "recent_hours", "recent_limit", "surfaced_minutes"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be at least 1")
        if not 0.0 <= self.dense_span <= 2.0:
            problems.append("dense_span must be within 0 and 2 (the range of cosine similarity)")
        if problems:
            raise ValueError("; ".join(problems))


@dataclass(frozen=True)
class CurationConfig:
    """Where hand curation puts things."""

    archive_folder: str = "archive"
    """Vault folder that archived notes move into (keeping their path); it is never indexed, in any letter case, so
    archived notes leave recall while staying in the vault, readable and restorable. If your vault's `Archive/`
    holds notes you want recalled, name another folder."""
    source: str = ""
    """Name recorded in the audit log as who curated (empty: `app` or `cli`, by where the change was made)."""


@dataclass(frozen=True)
class AgentWritesConfig:
    """What an agent may write through the agent API (`remember`, `vault_write`, `vault_delete`): write
    safety, dedupe and budgets. The environment's `AGENT_VAULT_AUTO_WRITE` and `AGENT_VAULT_DEDUPE`
    override `auto_write` and `dedupe`."""

    allow: bool = False
    """Let `companion mcp` offer its write tools without `--allow-writes` (query mode is read-only by default)."""
    auto_write: Literal["off", "research", "aggressive"] = "research"
    """The auto-write modes: `off` refuses every agent write, `research` allows durable notes within the budgets,
    `aggressive` allows four times the budgets."""
    dedupe: bool = True
    """Refuse a new note whose content overlaps an existing note's (the agent can pass `ignore_dedupe`)."""
    overlap: float = 0.5
    """Share of the new text's word triples found in one existing note from which it counts as a duplicate."""
    daily_budget: int = 50
    """Agent writes accepted per day (UTC), across sessions and processes (counted from the audit log)."""
    session_budget: int = 20
    """Agent writes accepted per session (one `companion mcp` connection, or one command)."""
    max_note_kb: int = 256
    """Largest note an agent may write."""
    memory_folder: str = "Memory"
    """Where `remember` puts typed memories (one subfolder per type)."""
    notes_folder: str = "Notes"
    """Where `vault_write` puts a new note when the agent names no folder."""

    def __post_init__(self) -> None:
        problems = []
        if not 0.0 < self.overlap <= 1.0:
            problems.append("overlap must be more than 0 and at most 1")
        for name in ("daily_budget", "session_budget", "max_note_kb"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be at least 1")
        for name in ("memory_folder", "notes_folder"):
            folder = getattr(self, name).strip().strip("/")
            if not folder or ".." in folder.split("/") or folder.startswith("."):
                problems.append(f"{name} must be a visible folder inside the vault")
        if problems:
            raise ValueError("; ".join(problems))


@dataclass(frozen=True)
class ImportsConfig:
    """Where `companion import` puts the sessions of agents that keep them outside the vault (Claude Code, Codex CLI,
    Gemini CLI)."""

    folder: str = "Agents/{agent}/{project}"
    """The vault folder of the imported conversation notes; `{agent}` becomes `claude-code`, `codex` or `gemini`,
    `{project}` the name of the folder the agent worked in."""
    follow: tuple[Literal["claude-code", "codex", "gemini"], ...] = ()
    """Agents whose sessions are imported as they are written, by `companion index --watch` and by the app while it
    indexes: each one's own sessions folder is watched (Claude Code: ~/.claude/projects, Codex CLI: $CODEX_HOME/sessions
    or ~/.codex/sessions, Gemini CLI: ~/.gemini/tmp), everything new is imported once at start, and a session that
    changes has its note rewritten within seconds. Such as `[claude-code, codex]`; none by default."""

    def __post_init__(self) -> None:
        parts = [part for part in self.folder.replace("\\", "/").split("/") if part not in ("", ".")]
        if not parts or self.folder.startswith(("/", "~")) or any(p == ".." or p.startswith(".") for p in parts):
            raise ValueError(
                f"folder: {self.folder!r} must be a visible folder inside the vault, such as "
                "Agents/{agent}/{project}"
            )
        twice = sorted({agent for agent in self.follow if self.follow.count(agent) > 1})
        if twice:
            raise ValueError(f"follow: {', '.join(twice)} is named more than once; name each agent once")


@dataclass(frozen=True)
class CompanionConfig:
    """Everything `.companion/companion.yaml` can say; a missing file means these defaults."""

    index: IndexConfig = field(default_factory=IndexConfig)
    """Which notes are indexed."""
    sessions: SessionsConfig = field(default_factory=SessionsConfig)
    """Where session summaries live."""
    store: StoreConfig = field(default_factory=StoreConfig)
    """Where the index lives."""
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    """Which embedding model is used."""
    retention: RetentionPolicy = field(default_factory=RetentionPolicy)
    """The hot window, decay and recall budgets (the `RetentionPolicy`)."""
    recall: RecallConfig = field(default_factory=RecallConfig)
    """Ranking weights and the temporal tier."""
    curation: CurationConfig = field(default_factory=CurationConfig)
    """Hand curation: the archive folder and the audit log's source name."""
    session_history: SessionHistoryConfig = field(default_factory=SessionHistoryConfig)
    """Where the agents' `history.jsonl` logs are and the default processor list (`companion process`)."""
    agents: dict[str, AgentConfig] = field(default_factory=dict)
    """Per-agent overrides by agent name: a processor list replacing the default one, `allow_data_loss`."""
    agent_writes: AgentWritesConfig = field(default_factory=AgentWritesConfig)
    """What agents may write through the agent API and the MCP server."""
    imports: ImportsConfig = field(default_factory=ImportsConfig)
    """Where `companion import` writes the agents' imported sessions."""

    @property
    def max_note_bytes(self) -> int:
        """`index.max_note_mb` in bytes."""
        return int(self.index.max_note_mb * 1024 * 1024)


def load_config(vault_root: Path) -> CompanionConfig:
    """Read and validate the vault's config; a missing file gives the defaults."""
    return load_config_file(config_path(vault_root))


def load_config_file(path: Path, *, missing_ok: bool = True) -> CompanionConfig:
    """Read and validate a config file; a missing file gives the defaults (or, without `missing_ok`, an error)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if not missing_ok:
            raise ConfigError(f"{path}: no such config file; check the path given with --config") from None
        return CompanionConfig()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config file ({exc})") from exc
    return parse_config(text, str(path))


def parse_config(text: str, source: str = "companion.yaml") -> CompanionConfig:
    """Validate YAML text as a `CompanionConfig`; `source` names the file in error messages."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return CompanionConfig()
        value = build(CompanionConfig, node, "", source, loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f", line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{source}{line}: invalid YAML: {exc.problem or exc.context}") from exc
    except (yaml.YAMLError, ValueError, TypeError) as exc:
        raise ConfigError(f"{source}: invalid YAML: {exc}") from exc
    finally:
        loader.dispose()
    assert isinstance(value, CompanionConfig)
    return value


def config_to_dict(config: CompanionConfig) -> dict[str, Any]:
    """The config as plain YAML-ready data (tuples become lists)."""

    def plain(value: Any) -> Any:
        if isinstance(value, tuple):
            return [plain(item) for item in value]
        if isinstance(value, dict):
            return {name: plain(item) for name, item in value.items()}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return value

    result = plain(config)
    assert isinstance(result, dict)
    return result


def save_config(vault_root: Path, config: CompanionConfig) -> Path:
    """Write the config atomically (temp file in its folder, fsync, rename); return its path."""
    path = config_path(vault_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (
        "# Vault Companion settings (every key is described on the Configuration page of the docs).\n"
        + yaml.safe_dump(config_to_dict(config), sort_keys=False, allow_unicode=True)
    )
    write_atomic(path, text.encode("utf-8"))
    return path


def matches(glob: str, rel_path: str) -> bool:
    """Whether a vault-relative POSIX path matches a glob: `**` spans any number of folders (also
    none), `*` and `?` stay within one path segment, `[abc]` is a character class; matching is
    case-sensitive. A glob ending in `/` means everything under that folder.
    """
    return _compile_glob(glob).fullmatch(rel_path) is not None


def matches_any(globs: typing.Iterable[str], rel_path: str) -> bool:
    """Whether any of the globs matches the path."""
    return compile_globs(tuple(globs)).fullmatch(rel_path) is not None


@functools.lru_cache(maxsize=128)
def compile_globs(globs: tuple[str, ...]) -> re.Pattern[str]:
    """One compiled pattern matching (with `fullmatch`) any of the globs; none matches nothing."""
    if not globs:
        return re.compile(r"(?!)")
    return re.compile("|".join(f"(?:{_compile_glob(glob).pattern})" for glob in globs), re.DOTALL)


@functools.lru_cache(maxsize=512)
def _compile_glob(glob: str) -> re.Pattern[str]:
    glob = glob.strip().lstrip("/")
    if glob.endswith("/"):
        glob += "**"
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("(?:/.*)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and (close := glob.find("]", i + 2)) > 0:
            body = glob[i + 1 : close]
            negate = body.startswith(("!", "^"))
            body = re.escape(body[1:] if negate else body).replace("\\-", "-")
            out.append(f"[{'^' if negate else ''}{body}]")
            i = close + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)
