"""Every path the companion uses outside the vault, in one place.

The companion's own state (index, access statistics, audit log) lives in a data directory per vault, never in the
vault itself; only `.companion/companion.yaml` travels with the vault.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "vault-companion"
CONFIG_DIR_NAME = ".companion"
CONFIG_FILE_NAME = "companion.yaml"


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
