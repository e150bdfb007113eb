"""A vault's data directory is private: the full-text index holds every note's text, the audit log copies of them.

Its folders are made with mode 700 and the companion's own files with mode 600; a data directory found open (written
by an older version, or opened by hand) is closed again on the next open. The check that matters is made as another
account would: a process running as `nobody` tries to read every file.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.locations import vault_data_dir
from companion.workspace import Workspace
from tests.helpers.cli import run_companion
from tests.helpers.files import write

NOBODY = 65534

_TRY_EVERY_FILE = """
import json, sys
seen = {}
for path in json.load(sys.stdin):
    try:
        with open(path, "rb") as handle:
            handle.read(1)
        seen[path] = "read"
    except PermissionError:
        seen[path] = "denied"
    except OSError as exc:
        seen[path] = repr(exc)
print(json.dumps(seen))
"""


@pytest.fixture
def open_parent() -> Iterator[Path]:
    """A folder every account may pass through, as a home folder often is (pytest's own are closed)."""
    base = Path(tempfile.mkdtemp(prefix="vc-privacy-"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def _vault(root: Path) -> Path:
    write(root, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    write(root, "Notes/boiler.md", "# Boiler\n\nthe boiler permit came through on Tuesday\n")
    write(root, "Notes/chalet.md", "# Chalet\n\nthe ski chalet budget\n")
    return root


def _build(vault: Path, data: Path) -> Path:
    """Index, recall and curate, as a user would: the data directory holds the index, access log and audit log."""
    for args in (["index"], ["recall", "boiler"], ["curate", "pin", "Notes/chalet.md"]):
        done = run_companion(*args, "--vault", str(vault), "--data-dir", str(data))
        assert done.returncode == 0, done.stderr
    return vault_data_dir(vault, str(data))


def _every_entry(folder: Path) -> tuple[list[Path], list[Path]]:
    folders, files = [folder], []
    for top, dirs, names in os.walk(folder):
        folders += [Path(top) / d for d in dirs]
        files += [Path(top) / n for n in names]
    return folders, files


def _as_nobody(paths: list[Path]) -> dict[str, str]:
    """What a process of the account `nobody` gets when it opens each path."""
    system = shutil.which("python3", path=os.defpath)  # the system's, where this one's folder is closed to others
    for python in dict.fromkeys([sys.executable, getattr(sys, "_base_executable", ""), system or ""]):
        if not python:
            continue
        try:
            done = subprocess.run(
                [python, "-I", "-c", _TRY_EVERY_FILE],
                input=json.dumps([str(p) for p in paths]),
                capture_output=True,
                text=True,
                user=NOBODY,
                group=NOBODY,
                extra_groups=[],
                cwd="/",
                timeout=60,
            )
        except PermissionError:
            continue  # an interpreter in a folder closed to that account: try the next
        if done.returncode == 0:
            seen: dict[str, str] = json.loads(done.stdout)
            return seen
    pytest.skip("no Python that the account nobody may run")


@pytest.mark.skipif(os.geteuid() != 0, reason="acting as another account needs root")
def test_another_account_can_read_no_file_of_the_data_dir(open_parent: Path) -> None:
    data = _build(_vault(open_parent / "vault"), open_parent / "data")
    _folders, files = _every_entry(data)
    assert {"manifest.sqlite", "access.sqlite", "writer.lock", "chroma.sqlite3", "log.jsonl"} <= {f.name for f in files}
    control = open_parent / "readable.txt"
    control.write_text("anyone may read this\n", encoding="utf-8")
    control.chmod(0o644)

    seen = _as_nobody([control, *files])

    assert seen.pop(str(control)) == "read"  # the account can read what is open to it
    assert {path: how for path, how in seen.items() if how != "denied"} == {}
    top = open_parent / "data"
    for folder in (top, top / "vaults", data):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_the_companions_own_files_are_made_private(tmp_path: Path) -> None:
    data = _build(_vault(tmp_path / "vault"), tmp_path / "data")
    for folder in (tmp_path / "data", tmp_path / "data" / "vaults", data, data / "chroma", data / "audit"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    names = ["manifest.sqlite", "manifest.sqlite-wal", "manifest.sqlite-shm", "access.sqlite", "writer.lock"]
    ws = Workspace.open(tmp_path / "vault", data_dir=tmp_path / "data")
    try:
        ws.manifest.counts()  # an open connection keeps the -wal and -shm files
        ws.access_log()
        for name in names:
            assert stat.S_IMODE((data / name).stat().st_mode) == 0o600, name
    finally:
        ws.close()


def test_an_open_data_dir_is_made_private_on_the_next_open(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    data = _build(vault, tmp_path / "data")
    folders, files = _every_entry(tmp_path / "data")
    for folder in folders:  # as an older version left it
        folder.chmod(0o755)
    for file in files:
        file.chmod(0o644)

    Workspace.open(vault, data_dir=tmp_path / "data").close()

    assert stat.S_IMODE((tmp_path / "data" / "vaults").stat().st_mode) == 0o700
    for folder in _every_entry(data)[0]:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    for file in _every_entry(data)[1]:
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file
    recall = run_companion("recall", "boiler", "--json", "--vault", str(vault), "--data-dir", str(tmp_path / "data"))
    assert recall.returncode == 0 and json.loads(recall.stdout)["results"], recall.stderr
