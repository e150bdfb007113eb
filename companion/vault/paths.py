"""Paths inside the vault: whether a path stays in it once symlinks are followed, and how it is shown.

Every derived note, restored note and session-notes folder is checked here before anything is read or written, so
the rule (the nearest existing folder on the way, resolved; a symlink loop counts as outside) is the same for all.
"""

from __future__ import annotations

import os
from pathlib import Path


def inside_vault(vault_root: Path, path: Path) -> bool:
    """Whether `path` (existing or not) ends up inside the vault once symlinks on its way are followed."""
    # A link counts even when it is dangling or loops: it is what a write would follow.
    while not os.path.lexists(path) and path.parent != path:
        path = path.parent
    try:
        return path.resolve().is_relative_to(vault_root.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        return False


def vault_relative(vault_root: Path, path: Path) -> str:
    """`path` relative to the vault root (POSIX), as notes and the audit log record it; outside the vault, whole."""
    try:
        return path.resolve().relative_to(vault_root.resolve()).as_posix()
    except ValueError:
        return str(path)
