"""Which vault to open, and why.

Order: the `--vault` flag; `AGENT_VAULT_PATH`; Obsidian's own list of vaults in its global
`obsidian.json`; the fallback `~/.agent_vault`. The result carries the rule that decided and a
sentence the app can show, so a user who sees the wrong vault knows which knob to turn.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from companion.errors import VaultError

Rule = Literal["flag", "env", "obsidian", "fallback"]
"""The rule that chose a vault."""

FALLBACK_NAME = ".agent_vault"
_OFF = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class VaultLocation:
    """A chosen vault folder and the reason it was chosen."""

    path: Path
    """Absolute path of the vault folder (the fallback may not exist yet)."""
    rule: Rule
    """Which rule chose it: `flag`, `env`, `obsidian` or `fallback`."""
    detail: str
    """A sentence for humans, such as "the sole open vault in ~/.config/obsidian/obsidian.json"."""


@dataclass(frozen=True)
class _Candidate:
    path: Path
    ts: int
    open: bool


def locate_vault(flag: str | None, env: Mapping[str, str] | None = None, home: Path | None = None) -> VaultLocation:
    """Find the vault in the documented order; `VaultError` for a bad flag or env path."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    if flag:
        return VaultLocation(_existing_folder(flag, "--vault", home), "flag", "chosen by --vault")
    if env.get("AGENT_VAULT_PATH"):
        path = _existing_folder(env["AGENT_VAULT_PATH"], "AGENT_VAULT_PATH", home)
        return VaultLocation(path, "env", "chosen by AGENT_VAULT_PATH")
    fallback = (home / FALLBACK_NAME).absolute()
    if env.get("AGENT_OBSIDIAN_DISCOVER", "1").strip().lower() in _OFF:
        why = "Obsidian discovery is off (AGENT_OBSIDIAN_DISCOVER=0)"
    else:
        found, why = _discover(env, home)
        if found is not None:
            return found
    return VaultLocation(fallback, "fallback", f"the fallback {_short(fallback, home)}: {why}")


def _existing_folder(raw: str, source: str, home: Path) -> Path:
    path = _expand(raw, home)
    if not path.exists():
        raise VaultError(f"{source} points to {path}, which does not exist; create the folder or fix it")
    if not path.is_dir():
        raise VaultError(f"{source} points to {path}, which is a file, not a vault folder")
    return path.resolve()


def _expand(raw: str, home: Path) -> Path:
    if raw == "~" or raw.startswith("~/"):
        return (home / raw[2:]).absolute()
    return Path(raw).expanduser().absolute()


def _short(path: Path, home: Path) -> str:
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)


def obsidian_config_candidates(env: Mapping[str, str], home: Path) -> list[Path]:
    """Where Obsidian keeps `obsidian.json` on this platform, most likely first.

    `OBSIDIAN_CONFIG` names the file directly (for tests and unusual installs).
    """
    if env.get("OBSIDIAN_CONFIG"):
        return [_expand(env["OBSIDIAN_CONFIG"], home)]
    xdg = env.get("XDG_CONFIG_HOME")
    linux = [
        (Path(xdg) if xdg else home / ".config") / "obsidian" / "obsidian.json",
        home / ".var/app/md.obsidian.Obsidian/config/obsidian/obsidian.json",
        home / "snap/obsidian/current/.config/obsidian/obsidian.json",
    ]
    mac = [home / "Library/Application Support/obsidian/obsidian.json"]
    appdata = env.get("APPDATA")
    windows = [Path(appdata) / "obsidian" / "obsidian.json"] if appdata else []
    if sys.platform == "darwin":
        return mac + linux + windows
    if sys.platform == "win32":
        return windows + linux + mac
    return linux + mac + windows


def _discover(env: Mapping[str, str], home: Path) -> tuple[VaultLocation | None, str]:
    """The vault Obsidian's list points to, or None and the reason there is none."""
    config = next((p for p in obsidian_config_candidates(env, home) if p.is_file()), None)
    if config is None:
        return None, "no obsidian.json found"
    where = _short(config, home)
    try:
        candidates = _read_vault_list(config)
    except (OSError, ValueError) as exc:
        return None, f"{where} is unreadable ({exc}), so it was skipped"
    if not candidates:
        return None, f"{where} lists no vaults"
    listed = len(candidates)
    substring = env.get("AGENT_OBSIDIAN_VAULT_NAME_SUBSTRING", "").strip()
    if substring:
        candidates = [c for c in candidates if substring.lower() in c.path.name.lower()]
        if not candidates:
            return None, (
                f"none of the {listed} vaults in {where} has "
                f"'{substring}' in its name (AGENT_OBSIDIAN_VAULT_NAME_SUBSTRING)"
            )
    candidates = [c for c in candidates if c.path.is_dir()]
    if env.get("AGENT_OBSIDIAN_REQUIRE_DOT_OBSIDIAN", "1").strip().lower() not in _OFF:
        candidates = [c for c in candidates if (c.path / ".obsidian").is_dir()]
        missing = "an existing folder with a .obsidian folder"
    else:
        missing = "an existing folder"
    if not candidates:
        return None, f"no vault in {where} is {missing}"
    narrowed = " matching AGENT_OBSIDIAN_VAULT_NAME_SUBSTRING" if substring else ""
    if len(candidates) == 1:
        how = f"the only usable vault{narrowed} in {where}"
        return VaultLocation(candidates[0].path, "obsidian", how), how
    open_ones = [c for c in candidates if c.open]
    if len(open_ones) == 1:
        how = f"the sole open vault{narrowed} in {where}"
        return VaultLocation(open_ones[0].path, "obsidian", how), how
    latest = max(candidates, key=lambda c: (c.ts, str(c.path)))
    how = f"the most recently opened of {len(candidates)} vaults{narrowed} in {where}"
    return VaultLocation(latest.path, "obsidian", how), how


def _read_vault_list(config: Path) -> list[_Candidate]:
    """Parse Obsidian's `{"vaults": {id: {path, ts, open}}}`, skipping malformed entries."""
    data: Any = json.loads(config.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("vaults"), dict):
        raise ValueError('no "vaults" object')
    found: list[_Candidate] = []
    for entry in data["vaults"].values():
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            continue
        ts = entry.get("ts")
        found.append(
            _Candidate(
                path=Path(entry["path"]).expanduser().absolute(),
                ts=ts if isinstance(ts, int) and not isinstance(ts, bool) else 0,
                open=entry.get("open") is True,
            )
        )
    return found
