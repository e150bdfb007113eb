"""Vault location: --vault, AGENT_VAULT_PATH, obsidian.json, fallback; with a fake HOME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.errors import VaultError
from companion.vault.discovery import locate_vault


def make_vault(path: Path, dot_obsidian: bool = True) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    if dot_obsidian:
        (path / ".obsidian").mkdir(exist_ok=True)
    return path


def write_obsidian_json(file: Path, vaults: dict[str, dict[str, object]]) -> Path:
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({"vaults": vaults}), encoding="utf-8")
    return file


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def linux_json(home: Path) -> Path:
    return home / ".config" / "obsidian" / "obsidian.json"


def test_flag_wins_over_everything(home: Path) -> None:
    flagged = make_vault(home / "flagged")
    env = {"AGENT_VAULT_PATH": str(make_vault(home / "envvault"))}
    found = locate_vault(str(flagged), env, home)
    assert (found.path, found.rule, found.detail) == (flagged, "flag", "chosen by --vault")


def test_flag_tilde_expands_against_home(home: Path) -> None:
    make_vault(home / "vault")
    assert locate_vault("~/vault", {}, home).path == home / "vault"


def test_flag_to_missing_folder_or_file_is_an_error(home: Path) -> None:
    with pytest.raises(VaultError, match=r"--vault points to .*missing, which does not exist"):
        locate_vault(str(home / "missing"), {}, home)
    (home / "file.md").write_text("x")
    with pytest.raises(VaultError, match="which is a file, not a vault folder"):
        locate_vault(str(home / "file.md"), {}, home)


def test_env_var_is_second(home: Path) -> None:
    vault = make_vault(home / "agent", dot_obsidian=False)
    write_obsidian_json(linux_json(home), {"a": {"path": str(make_vault(home / "obs"))}})
    found = locate_vault(None, {"AGENT_VAULT_PATH": str(vault)}, home)
    assert (found.path, found.rule, found.detail) == (vault, "env", "chosen by AGENT_VAULT_PATH")


def test_env_var_to_missing_folder_is_an_error(home: Path) -> None:
    with pytest.raises(VaultError, match="AGENT_VAULT_PATH points to"):
        locate_vault(None, {"AGENT_VAULT_PATH": str(home / "nope")}, home)


def test_single_obsidian_vault(home: Path) -> None:
    vault = make_vault(home / "Notes")
    write_obsidian_json(linux_json(home), {"id1": {"path": str(vault), "ts": 1}})
    found = locate_vault(None, {}, home)
    assert (found.path, found.rule) == (vault, "obsidian")
    assert found.detail == "the only usable vault in ~/.config/obsidian/obsidian.json"


def test_sole_open_vault(home: Path) -> None:
    a, b, c = (make_vault(home / name) for name in ("A", "B", "C"))
    write_obsidian_json(
        linux_json(home),
        {
            "1": {"path": str(a), "ts": 3000, "open": False},
            "2": {"path": str(b), "ts": 1000, "open": True},
            "3": {"path": str(c), "ts": 2000},
        },
    )
    found = locate_vault(None, {}, home)
    assert found.path == b
    assert found.detail == "the sole open vault in ~/.config/obsidian/obsidian.json"


def test_latest_ts_when_several_are_open(home: Path) -> None:
    a, b = make_vault(home / "A"), make_vault(home / "B")
    write_obsidian_json(
        linux_json(home),
        {
            "1": {"path": str(a), "ts": 1700000000000, "open": True},
            "2": {"path": str(b), "ts": 1700000009999, "open": True},
        },
    )
    found = locate_vault(None, {}, home)
    assert found.path == b
    assert "most recently opened of 2 vaults" in found.detail


def test_name_substring_narrows_first(home: Path) -> None:
    work, personal = make_vault(home / "Work Vault"), make_vault(home / "Personal")
    write_obsidian_json(
        linux_json(home),
        {
            "1": {"path": str(work), "ts": 1},
            "2": {"path": str(personal), "ts": 2, "open": True},
        },
    )
    env = {"AGENT_OBSIDIAN_VAULT_NAME_SUBSTRING": "work"}
    found = locate_vault(None, env, home)
    assert found.path == work
    assert "matching AGENT_OBSIDIAN_VAULT_NAME_SUBSTRING" in found.detail
    none = locate_vault(None, {"AGENT_OBSIDIAN_VAULT_NAME_SUBSTRING": "zzz"}, home)
    assert none.rule == "fallback"
    assert "'zzz'" in none.detail


def test_dot_obsidian_is_required_unless_switched_off(home: Path) -> None:
    bare = make_vault(home / "Bare", dot_obsidian=False)
    write_obsidian_json(linux_json(home), {"1": {"path": str(bare), "ts": 1}})
    found = locate_vault(None, {}, home)
    assert found.rule == "fallback"
    assert "with a .obsidian folder" in found.detail
    relaxed = locate_vault(None, {"AGENT_OBSIDIAN_REQUIRE_DOT_OBSIDIAN": "0"}, home)
    assert (relaxed.path, relaxed.rule) == (bare, "obsidian")


def test_missing_vault_folders_are_skipped(home: Path) -> None:
    real = make_vault(home / "Real")
    write_obsidian_json(
        linux_json(home),
        {"1": {"path": str(home / "Deleted"), "ts": 9, "open": True}, "2": {"path": str(real)}},
    )
    assert locate_vault(None, {}, home).path == real


def test_discovery_switched_off_uses_fallback(home: Path) -> None:
    write_obsidian_json(linux_json(home), {"1": {"path": str(make_vault(home / "V"))}})
    found = locate_vault(None, {"AGENT_OBSIDIAN_DISCOVER": "0"}, home)
    assert (found.path, found.rule) == (home / ".agent_vault", "fallback")
    assert "AGENT_OBSIDIAN_DISCOVER=0" in found.detail


def test_no_obsidian_json_uses_fallback(home: Path) -> None:
    found = locate_vault(None, {}, home)
    assert (found.path, found.rule) == (home / ".agent_vault", "fallback")
    assert found.detail == "the fallback ~/.agent_vault: no obsidian.json found"


@pytest.mark.parametrize(
    "content",
    ["{not json", '["a list"]', '{"vaults": []}', "\udcff", '{"vaults": {"x": 5, "y": {}}}'],
)
def test_broken_obsidian_json_is_skipped_with_a_reason(home: Path, content: str) -> None:
    file = linux_json(home)
    file.parent.mkdir(parents=True)
    file.write_bytes(content.encode("utf-8", "surrogateescape"))
    found = locate_vault(None, {}, home)
    assert found.rule == "fallback"
    assert "obsidian.json" in found.detail


def test_xdg_config_home(home: Path, tmp_path: Path) -> None:
    vault = make_vault(home / "X")
    write_obsidian_json(tmp_path / "xdg" / "obsidian" / "obsidian.json", {"1": {"path": str(vault)}})
    found = locate_vault(None, {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}, home)
    assert found.path == vault


@pytest.mark.parametrize(
    "relative",
    [
        ".var/app/md.obsidian.Obsidian/config/obsidian/obsidian.json",
        "snap/obsidian/current/.config/obsidian/obsidian.json",
        "Library/Application Support/obsidian/obsidian.json",
    ],
)
def test_flatpak_snap_and_macos_locations(home: Path, relative: str) -> None:
    vault = make_vault(home / "V")
    write_obsidian_json(home / relative, {"1": {"path": str(vault)}})
    found = locate_vault(None, {}, home)
    assert found.path == vault
    assert f"~/{relative}" in found.detail


def test_windows_appdata(home: Path, tmp_path: Path) -> None:
    vault = make_vault(home / "V")
    write_obsidian_json(tmp_path / "AppData" / "obsidian" / "obsidian.json", {"1": {"path": str(vault)}})
    assert locate_vault(None, {"APPDATA": str(tmp_path / "AppData")}, home).path == vault


def test_obsidian_config_env_points_at_the_file(home: Path, tmp_path: Path) -> None:
    vault = make_vault(home / "V")
    other = make_vault(home / "Other")
    write_obsidian_json(linux_json(home), {"1": {"path": str(other)}})
    file = write_obsidian_json(tmp_path / "custom.json", {"1": {"path": str(vault)}})
    assert locate_vault(None, {"OBSIDIAN_CONFIG": str(file)}, home).path == vault
