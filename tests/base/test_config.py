"""`.companion/companion.yaml`: defaults, errors naming file, line and key, round trips."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.config import (
    CompanionConfig,
    EmbeddingConfig,
    IndexConfig,
    SessionsConfig,
    StoreConfig,
    load_config,
    matches,
    save_config,
)
from companion.errors import ConfigError
from companion.locations import config_path


def write_config(vault: Path, text: str) -> Path:
    path = config_path(vault)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def error_for(vault: Path, text: str) -> str:
    write_config(vault, text)
    with pytest.raises(ConfigError) as caught:
        load_config(vault)
    return str(caught.value)


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config == CompanionConfig()
    assert config.index.include == ("**/*.md",)
    assert config.index.exclude == ("ops/**",)
    assert config.index.conversation_folders == ()
    assert config.index.max_note_mb == 5
    assert config.sessions.folder == "ops/sessions"
    assert config.store.chroma_url is None
    assert config.embedding == EmbeddingConfig("minilm", None, None, None)
    assert config.max_note_bytes == 5 * 1024 * 1024


def test_empty_file_and_empty_sections_give_defaults(tmp_path: Path) -> None:
    write_config(tmp_path, "# nothing yet\n")
    assert load_config(tmp_path) == CompanionConfig()
    write_config(tmp_path, "index:\nstore:\n")
    assert load_config(tmp_path) == CompanionConfig()


def test_a_full_file_is_read(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        """
index:
  include: ["Chats/**/*.md", "Memory/*.md"]
  exclude: []
  conversation_folders: [Chats]
  max_note_mb: 0.5
sessions:
  folder: agent/sessions
store:
  chroma_url: http://127.0.0.1:8000
embedding:
  provider: openai
  model: nomic-embed-text
  url: http://localhost:11434/v1
  api_key_env: OLLAMA_KEY
""",
    )
    assert load_config(tmp_path) == CompanionConfig(
        index=IndexConfig(("Chats/**/*.md", "Memory/*.md"), (), ("Chats",), 0.5),
        sessions=SessionsConfig("agent/sessions"),
        store=StoreConfig("http://127.0.0.1:8000"),
        embedding=EmbeddingConfig("openai", "nomic-embed-text", "http://localhost:11434/v1", "OLLAMA_KEY"),
    )


def test_unknown_key_names_file_line_key_and_allowed_keys(tmp_path: Path) -> None:
    message = error_for(tmp_path, "index:\n  include: ['*.md']\n  exlude: ['ops/**']\n")
    assert str(config_path(tmp_path)) in message
    assert "line 3" in message
    assert "'exlude'" in message
    assert "allowed keys: include, exclude, conversation_folders, max_note_mb" in message


def test_unknown_top_level_section(tmp_path: Path) -> None:
    message = error_for(tmp_path, "store: {}\nretension:\n  hot_limit: 3\n")
    assert "line 2" in message
    assert "'retension'" in message
    assert "allowed keys: index, sessions, store, embedding, retention" in message


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("index:\n  include: '*.md'\n", 2, "index.include: expected a list of strings"),
        ("index:\n  include: [1]\n", 2, "index.include: expected a string"),
        ("index:\n  max_note_mb: five\n", 2, "index.max_note_mb: expected a number"),
        ("index:\n  max_note_mb: -1\n", 2, "expected a positive number"),
        ("index:\n  max_note_mb: true\n", 2, "expected a number, got bool"),
        ("sessions: ops/sessions\n", 1, "sessions: expected a mapping"),
        ("store:\n  chroma_url: 8000\n", 2, "store.chroma_url: expected a string"),
        ("embedding:\n  provider: torch\n", 2, "expected one of 'minilm', 'openai', 'hash'"),
        ("- a list\n", 1, "the top level: expected a mapping"),
        ("index:\n  include: []\n  include: []\n", 3, "given twice"),
        ("recall:\n  lexical_trust: 1.5\n", 2, "lexical_trust must be within 0 and 1"),
        ("recall:\n  dense_span: 3\n", 2, "dense_span must be within 0 and 2"),
    ],
)
def test_wrong_types_name_line_and_key(tmp_path: Path, text: str, line: int, expected: str) -> None:
    message = error_for(tmp_path, text)
    assert f"companion.yaml, line {line}:" in message
    assert expected in message


def test_invalid_yaml_names_file_and_line(tmp_path: Path) -> None:
    message = error_for(tmp_path, "index:\n  include: [a, b\nstore: {}\n")
    assert str(config_path(tmp_path)) in message
    assert "line 3" in message
    assert "invalid YAML" in message


def test_save_then_load_round_trips(tmp_path: Path) -> None:
    config = CompanionConfig(
        index=IndexConfig(("**/*.md",), ("ops/**", "Archive/**"), ("Chats",), 2.5),
        sessions=SessionsConfig("ops/sessions"),
        store=StoreConfig("http://127.0.0.1:8000"),
        embedding=EmbeddingConfig("openai", "m", "http://x/v1", "KEY_ENV"),
    )
    path = save_config(tmp_path, config)
    assert path == config_path(tmp_path)
    assert load_config(tmp_path) == config
    assert [p.name for p in path.parent.iterdir()] == ["companion.yaml"]
    save_config(tmp_path, CompanionConfig())
    assert load_config(tmp_path) == CompanionConfig()


@pytest.mark.parametrize(
    ("glob", "path", "expected"),
    [
        ("**/*.md", "a.md", True),
        ("**/*.md", "x/y/z/a.md", True),
        ("**/*.md", "a.txt", False),
        ("ops/**", "ops/sessions/2026-01-01/a.md", True),
        ("ops/**", "ops", True),
        ("ops/**", "opsx/a.md", False),
        ("ops/", "ops/a.md", True),
        ("*.md", "a.md", True),
        ("*.md", "dir/a.md", False),
        ("a/**/b.md", "a/b.md", True),
        ("a/**/b.md", "a/x/y/b.md", True),
        ("a/**/b.md", "ab.md", False),
        ("Notes/?.md", "Notes/x.md", True),
        ("Notes/?.md", "Notes/xy.md", False),
        ("[AB]*.md", "Alpha.md", True),
        ("[!AB]*.md", "Alpha.md", False),
        ("Ops/**", "ops/a.md", False),
        ("my notes (old)/*.md", "my notes (old)/a.md", True),
        ("/Notes/*.md", "Notes/a.md", True),
    ],
)
def test_glob_matching(glob: str, path: str, expected: bool) -> None:
    assert matches(glob, path) is expected


PROCESSORS = """
session_history:
  sources:
    - path: ./agents/{agent}/history.jsonl
  processors:
    - type: retain
      max_age_days: 30
      max_size_mb: 100
    - type: archive
      older_than_days: 30
      destination: ./cold-storage
    - type: redact
      patterns: ['PROJECT-\\d+']
      trigger: on_schedule
      interval_minutes: 60
agents:
  sentinel:
    processors:
      - type: archive
        older_than_days: 3
      - type: retain
        max_age_days: 3
        trigger: on_size_threshold
        threshold_mb: 50
    allow_data_loss: false
  quiet:
    allow_data_loss: true
"""


def test_processors_are_read_and_survive_save_and_load(tmp_path: Path) -> None:
    from companion.specs import AgentConfig, ArchiveSpec, RedactSpec, RetainSpec, SourceConfig

    write_config(tmp_path, PROCESSORS)
    config = load_config(tmp_path)
    history = config.session_history
    assert history.sources == (SourceConfig("./agents/{agent}/history.jsonl"),)
    assert history.processors == (
        RetainSpec(max_age_days=30, max_size_mb=100),
        ArchiveSpec(older_than_days=30, destination="./cold-storage"),
        RedactSpec(patterns=(r"PROJECT-\d+",), trigger="on_schedule", interval_minutes=60),
    )
    assert config.agents == {
        "sentinel": AgentConfig(
            processors=(
                ArchiveSpec(older_than_days=3),
                RetainSpec(max_age_days=3, trigger="on_size_threshold", threshold_mb=50),
            ),
            allow_data_loss=False,
        ),
        "quiet": AgentConfig(processors=None, allow_data_loss=True),
    }
    save_config(tmp_path, config)
    assert load_config(tmp_path) == config


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "session_history:\n  processors:\n    - type: embedd\n",
            "line 3: session_history.processors[0].type: unknown processor type 'embedd'; built types: retain, "
            "archive, redact, forward, summarize, extract, embed",
        ),
        (
            "agents:\n  s:\n    processors:\n      - type: retain\n        max_age: 3\n",
            "line 5: agents.s.processors[0].max_age: unknown key 'max_age'",
        ),
        ("agents:\n  s:\n    procesors: []\n", "line 3: agents.s.procesors: unknown key"),
        (
            "session_history:\n  processors:\n    - max_age_days: 3\n",
            "line 3: session_history.processors[0]: missing 'type'",
        ),
        ("session_history:\n  processors:\n    - type: retain\n", "retain needs max_age_days or max_size_mb"),
        (
            "session_history:\n  processors:\n    - type: retain\n      max_age_days: 1\n      trigger: hourly\n",
            "line 5: session_history.processors[0].trigger: expected one of 'on_write'",
        ),
        (
            "session_history:\n  processors:\n    - type: archive\n      trigger: on_size_threshold\n",
            "trigger on_size_threshold needs threshold_mb",
        ),
        (
            "session_history:\n  processors:\n    - type: redact\n      patterns: ['(']\n",
            "not a valid regular expression",
        ),
        ("session_history:\n  sources:\n    - path: logs/history.jsonl\n", "must contain {agent}"),
        ("agents: [sentinel]\n", "line 1: agents: expected a mapping of names to settings"),
    ],
)
def test_processor_config_errors_name_file_line_and_key(tmp_path: Path, text: str, expected: str) -> None:
    message = error_for(tmp_path, text)
    assert message.startswith(str(config_path(tmp_path)))
    assert expected in message


@pytest.mark.parametrize("value", ["0", "0.0", "-1", "-0.5", ".nan", ".inf"])
def test_max_note_mb_out_of_range_gets_one_message(tmp_path: Path, value: str) -> None:
    # 0 and a negative number once took different checks with different words (one of them offering 0).
    message = error_for(tmp_path, f"index:\n  include: ['**/*.md']\n  max_note_mb: {value}\n")
    assert "companion.yaml, line 3: index.max_note_mb: expected a positive number (more than 0), got " in message
    assert "(or 0)" not in message and "skipped" in message


def test_imports_follow_names_the_agents_to_follow(tmp_path: Path) -> None:
    write_config(tmp_path, "imports:\n  follow: [claude-code, gemini]\n")
    assert load_config(tmp_path).imports.follow == ("claude-code", "gemini")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "imports:\n  follow: [claude]\n",
            "imports.follow: expected one of 'claude-code', 'codex', 'gemini', got 'claude'",
        ),
        ("imports:\n  follow: codex\n", "imports.follow: expected a list of strings"),
        ("imports:\n  follow: [codex, codex]\n", "imports.follow: codex is named more than once"),
    ],
)
def test_imports_follow_errors_name_the_key(tmp_path: Path, text: str, expected: str) -> None:
    message = error_for(tmp_path, text)
    assert "companion.yaml, line 2:" in message
    assert expected in message
