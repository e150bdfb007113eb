"""The indexer's fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.workspace import Workspace
from tests.helpers.workspaces import workspace


@pytest.fixture
def hash_ws(tmp_path: Path) -> Iterator[Workspace]:
    """A workspace on an empty vault in tmp_path, indexed with the hashing embedder."""
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    ws = workspace(vault)
    yield ws
    ws.close()
