"""Reading a vault the way a curation reads it: which paths may be curated, what each file holds now, how a note is
named, and where the vault's trash setting sends a deleted note.

Every read of a note goes through folders held open by descriptor (`HeldFolder`), opened one name at a time without
following a symbolic link: a folder swapped for a link while a curation runs can make it fail, never make it read
outside the vault. The `Curator` plans from these reads, and before it writes it reads every file again and refuses when
one is no longer as the plan (or, for an undo, the audit entry) left it.
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Mapping
from pathlib import Path

from companion.atomic import HeldFolder, LinkRefused, fit_name
from companion.config import CompanionConfig
from companion.curation.applying import Snapshot
from companion.curation.plans import Plan, PlannedWrite
from companion.errors import CompanionError, CurationError
from companion.vault.audit import AuditEntry, sha256_hex
from companion.vault.naming import NoteNames
from companion.vault.reader import ObsidianVault, _inside, _unsafe_reason, valid_name

TRASH_FOLDER = ".trash"
"""Obsidian's vault-local trash folder."""

_TRASH_OPTIONS = ("system", "local", "none")


class VaultFiles:
    """One vault's files as a curation reads them: never through a symbolic link, never outside the vault."""

    def __init__(self, root: Path) -> None:
        """Read the vault at `root`, its absolute, symlink-free root."""
        self.root = root
        """The vault's absolute, symlink-free root."""

    def note_named(self, name: str) -> str:
        """The vault path of the note a person names: its path (`.md` optional, any case), the end of its path, its
        title (the file name) or one of its aliases, resolved as Obsidian resolves a link (see `NoteNames.find`).

        `AmbiguousNoteError` names the notes when several share the name; `NotFoundError` when none has it. A path
        into a hidden folder is returned as written, for the plan to refuse with the reason.
        """
        text = name.strip() if isinstance(name, str) else ""
        if any(part.startswith(".") and part not in (".", "..") for part in text.replace("\\", "/").split("/")):
            return text if text.lower().endswith(".md") else f"{text}.md"
        vault = ObsidianVault(self.root, CompanionConfig())
        files = vault.scan_all()

        def aliases() -> dict[str, tuple[str, ...]]:
            return {rel: note.aliases for rel, note in vault.read_all_notes(files).items() if note.aliases}

        return NoteNames(files, aliases).find(text)

    def link_name(self, rel: str) -> str:
        """How a wikilink names a note: its title when that finds it, else its path (a name several notes share
        would resolve to another one)."""
        title = posixpath.basename(rel).removesuffix(".md")
        try:
            if self.note_named(title) == rel:
                return title
        except CompanionError:
            pass  # a name several notes share: the path names this one
        return rel.removesuffix(".md")

    def absolute(self, rel: str) -> Path:
        """The absolute path of a vault path, refused when it could lead outside the vault or is a symbolic link."""
        reason = _unsafe_reason(rel)
        if reason is not None:
            raise CurationError(f"{rel!r} {reason}")
        problem = self.scope_problem(rel)
        if problem is not None:
            raise CurationError(f"{rel}: {problem}; nothing was written")
        return self.root / rel

    def scope_problem(self, rel: str) -> str | None:
        """Why a vault path may not be read or written as it is now (outside the vault, a link), or None."""
        reason = _unsafe_reason(rel)
        if reason is not None:
            return reason
        candidate = self.root / rel
        try:
            real = os.path.realpath(candidate.parent)
            link = candidate.is_symlink()
        except OSError as exc:  # a link on the way vanished while it was followed, a name too long
            return f"cannot be checked ({exc.strerror or exc})"
        if not _inside(real, str(self.root)):
            return "leads outside the vault through a symbolic link"
        if link:
            return "is a symbolic link; curate the file it points to instead"
        return None

    def current(self, rel: str) -> bytes | None:
        """A vault file's bytes as they are now, or None when there is none, read the way a curation reads it (never
        through a symbolic link); `CurationError` when the path may not be curated or cannot be read."""
        return _bytes(self.snapshot(rel))

    def snapshot(self, rel: str) -> Snapshot:
        """A file's bytes and permission bits as they are now, or None when it does not exist."""
        self.absolute(rel)
        folder, _, name = rel.rpartition("/")
        try:
            with HeldFolder.inside(self.root, folder) as held:
                try:
                    return held.read(name)
                except LinkRefused as exc:
                    raise CurationError(
                        f"{rel}: is a symbolic link; curate the file it points to instead (nothing was written)"
                    ) from exc
        except FileNotFoundError:
            return None
        except LinkRefused as exc:
            raise CurationError(
                f"{rel}: the folder '{exc.filename}' on its way is a symbolic link, which curations never follow (it "
                "could lead outside the vault); curate the note in its real folder. Nothing was written"
            ) from exc
        except IsADirectoryError as exc:
            raise CurationError(f"{rel}: is not a regular file (a folder?); nothing was written") from exc
        except OSError as exc:
            raise CurationError(f"{rel}: cannot be read ({exc.strerror or exc}); nothing was written") from exc

    def mode_like(self, write: PlannedWrite, current: Mapping[str, Snapshot]) -> int | None:
        """The permission bits a planned file is written with: those of the file it moves (`like`), else the usual
        (an existing file keeps its own)."""
        if write.like is None or write.content is None:
            return None
        source = current[write.like] if write.like in current else self.snapshot(write.like)
        return snapshot_mode(source)

    def state(self, rel: str) -> str | None:
        """The digest of a file's bytes, or None when it does not exist."""
        return _digest(self.current(rel))

    def read(self, rel: str) -> bytes:
        """A note's bytes as they are now; `CurationError` when there is no such note."""
        raw = self.current(rel)
        if raw is None:
            raise CurationError(f"{rel}: no such note in the vault; it may have been moved or deleted, look again")
        return raw

    def trash_option(self) -> str:
        """The vault's `trashOption` from `.obsidian/app.json`: `system` (also when unset or unreadable), `local`
        or `none`."""
        try:
            data = json.loads((self.root / ".obsidian" / "app.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return "system"
        option = data.get("trashOption") if isinstance(data, dict) else None
        return option if option in _TRASH_OPTIONS else "system"

    def trash_path(self, rel: str) -> str:
        """Where a note goes in Obsidian's trash folder: `.trash/<file name>`, with ` 1`, ` 2`… added before `.md`
        when that name is taken."""
        name = rel.rsplit("/", 1)[-1]
        stem, suffix = (name[:-3], ".md") if name.endswith(".md") else (name, "")
        candidate = f"{TRASH_FOLDER}/{name}"
        number = 0
        while self.state(candidate) is not None:
            number += 1
            # A long name with a number added could pass the file system's limit: the stem gives way.
            candidate = f"{TRASH_FOLDER}/{fit_name(stem, f' {number}{suffix}')}"
        return candidate

    def as_planned(self, plan: Plan) -> dict[str, Snapshot]:
        """Every file a plan writes as it is now, by path; `CurationError` (nothing written) when one is no longer
        what the plan was computed from."""
        current: dict[str, Snapshot] = {}
        for write in plan.writes:
            current[write.path] = self.snapshot(write.path)
            found = _digest(_bytes(current[write.path]))
            if found != write.expected:
                raise CurationError(
                    f"{write.path}: {_changed_since(write.expected, found)} since the plan was made, so "
                    f"'{plan.summary}' was not applied; nothing was written. Look at the note again and retry"
                )
        return current

    def as_recorded(self, entry: AuditEntry) -> dict[str, Snapshot]:
        """Every file an audit entry changed as it is now, by path; `CurationError` (nothing written) when one
        changed after it, as undoing it would lose that later edit."""
        current: dict[str, Snapshot] = {}
        for change in entry.changes:
            current[change.path] = self.snapshot(change.path)
            if _digest(_bytes(current[change.path])) != change.after:
                raise CurationError(
                    f"{change.path}: changed after '{entry.summary}', so undoing it would lose that later edit; "
                    "nothing was written. Undo it by hand if you still want to"
                )
        return current


def note_path(path: str) -> str:
    """A vault path that may be curated as a note: relative, normalised, visible, ending in `.md`."""
    if not isinstance(path, str) or not valid_name(path):
        raise CurationError(f"{path!r}: not a usable vault path")
    reason = _unsafe_reason(path)
    if reason is not None:
        raise CurationError(f"{path!r} {reason}")
    if posixpath.normpath(path) != path or "\\" in path:
        raise CurationError(f"{path!r}: not a plain vault path; write it as Obsidian shows it ('folder/Note.md')")
    if any(part.startswith(".") for part in path.split("/")):
        raise CurationError(f"{path}: in a hidden folder or file, which Obsidian does not show as a note")
    if not path.endswith(".md"):
        raise CurationError(f"{path}: not a note; only Markdown notes ending in '.md' can be curated")
    return path


def snapshot_mode(snapshot: Snapshot) -> int | None:
    """A snapshot's permission bits, or None when there was no file."""
    return None if snapshot is None else snapshot[1]


def _digest(content: bytes | None) -> str | None:
    return None if content is None else sha256_hex(content)


def _bytes(snapshot: Snapshot) -> bytes | None:
    return None if snapshot is None else snapshot[0]


def _changed_since(expected: str | None, found: str | None) -> str:
    if expected is None:
        return "appeared"
    if found is None:
        return "was moved or deleted"
    return "changed"
