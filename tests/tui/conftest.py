"""The app's fixtures: a workspace on the conversation vault, its data beside it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.workspace import Workspace
from tests.helpers.conversations import write_vault
from tests.helpers.workspaces import workspace


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    """A workspace on the conversation vault (not yet indexed: the app catches up itself)."""
    root = tmp_path / "vault"
    write_vault(root)
    space = workspace(root, data_dir=tmp_path / "data")
    yield space
    space.close()
