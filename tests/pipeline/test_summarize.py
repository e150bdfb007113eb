"""The `summarize` processor on real files and a real local HTTP endpoint: the extractive note and its frontmatter,
rolling updates that keep the user's text, redaction before summarizing, auto-write off, the model's reply as a
checked proposal with an extractive fallback, dry runs, the audit record."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import yaml

from companion.cli import main
from companion.config import parse_config
from companion.errors import ConfigError, ProcessError
from companion.pipeline.history import parse_entry
from companion.pipeline.processors import SummarizeProcessor
from companion.pipeline.run import AgentReport, process_vault
from companion.pipeline.summarize import MARKER, SummarizeError, ask_model
from companion.specs import SummarizeSpec
from companion.vault.audit import AuditLog
from companion.vault.parse import parse_note
from tests.helpers.history import history_config, local_http, write_history

NOW = datetime(2026, 3, 22, 12, tzinfo=UTC)
SECRET_KEY = "sk-" + "A1b2C3d4" * 4
NOTE = Path("Memory/Summaries/trader.md")

TEXTS = [
    "HEARTBEAT_OK",
    "The trader bought 40 shares of ACME at 12.50 after the earnings call.",
    "HEARTBEAT_OK",
    "Risk limits were lowered to 2 percent of the portfolio per position.",
    "We decided to stop trading options until the volatility model is fixed.",
    "HEARTBEAT_OK",
    "The volatility model underestimates tail risk on Mondays.",
]


def write_log(vault: Path, texts: list[str], agent: str = "trader") -> Path:
    return write_history(vault, texts, NOW, agent, system="You are a careful trader.")


def config(item: str = "    - type: summarize\n", before: str = "") -> str:
    return history_config(before + item)


def run(vault: Path, yaml_text: str, **kwargs: object) -> AgentReport:
    (report,) = process_vault(vault, parse_config(yaml_text), NOW, **kwargs)  # type: ignore[arg-type]
    return report


def front(text: str) -> dict[str, object]:
    data = yaml.safe_load(text.split("---\n")[1])
    assert isinstance(data, dict)
    return data


def test_extractive_note_content_and_frontmatter(tmp_path: Path) -> None:
    write_log(tmp_path, TEXTS)
    audit = AuditLog(tmp_path / "data")
    report = run(tmp_path, config(), audit=audit)
    (summary,) = report.summaries
    assert summary.written and summary.generated_by == "extractive" and not report.warnings
    text = (tmp_path / NOTE).read_text(encoding="utf-8")
    meta = front(text)
    assert meta["type"] == "summary" and meta["agent"] == "trader" and meta["entries"] == 7
    assert str(meta["date"]) == "2026-03-22" and meta["generated_by"] == "extractive"
    assert meta["source"] == "agents/trader/history.jsonl" and meta["updated"] == NOW.isoformat()
    assert "HEARTBEAT_OK" not in text and "careful trader" not in text  # boilerplate and the repeated prompt
    positions = [text.index(s) for s in ("40 shares", "Risk limits", "stop trading options", "tail risk")]
    assert positions == sorted(positions)  # time order
    assert text.rstrip().endswith(MARKER)
    # What recall's latest-summary lookup goes by: the project's parser reads a dated `type: summary` note.
    parsed = parse_note(NOTE.as_posix(), text.encode("utf-8"))
    assert parsed.note_type == "summary" and str(parsed.frontmatter["date"]) == "2026-03-22"
    (record,) = audit.entries()
    assert record.action == "summarize" and "Memory/Summaries/trader.md" in record.summary
    assert "agents/trader/history.jsonl" in record.summary and "extractive" in record.summary
    assert [c.path for c in record.changes] == ["Memory/Summaries/trader.md"]


def test_sentences_caps_the_summary_and_max_entries_the_window(tmp_path: Path) -> None:
    write_log(tmp_path, TEXTS)
    run(tmp_path, config("    - type: summarize\n      sentences: 1\n      max_entries: 3\n"))
    text = (tmp_path / NOTE).read_text(encoding="utf-8")
    assert front(text)["entries"] == 3
    assert ("tail risk" in text) != ("stop trading options" in text)  # one sentence, from the last 3 entries
    assert "40 shares" not in text and "Risk limits" not in text


def test_rolling_update_in_place_keeps_user_text_below_the_marker(tmp_path: Path) -> None:
    log = write_log(tmp_path, TEXTS[:3])
    run(tmp_path, config())
    note = tmp_path / NOTE
    note.write_text(note.read_text(encoding="utf-8") + "My own note: check ACME again in April.\n", encoding="utf-8")
    mine = note.read_text(encoding="utf-8")
    again = run(tmp_path, config())
    assert again.summaries[0].action == "unchanged" and note.read_text(encoding="utf-8") == mine

    write_log(tmp_path, TEXTS)
    assert log.exists()
    run(tmp_path, config())
    text = note.read_text(encoding="utf-8")
    assert "tail risk" in text and text.endswith(MARKER + "\nMy own note: check ACME again in April.\n")
    assert sorted(p.name for p in note.parent.iterdir()) == ["trader.md"]  # updated in place


def test_edits_above_the_marker_are_kept_and_a_note_without_marker_is_left_alone(tmp_path: Path) -> None:
    write_log(tmp_path, TEXTS[:2])
    run(tmp_path, config())
    note = tmp_path / NOTE
    note.write_text(note.read_text(encoding="utf-8").replace("40 shares", "40 (not 50!) shares"), encoding="utf-8")
    write_log(tmp_path, TEXTS)
    run(tmp_path, config())
    text = note.read_text(encoding="utf-8")
    assert "40 (not 50!) shares" in text.split(MARKER)[1]  # the user's edit moved below the marker
    assert "tail risk" in text.split(MARKER)[0]

    foreign = "---\ntype: summary\n---\nMy hand-written summary.\n"
    note.write_text(foreign, encoding="utf-8")
    report = run(tmp_path, config())
    assert note.read_text(encoding="utf-8") == foreign
    assert report.summaries[0].action == "skip" and any("has no line" in w for w in report.warnings)


def test_a_seeded_secret_never_reaches_the_summary_when_redact_is_in_the_list(tmp_path: Path) -> None:
    write_log(tmp_path, [*TEXTS, f"The broker API key is {SECRET_KEY} for the new account setup."])
    run(tmp_path, config(before="    - type: redact\n"))
    text = (tmp_path / NOTE).read_text(encoding="utf-8")
    assert SECRET_KEY not in text and "[REDACTED:openai_key]" in text


def test_auto_write_off_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_log(tmp_path, TEXTS)
    monkeypatch.setenv("AGENT_VAULT_AUTO_WRITE", "off")
    audit = AuditLog(tmp_path / "data")
    report = run(tmp_path, config(), audit=audit)
    assert not (tmp_path / "Memory").exists() and not audit.entries()
    assert report.summaries[0].action == "skip" and "AGENT_VAULT_AUTO_WRITE=off" in (report.summaries[0].reason or "")
    monkeypatch.setenv("AGENT_VAULT_AUTO_WRITE", "sometimes")
    with pytest.raises(ProcessError, match="AGENT_VAULT_AUTO_WRITE"):
        run(tmp_path, config())


def test_dedupe_off_writes_a_new_note_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_log(tmp_path, TEXTS[:2])
    run(tmp_path, config())
    monkeypatch.setenv("AGENT_VAULT_DEDUPE", "0")
    write_log(tmp_path, TEXTS)
    run(tmp_path, config())
    assert len(list((tmp_path / NOTE).parent.glob("*.md"))) == 2
    assert "tail risk" not in (tmp_path / NOTE).read_text(encoding="utf-8")


def test_dry_run_writes_nothing_and_says_what_it_would_write(tmp_path: Path) -> None:
    write_log(tmp_path, TEXTS)
    report = run(tmp_path, config(), dry_run=True)
    (summary,) = report.summaries
    assert summary.action == "write" and not summary.written and b"tail risk" in summary.content
    assert summary.path == tmp_path / NOTE and not (tmp_path / "Memory").exists()


def test_cli_dry_run_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "vault"
    write_log(vault, TEXTS)
    (vault / ".companion").mkdir()
    (vault / ".companion" / "companion.yaml").write_text(config(), encoding="utf-8")
    args = ["process", "--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--as-of", NOW.isoformat()]
    assert main([*args, "--dry-run"]) == 0
    assert f"would write summary {vault / NOTE} (extractive, 7 entries)" in capsys.readouterr().out
    assert not (vault / "Memory").exists()
    assert main([*args, "--json"]) == 0
    (agent,) = json.loads(capsys.readouterr().out)["agents"]
    assert agent["summaries"][0]["written"] and (vault / NOTE).exists()


@dataclass
class Endpoint:
    """A chat-completions endpoint on 127.0.0.1 answering with `reply`, recording each request body."""

    url: str = ""
    reply: str = "The trader cut risk and paused options trading."
    bodies: list[dict[str, object]] = field(default_factory=list)


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    state = Endpoint()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            state.bodies.append(json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0")))))
            body = json.dumps({"choices": [{"message": {"role": "assistant", "content": state.reply}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with local_http(Handler) as base:
        state.url = base + "/v1"
        yield state


def model_item(url: str) -> str:
    return f"    - type: summarize\n      url: {url}\n      model: tiny-llm\n      max_chars: 200\n"


def test_the_model_reply_is_used_and_logged_with_model_and_prompt(tmp_path: Path, endpoint: Endpoint) -> None:
    write_log(tmp_path, [*TEXTS, f"Key {SECRET_KEY} was rotated for the broker account."])
    audit = AuditLog(tmp_path / "data")
    report = run(tmp_path, config(model_item(endpoint.url), before="    - type: redact\n"), audit=audit)
    text = (tmp_path / NOTE).read_text(encoding="utf-8")
    assert "paused options trading" in text and not report.warnings
    assert front(text)["generated_by"] == "tiny-llm" and front(text)["prompt"] == "summarize-v1"
    (body,) = endpoint.bodies
    assert body["model"] == "tiny-llm" and SECRET_KEY not in json.dumps(body)  # redacted before it leaves
    (record,) = audit.entries()
    assert "tiny-llm" in record.summary and "summarize-v1" in record.summary


@pytest.mark.parametrize("reply", ["", "   ", "x" * 500, "fine\n---\nnot: frontmatter", f"ok {MARKER}"])
def test_an_unusable_reply_falls_back_to_extractive(tmp_path: Path, endpoint: Endpoint, reply: str) -> None:
    endpoint.reply = reply
    write_log(tmp_path, TEXTS)
    report = run(tmp_path, config(model_item(endpoint.url)))
    text = (tmp_path / NOTE).read_text(encoding="utf-8")
    assert front(text)["generated_by"] == "extractive" and "tail risk" in text
    assert report.warnings and "extractive summary was written instead" in report.warnings[0]


def test_a_closed_port_falls_back_to_extractive_with_a_warning(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    write_log(tmp_path, TEXTS)
    report = run(tmp_path, config(model_item(f"http://127.0.0.1:{port}/v1")))
    assert front((tmp_path / NOTE).read_text(encoding="utf-8"))["generated_by"] == "extractive"
    (warning,) = report.warnings
    assert f"127.0.0.1:{port}/v1/chat/completions: cannot reach the endpoint" in warning
    assert report.summaries[0].written


def test_a_dry_run_does_not_ask_the_model(tmp_path: Path, endpoint: Endpoint) -> None:
    write_log(tmp_path, TEXTS)
    run(tmp_path, config(model_item(endpoint.url)), dry_run=True)
    assert not endpoint.bodies and not (tmp_path / "Memory").exists()


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("output: /etc/x.md", "relative to the vault root"),
        ("output: ../outside/{agent}.md", "inside the vault"),
        ("output: .obsidian/{agent}.md", "dot-folder"),
        ("output: Memory/{agent}.txt", ".md note"),
        ("url: http://localhost:1/v1", "url needs model"),
        ("model: m", "only used with url"),
        ("max_entries: 0", "max_entries must be at least 1"),
    ],
)
def test_config_errors(item: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        parse_config(config(f"    - type: summarize\n      {item}\n"))


def test_config_defaults() -> None:
    (spec,) = parse_config(config()).session_history.processors
    assert spec == SummarizeSpec()
    assert (spec.output, spec.max_entries, spec.sentences) == ("Memory/Summaries/{agent}.md", 200, 8)


def test_the_endpoint_never_gets_a_token_over_plain_http_to_another_host(tmp_path: Path) -> None:
    spec = SummarizeSpec(url="http://models.example.invalid/v1", model="m", token_env="SUMMARY_TOKEN")
    processor = SummarizeProcessor(spec, tmp_path)
    entry = parse_entry(b'{"id":"a","ts":"2026-03-20T09:00:00+00:00","agent":"t","text":"We shipped it today."}')
    with pytest.raises(SummarizeError, match=r"plain http to models\.example\.invalid"):
        ask_model(processor, "t", [entry], {"SUMMARY_TOKEN": "secret-token"})
