"""The pipeline wing's fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from tests.helpers.history import Hook, local_http


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy between the tests and 127.0.0.1, and the auto-write and dedupe variables at their defaults."""
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AGENT_VAULT_AUTO_WRITE", raising=False)
    monkeypatch.delenv("AGENT_VAULT_DEDUPE", raising=False)


@pytest.fixture
def hook() -> Iterator[Hook]:
    state = Hook(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status = state.statuses.pop(0) if state.statuses else 200
            state.requests.append((dict(self.headers.items()), body if status == 200 else b""))
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    with local_http(Handler) as base:
        state.url = base + "/hook"
        yield state
