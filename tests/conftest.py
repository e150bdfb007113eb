"""Fixtures for every test: each gets its own data root, so no test touches the user's index."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_data(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPANION_DATA_DIR", str(tmp_path_factory.mktemp("data")))
    for name in (
        "AGENT_VAULT_PATH",
        "AGENT_OBSIDIAN_DISCOVER",
        "AGENT_OBSIDIAN_VAULT_NAME_SUBSTRING",
        "AGENT_OBSIDIAN_REQUIRE_DOT_OBSIDIAN",
    ):
        monkeypatch.delenv(name, raising=False)
