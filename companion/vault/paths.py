"""Paths inside the vault: whether a path stays in it once symlinks are followed, how it is shown, and a folder
spelled as the vault already spells it.

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


def existing_folder(vault_root: Path, folder: str) -> str:
    """`folder` (vault-relative, POSIX) spelled as the vault already has it, name by name: a folder that exists in
    another case (`memory/` for `Memory`) is the one used, so a write lands in the user's folder and not in a second
    one beside it (on a file system that tells cases apart). A name that exists as written is kept as written (even
    a file or a link, for the write to refuse), and the names from the first one not found on are kept as given."""
    parts = [part for part in folder.split("/") if part]
    current = vault_root
    spelled: list[str] = []
    for depth, part in enumerate(parts):
        found = _folder_entry(current, part)
        if found is None:
            return "/".join(spelled + parts[depth:])
        spelled.append(found)
        current = current / found
    return "/".join(spelled)


def _folder_entry(folder: Path, name: str) -> str | None:
    """The entry of `folder` that `name` means: itself, else the one real folder (the first by name when several)
    whose name equals it but for case; None when there is none."""
    try:
        with os.scandir(folder) as entries:
            names = {entry.name: entry.is_dir(follow_symlinks=False) for entry in entries}
    except OSError:  # not a folder (yet), or unreadable: the name is taken as given
        return None
    if name in names:
        return name
    wanted = name.casefold()
    matches = sorted(entry for entry, is_dir in names.items() if is_dir and entry.casefold() == wanted)
    return matches[0] if matches else None
