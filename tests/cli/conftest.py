"""Fixtures for the command-line tests: the conversations vault and its index, made once per module that asks
for them (a module that defines its own `vault` gets that one instead)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_companion
from tests.helpers.conversations import write_vault
from tests.helpers.files import write


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The conversations vault, embedded with the hash provider so no model is needed."""
    root = tmp_path_factory.mktemp("cli") / "vault"
    write_vault(root)
    write(root, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    return root


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, vault: Path) -> str:
    """A data folder holding `vault`'s index, built by a real `companion index`."""
    path = str(tmp_path_factory.mktemp("cli-data"))
    out = run_companion("index", "--vault", str(vault), "--data-dir", path)
    assert out.returncode == 0, out.stderr
    return path
