"""Workspaces on temporary vaults, with the hashing embedder unless a test brings another."""

from __future__ import annotations

from pathlib import Path

from companion.embedding.hashing import HashEmbedder
from companion.embedding.providers import Embedder
from companion.workspace import Workspace


def workspace(vault: Path, embedder: Embedder | None = None, data_dir: Path | None = None) -> Workspace:
    """A workspace on `vault` with the given embedder (the hashing one by default)."""
    return Workspace.open(vault, data_dir=data_dir, embedder=embedder if embedder is not None else HashEmbedder())
