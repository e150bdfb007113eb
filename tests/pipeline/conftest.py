"""The pipeline wing's fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy between the tests and 127.0.0.1, and the auto-write and dedupe variables at their defaults."""
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AGENT_VAULT_AUTO_WRITE", raising=False)
    monkeypatch.delenv("AGENT_VAULT_DEDUPE", raising=False)
