"""The app's fixtures: a workspace on the conversation vault, its data beside it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.workspace import Workspace
from tests.helpers.conversations import NOW, write_vault
from tests.helpers.workspaces import workspace


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    """A workspace on the conversation vault (not yet indexed: the app catches up itself)."""
    root = tmp_path / "vault"
    write_vault(root)
    # The files' times show in the app (the notes changed last): moved to the tests' own moment, in the order they
    # were written, so a snapshot does not change with the day it is taken.
    files = sorted((p for p in root.rglob("*") if p.is_file()), key=lambda p: p.stat().st_mtime_ns)
    start = int(NOW.timestamp() * 1e9) - 60_000_000_000
    first = files[0].stat().st_mtime_ns if files else 0
    for path in files:
        moved = start + min(path.stat().st_mtime_ns - first, 50_000_000_000)
        os.utime(path, ns=(moved, moved))
    space = workspace(root, data_dir=tmp_path / "data")
    yield space
    space.close()
