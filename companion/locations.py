"""Every path the companion uses outside the vault, in one place.

The companion's own state (index, access statistics, audit log) lives in a data directory per vault, never in the
vault itself; only `.companion/companion.yaml` travels with the vault.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

APP_NAME = "vault-companion"
CONFIG_DIR_NAME = ".companion"
CONFIG_FILE_NAME = "companion.yaml"
PRIVATE_FOLDER_MODE = 0o700
"""A data directory's folders: only their owner may list or open them (the index holds every note's text)."""
PRIVATE_FILE_MODE = 0o600
"""A data directory's files: only their owner may read or write them."""


def data_root(override: str | os.PathLike[str] | None = None) -> Path:
    """The folder holding every vault's data: `--data-dir`, `COMPANION_DATA_DIR`, then the platform data dir."""
    if override:
        return Path(override).expanduser().resolve()
    env = os.environ.get("COMPANION_DATA_DIR")
    if env:
        return Path(env).expanduser().resolve()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return (base / APP_NAME).resolve()


def vault_data_dir(vault_root: Path, override: str | os.PathLike[str] | None = None) -> Path:
    """The data directory of one vault: a readable slug plus a hash of its absolute path, so two vaults
    with the same folder name never share an index."""
    resolved = vault_root.expanduser().resolve()
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", resolved.name).strip("-") or "vault"
    digest = hashlib.sha1(str(resolved).encode("utf-8")).hexdigest()[:10]
    return data_root(override) / "vaults" / f"{slug}-{digest}"


def models_dir() -> Path:
    """Where built embedding models are cached: `COMPANION_MODEL_DIR`, else `<data root>/models`.

    The model cache is shared by every vault and ignores `--data-dir`, so tests that point the data root
    at a temporary folder do not rebuild the model each time.
    """
    env = os.environ.get("COMPANION_MODEL_DIR")
    if env:
        return Path(env).expanduser().resolve()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return (base / APP_NAME / "models").resolve()


def private_folder(folder: Path) -> None:
    """Create `folder` and each missing folder above it with mode 700, and make `folder` private if it is open.

    Folders that already exist above it are left as they are: a `--data-dir` may name the user's own folder.
    """
    missing: list[Path] = []
    probe = folder
    while not os.path.lexists(probe) and probe.parent != probe:
        missing.append(probe)
        probe = probe.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=PRIVATE_FOLDER_MODE)
        except FileExistsError:
            continue  # made meanwhile by another process, which makes it private the same way
        except OSError:
            break  # the `mkdir` below raises the error a user should read
        # `mkdir` passes its mode through the umask, which may take away the owner's own bits too.
        os.chmod(path, PRIVATE_FOLDER_MODE)
        _sync_folder(path.parent)  # the new folder survives a power cut, as the files written in it do
    folder.mkdir(parents=True, exist_ok=True)
    keep_private(folder)


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def private_file(path: Path) -> None:
    """Create the empty file `path` with mode 600 when missing (SQLite gives its `-wal` and `-shm` files the mode of
    the database file, so they follow)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, PRIVATE_FILE_MODE)  # the umask may have taken the owner's bits
    finally:
        os.close(fd)


def keep_private(folder: Path) -> None:
    """Make a data directory found open to other users private: its folders 700, its files 600, down the tree.

    One `stat` when the folder is already private (every open checks it); a walk when not (a data directory written
    by an older version, or opened up by hand). Only this user's own folder is changed.
    """
    try:
        info = folder.lstat()
    except OSError:
        return  # not made yet: it is made private when it is
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or not stat.S_IMODE(info.st_mode) & 0o077:
        return
    # The top folder is closed last, so a walk cut short is done again on the next open.
    for top, folders, files in os.walk(folder, onerror=_walk_failed):
        for name in files + folders:
            _close_up(Path(top) / name)
    _close_up(folder)


def _close_up(path: Path) -> None:
    """Take the group's and others' bits off one folder or file of this user (links are left alone: their target
    may be anywhere)."""
    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid():
            return
        mode = PRIVATE_FOLDER_MODE if stat.S_ISDIR(info.st_mode) else stat.S_IMODE(info.st_mode) & PRIVATE_FOLDER_MODE
        if stat.S_IMODE(info.st_mode) != mode:
            os.chmod(path, mode)
    except FileNotFoundError:
        return  # removed meanwhile by the process writing the index
    except OSError as exc:
        log.warning("cannot make %s private: %s", path, exc)


def _walk_failed(exc: OSError) -> None:
    log.warning("cannot make %s private: %s", exc.filename, exc.strerror or exc)


def config_path(vault_root: Path) -> Path:
    """The vault's own config file, `.companion/companion.yaml`."""
    return vault_root / CONFIG_DIR_NAME / CONFIG_FILE_NAME


TRIGGERS_STATE = Path("pipeline") / "triggers.json"
"""The triggers' state file, relative to a vault's data directory."""


@dataclass(frozen=True)
class DataPaths:
    """Every file and folder of one vault's data directory (see `vault_data_dir`)."""

    root: Path
    """The vault's data directory."""

    @property
    def review(self) -> Path:
        """The review queue's skipped suggestions (JSON: id to the fingerprint of the notes when skipped)."""
        return self.root / "review" / "skipped.json"

    @property
    def manifest(self) -> Path:
        """The manifest and lexical index (SQLite)."""
        return self.root / "manifest.sqlite"

    @property
    def chroma(self) -> Path:
        """The embedded vector store's folder."""
        return self.root / "chroma"

    @property
    def access(self) -> Path:
        """Access statistics of the vault's notes (SQLite)."""
        return self.root / "access.sqlite"

    @property
    def audit(self) -> Path:
        """The audit log and its before/after copies."""
        return self.root / "audit"

    @property
    def forward(self) -> Path:
        """What each forward processor has sent."""
        return self.root / "forward"

    @property
    def triggers(self) -> Path:
        """When each agent's processors last ran, for the triggers."""
        return self.root / TRIGGERS_STATE

    @property
    def writer_lock(self) -> Path:
        """The lock held by the one process that writes the index."""
        return self.root / "writer.lock"

    @property
    def damage(self) -> Path:
        """Chunk ids `companion doctor` found unreadable, for the next `companion index` to embed again."""
        return self.root / "damaged.json"

    @property
    def mcp_token(self) -> Path:
        """The bearer token HTTP clients of `companion mcp --transport http` must send (mode 600)."""
        return self.root / "mcp_token"

    @property
    def imports(self) -> Path:
        """What `companion import` last saw of each agent session's files, and the note it went into (JSON)."""
        return self.root / "imports" / "state.json"
