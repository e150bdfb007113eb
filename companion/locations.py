"""Every path the companion uses outside the vault, in one place.

The companion's own state (index, access statistics, audit log) lives in a data directory per vault, never in the
vault itself; only `.companion/companion.yaml` travels with the vault.
"""

from __future__ import annotations

import hashlib
import os
import re
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
