"""Fixtures for the curator's tests: the shared vault and the folder for its audit log. A module that defines its
own `vault` (most here do) gets that one instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.curationvault import DROP, KEEP, OTHER, PROP, write


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A vault of linked notes, one each with CRLF endings, a BOM, no frontmatter, and a binary attachment."""
    root = tmp_path / "My Vault"
    write(root, ".obsidian/app.json", json.dumps({"trashOption": "local"}))
    write(root, "Keep.md", KEEP)
    write(root, "people/Drop.md", DROP)
    write(root, "notes/Other.md", OTHER)
    write(root, "notes/Prop.md", PROP)
    write(root, "Unrelated.md", "No links to the drop here. [[Keep]]\n")
    write(root, "Plain.md", "A note without frontmatter.\n")
    write(root, "Pinned.md", "---\ntitle: x\npinned: true\n---\nbody\n")
    write(root, "Windows.md", b"---\r\ntitle: CRLF note\r\n---\r\nline one\r\nline two\r\n")
    write(root, "Bom.md", "\ufeff---\ntitle: BOM note\n---\nbody\n")
    write(root, "attachments/pic.png", b"\x89PNG\r\n\x1a\n\x00\x01binary")
    return root


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """Where the curator keeps its audit log (not made until something is recorded)."""
    return tmp_path / "data"
