"""The recall wing's fixtures: the conversation vault, indexed once per module or afresh per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.workspace import Workspace
from tests.helpers.conversations import write_vault
from tests.helpers.workspaces import workspace


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    """The conversation vault, indexed once for the module (tests must not change it)."""
    root = tmp_path_factory.mktemp("recall") / "vault"
    write_vault(root)
    ws = workspace(root, data_dir=tmp_path_factory.mktemp("recall-data"))
    ws.indexer().sync()
    yield ws
    ws.close()


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[tuple[Path, Workspace]]:
    """A vault of its own, indexed, for tests that change it or record accesses."""
    root = tmp_path / "vault"
    write_vault(root)
    ws = workspace(root)
    ws.indexer().sync()
    yield root, ws
    ws.close()
