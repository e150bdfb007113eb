"""The `forward` processor against a real local HTTP server and a real JSONL file: each entry once across runs, the
bearer token from the environment, retries with backoff, failures reported without stopping the rest of the run,
redaction before anything leaves, dry runs that send nothing."""

from __future__ import annotations

import io
import json
import socket
import urllib.parse
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from companion.cli import main
from companion.config import parse_config
from companion.errors import ConfigError
from companion.pipeline import forward as forward_module
from companion.pipeline.forward import shown_url
from companion.pipeline.history import serialize
from companion.pipeline.run import AgentReport, process_vault
from companion.specs import ForwardSpec
from companion.vault.audit import AuditLog
from tests.helpers.history import Hook, history_config

NOW = datetime(2026, 3, 22, 12, tzinfo=UTC)
SECRET_KEY = "sk-" + "A1b2C3d4" * 4
SECRET_EMAIL = "jane.doe@example.com"


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """No proxy between the tests and 127.0.0.1, and retry waits recorded instead of slept."""
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    waits: list[float] = []
    monkeypatch.setattr(forward_module, "_pause", waits.append)
    return waits


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"


def write_log(vault: Path, ids_ages: list[tuple[str, float]], agent: str = "sentinel", extra: str = "ok") -> Path:
    """Append entries (`id`, age in days before NOW) to the agent's log; return the log."""
    path = vault / "agents" / agent / "history.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        serialize({"id": i, "ts": (NOW - timedelta(days=age)).isoformat(), "agent": agent, "text": extra})
        for i, age in ids_ages
    ]
    with path.open("ab") as handle:
        handle.write(b"".join(line + b"\n" for line in lines))
    return path


def config(processors: str) -> str:
    return history_config(processors)


def webhook(url: str, extra: str = "") -> str:
    return f"    - type: forward\n      sink: webhook\n      url: {url}\n{extra}"


def run(vault: Path, yaml_text: str, **kwargs: object) -> AgentReport:
    (report,) = process_vault(vault, parse_config(yaml_text), NOW, **kwargs)  # type: ignore[arg-type]
    return report


def test_webhook_gets_each_entry_once_across_runs_with_the_bearer_token(
    tmp_path: Path, hook: Hook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOK_TOKEN", "tok-123")
    write_log(tmp_path, [(f"e{i}", 1) for i in range(5)])
    text = config(webhook(hook.url, "      token_env: HOOK_TOKEN\n      batch: 2\n"))
    audit = AuditLog(tmp_path / "data")

    first = run(tmp_path, text, audit=audit)
    assert first.forwards[0].sent == 5 and first.forwards[0].problem is None and not first.warnings
    assert len(hook.requests) == 3  # batches of 2, 2, 1
    headers, body = hook.requests[0]
    assert headers["Authorization"] == "Bearer tok-123" and headers["Content-Type"] == "application/json"
    assert json.loads(body)["agent"] == "sentinel"
    # The state sits in the data dir the audit log uses, not in the vault.
    assert first.forwards[0].state.parent == tmp_path / "data" / "forward" and first.forwards[0].state.is_file()

    write_log(tmp_path, [("e5", 0)])
    second = run(tmp_path, text, audit=audit)
    assert second.forwards[0].sent == 1
    assert hook.ids == [f"e{i}" for i in range(6)]  # each exactly once
    assert run(tmp_path, text, audit=audit).forwards[0].sent == 0
    assert len(hook.requests) == 4
    assert "Forwarded 1 of sentinel's" in audit.log_path.read_text(encoding="utf-8")


def test_unreachable_endpoint_is_retried_reported_and_the_log_waits_for_it(
    tmp_path: Path, hook: Hook, no_proxy: list[float]
) -> None:
    log = write_log(tmp_path, [("old", 10), ("new1", 1), ("new2", 0)])
    lists = """    - type: retain
      max_age_days: 5
    - type: archive
      destination: ./cold
"""
    down = closed_port_url()
    report = run(tmp_path, config(webhook(down, "      retries: 3\n      backoff_s: 0.01\n") + lists))
    assert no_proxy == [0.01, 0.02, 0.04]  # three retries, doubling
    (forward,) = report.forwards
    assert forward.sent == 0 and forward.pending == 3
    assert forward.problem is not None and shown_url(down) in forward.problem and "after 4 attempts" in forward.problem
    # "old" was never forwarded: dropping it now would keep it from the webhook for good, so the log keeps it.
    assert report.dropped == () and report.held is not None and "not recorded as forwarded" in report.held
    assert report.warnings == (forward.problem, report.held)
    assert [line["id"] for line in map(json.loads, log.read_bytes().splitlines())] == ["old", "new1", "new2"]
    assert not (tmp_path / "cold").exists()
    # A later run with the endpoint up sends all of it, and only then drops (and archives) "old".
    later = run(tmp_path, config(webhook(hook.url) + lists))
    assert later.forwards[0].sent == 3 and hook.ids == ["old", "new1", "new2"] and later.dropped == ("old",)
    assert [line["id"] for line in map(json.loads, log.read_bytes().splitlines())] == ["new1", "new2"]
    assert len(list((tmp_path / "cold" / "sentinel").glob("*.jsonl.xz"))) == 1


def test_a_500_then_a_200_succeeds_on_retry(tmp_path: Path, hook: Hook, no_proxy: list[float]) -> None:
    write_log(tmp_path, [("a", 1), ("b", 0)])
    hook.statuses = [500]
    report = run(tmp_path, config(webhook(hook.url, "      backoff_s: 0.01\n")))
    assert report.forwards[0].sent == 2 and report.forwards[0].problem is None
    assert len(hook.requests) == 2 and no_proxy == [0.01] and hook.ids == ["a", "b"]


def test_a_refusal_is_not_retried(tmp_path: Path, hook: Hook, no_proxy: list[float]) -> None:
    write_log(tmp_path, [("a", 1)])
    hook.statuses = [401]
    report = run(tmp_path, config(webhook(hook.url)))
    assert report.forwards[0].pending == 1 and "HTTP 401" in (report.forwards[0].problem or "")
    assert len(hook.requests) == 1 and no_proxy == []


def test_missing_token_variable_sends_nothing_and_says_so(
    tmp_path: Path, hook: Hook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOT_SET_TOKEN", raising=False)
    write_log(tmp_path, [("a", 1)])
    report = run(tmp_path, config(webhook(hook.url, "      token_env: NOT_SET_TOKEN\n")))
    assert "NOT_SET_TOKEN" in (report.forwards[0].problem or "") and hook.requests == []


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[urllib.request.Request]:
    """Every request the forward sink makes, answered 200 without touching the network."""
    requests: list[urllib.request.Request] = []

    def urlopen(request: urllib.request.Request, timeout: float) -> io.BytesIO:
        requests.append(request)
        return io.BytesIO(b"")

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    return requests


@pytest.mark.parametrize(
    "url",
    [
        "http://example.invalid/hook",
        "http://10.0.0.5:8080/hook",
        "http://127.0.0.1.example.invalid/hook",
        "http://[::ffff:10.0.0.5]/hook",
    ],
)
def test_a_token_is_never_sent_over_plain_http_to_another_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sent: list[urllib.request.Request], url: str
) -> None:
    monkeypatch.setenv("HOOK_TOKEN", "tok-123")
    write_log(tmp_path, [("a", 1), ("b", 0)])
    report = run(tmp_path, config(webhook(url, "      token_env: HOOK_TOKEN\n")), state_dir=tmp_path / "state")
    (forward,) = report.forwards
    host = urllib.parse.urlsplit(url).hostname
    assert forward.sent == 0 and forward.pending == 2 and report.warnings == (forward.problem,)
    assert forward.problem is not None and forward.problem.startswith(shown_url(url) + ": ")
    assert f"sends a bearer token (token_env HOOK_TOKEN) over plain http to {host}," in forward.problem
    assert "use https, or a loopback address" in forward.problem and "tok-123" not in forward.problem
    assert sent == [] and not forward.state.exists()
    # The entries stayed unsent: the same sink without a token sends them all on a later run.
    later = run(tmp_path, config(webhook(url)), state_dir=tmp_path / "state")
    assert later.forwards[0].sent == 2 and [r.get_header("Authorization") for r in sent] == [None]


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:8080/hook",
        "http://127.0.0.2:8080/hook",
        "http://[::1]:8080/hook",
        "https://example.invalid/hook",
    ],
)
def test_a_token_goes_over_https_or_to_a_loopback_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sent: list[urllib.request.Request], url: str
) -> None:
    monkeypatch.setenv("HOOK_TOKEN", "tok-123")
    write_log(tmp_path, [("a", 1)])
    report = run(tmp_path, config(webhook(url, "      token_env: HOOK_TOKEN\n")), state_dir=tmp_path / "state")
    assert report.forwards[0].sent == 1 and report.forwards[0].problem is None
    assert [(r.full_url, r.get_header("Authorization")) for r in sent] == [(url, "Bearer tok-123")]


def test_seeded_secrets_never_reach_the_webhook_or_the_jsonl_sink(tmp_path: Path, hook: Hook) -> None:
    write_log(tmp_path, [("s", 1)], extra=f"key {SECRET_KEY}, mail {SECRET_EMAIL}")
    # Forward listed before redact: redaction still comes first.
    text = config(webhook(hook.url) + "    - type: forward\n      path: ./out/{agent}.jsonl\n    - type: redact\n")
    report = run(tmp_path, text, state_dir=tmp_path / "state")
    assert [f.sent for f in report.forwards] == [1, 1] and report.replaced == ("s",)
    sink = (tmp_path / "out" / "sentinel.jsonl").read_bytes()
    for received in (hook.requests[0][1], sink):
        text_sent = received.decode("utf-8")
        assert SECRET_KEY not in text_sent and SECRET_EMAIL not in text_sent
        assert "[REDACTED:openai_key]" in text_sent and "[REDACTED:email]" in text_sent


def test_the_jsonl_sink_appends_and_never_duplicates(tmp_path: Path) -> None:
    log = write_log(tmp_path, [("a", 2), ("b", 1)])
    sink = tmp_path / "forwarded" / "sentinel.jsonl"
    sink.parent.mkdir()
    sink.write_bytes(b'{"earlier":true}\n')
    text = config("    - type: forward\n")
    assert run(tmp_path, text).forwards[0].sent == 2
    assert run(tmp_path, text).forwards[0].sent == 0
    write_log(tmp_path, [("c", 0)])
    assert run(tmp_path, text).forwards[0].sent == 1
    lines = sink.read_bytes().splitlines()
    assert lines[0] == b'{"earlier":true}' and lines[1:] == log.read_bytes().splitlines()
    # Without a data dir, the state hides next to the log.
    assert [p.name for p in log.parent.glob(".history.jsonl.jsonl-*.forwarded")]


def test_dry_run_sends_nothing_and_counts(tmp_path: Path, hook: Hook) -> None:
    write_log(tmp_path, [("a", 1), ("b", 0)])
    text = config(webhook(hook.url) + "    - type: forward\n")
    before = sorted(p for p in tmp_path.rglob("*"))
    report = run(tmp_path, text, dry_run=True, state_dir=tmp_path / "state")
    assert [(f.sent, f.pending) for f in report.forwards] == [(2, 0), (2, 0)]
    assert hook.requests == [] and sorted(p for p in tmp_path.rglob("*")) == before


def test_cli_reports_a_failed_sink_as_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_proxy: list[float]
) -> None:
    vault = tmp_path / "vault"
    write_log(vault, [("a", 1)])
    (vault / ".companion").mkdir()
    down = closed_port_url()
    (vault / ".companion" / "companion.yaml").write_text(
        config(webhook(down, "      retries: 1\n      backoff_s: 0.01\n")), encoding="utf-8"
    )
    args = ["process", "--vault", str(vault), "--data-dir", str(tmp_path / "data"), "--as-of", NOW.isoformat()]
    assert main([*args, "--dry-run"]) == 0
    assert "would forward 1 to " + shown_url(down) in capsys.readouterr().out
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"warning: {shown_url(down)}: could not forward 1 entries" in out
    assert main([*args, "--json"]) == 0
    (agent,) = json.loads(capsys.readouterr().out)["agents"]
    assert agent["forwards"][0]["pending"] == 1 and shown_url(down) in agent["warnings"][0]


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("sink: webhook\n", "sink webhook needs url"),
        (f"sink: webhook\n      url: http://x\n      token_env: {SECRET_KEY}\n", "never the token itself"),
        ("url: http://x\n", "only used with sink: webhook"),
        ("sink: webhook\n      url: http://x\n      batch: 0\n", "batch must be at least 1"),
        ("sink: ftp\n", "expected one of 'jsonl', 'webhook'"),
        ("headers: {}\n", "unknown key 'headers'"),
    ],
)
def test_config_errors(item: str, expected: str) -> None:
    with pytest.raises(ConfigError, match="line") as caught:
        parse_config(config(f"    - type: forward\n      {item}"))
    assert expected in str(caught.value)


def test_config_defaults() -> None:
    (spec,) = parse_config(config("    - type: forward\n")).session_history.processors
    assert spec == ForwardSpec()
    assert (spec.jsonl_path, spec.timeout_s, spec.retries, spec.backoff_s, spec.batch) == (
        "./forwarded/{agent}.jsonl",
        10.0,
        3,
        0.5,
        100,
    )


def test_a_webhook_url_is_shown_without_its_secret_parts() -> None:
    shown = shown_url("https://user:pass@hooks.example.com:8443/services/T000/B000/XXXX?token=abc")
    assert shown == "https://hooks.example.com:8443/…"
    assert shown_url("http://127.0.0.1:9000") == "http://127.0.0.1:9000"


def test_a_batch_left_in_flight_by_a_killed_run_goes_again_first_with_the_same_key(tmp_path: Path, hook: Hook) -> None:
    write_log(tmp_path, [(f"e{i}", 1) for i in range(5)])
    text = config(webhook(hook.url, "      batch: 2\n"))
    state_dir = tmp_path / "state"
    run(tmp_path, text, state_dir=state_dir)
    first_keys = [headers["Idempotency-Key"] for headers, _ in hook.requests]
    (state,) = state_dir.iterdir()
    # As a run killed while its second batch was out leaves it: e2 and e3 announced, their answer never recorded.
    state.write_text('{"forwarded": ["e0", "e1"], "sending": ["e2", "e3"]}\n?\n', encoding="utf-8")
    hook.requests.clear()
    # Even with larger batches configured since, that batch goes again as it was.
    report = run(tmp_path, config(webhook(hook.url, "      batch: 3\n")), state_dir=state_dir)
    assert report.forwards[0].sent == 3 and hook.ids == ["e2", "e3", "e4"] and len(hook.requests) == 2
    assert hook.requests[0][0]["Idempotency-Key"] == first_keys[1]  # the webhook can tell it is the same batch
    # A batch whose answer was recorded in place is never sent again.
    state.write_text('{"forwarded": ["e0", "e1"], "sending": ["e2", "e3"]}\n+\n', encoding="utf-8")
    hook.requests.clear()
    assert run(tmp_path, text, state_dir=state_dir).forwards[0].sent == 1 and hook.ids == ["e4"]


def test_a_state_written_before_the_sink_size_was_recorded_is_still_honoured(tmp_path: Path) -> None:
    write_log(tmp_path, [("a", 2), ("b", 1)])
    text = config("    - type: forward\n")
    run(tmp_path, text)
    (state,) = (tmp_path / "agents" / "sentinel").glob(".history.jsonl.jsonl-*.forwarded")
    state.write_text('{"forwarded": ["a", "b"]}\n', encoding="utf-8")
    sink = tmp_path / "forwarded" / "sentinel.jsonl"
    sink.write_bytes(b"")  # the sink rotated away: the state alone says what went
    assert run(tmp_path, text).forwards[0].sent == 0 and sink.read_bytes() == b""
