"""Errors from the operating system (no permission, a full disk, a name too long, a file where a folder goes) end a
command with one line naming the path, exit code 9, and with `--json` a JSON error on stdout: never a traceback."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from companion.cli import main
from companion.errors import StorageError, StoreError, from_os_error
from companion.pipeline.history import serialize
from indexer.manifest import Manifest
from tests.helpers.cli import run_companion
from tests.helpers.files import file_tree, write

STORAGE = StorageError.exit_code
AS_OF = "2026-03-22T12:00:00+00:00"
HISTORY_CONFIG = """embedding:
  provider: hash
session_history:
  sources:
    - path: ./agents/{agent}/history.jsonl
  processors:
    - type: archive
      older_than_days: 3
"""


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, ".companion/companion.yaml", HISTORY_CONFIG)
    write(root, "Notes/ski.md", "Chamonix in February, budget 1800 euros.\n")
    now = datetime.fromisoformat(AS_OF)
    lines = [
        serialize({"id": f"s-{i}", "ts": (now - timedelta(days=i)).isoformat(), "agent": "sentinel", "r": "ok"})
        for i in range(6)
    ]
    write(root, "agents/sentinel/history.jsonl", "".join(line.decode("utf-8") + "\n" for line in lines))
    return root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def assert_one_clear_line(err: str, *words: str) -> None:
    """stderr is one `companion: ...` line holding every word, and no traceback."""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("companion: "), err
    for word in words:
        assert word in lines[0], (word, err)


def json_error(out: str) -> dict[str, object]:
    """The JSON error a failing `--json` command prints as its only stdout line."""
    error = json.loads(out.strip().splitlines()[-1])
    assert isinstance(error, dict) and error["exit_code"] == STORAGE
    return error


# -- a file where the data directory should be: fails even for root -----------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["index"],
        ["remember", "fact", "Chamonix costs 1800 euros"],
        ["recall", "Chamonix"],
        ["process", "--as-of", AS_OF],
    ],
)
def test_a_data_dir_that_is_a_file_is_one_message(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("not a folder\n", encoding="utf-8")
    code, out, err = run(capsys, *command, "--vault", str(vault), "--data-dir", str(blocker), "--json")
    assert code == STORAGE, err
    assert_one_clear_line(err, "not a folder", str(blocker), "--data-dir")
    assert f"({blocker})" in err  # the file in the way, not only the folder it blocks several levels below
    error = json_error(out)
    assert str(error["path"]).startswith(str(blocker)) and error["error"] == err.strip().removeprefix("companion: ")


@pytest.mark.parametrize("command", ["app", "mcp"])
def test_the_app_and_the_mcp_server_refuse_an_unusable_data_dir_at_start(
    vault: Path, tmp_path: Path, command: str
) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("not a folder\n", encoding="utf-8")
    # In a process of its own: were the check gone, the app or the server would start and wait for input.
    out = run_companion(command, "--vault", str(vault), "--data-dir", str(blocker), stdin="", timeout=120)
    assert out.returncode == STORAGE and out.stdout == ""
    assert_one_clear_line(out.stderr, "not a folder", str(blocker))


def test_a_name_too_long_in_the_data_dir_is_one_message(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / ("d" * 300)
    code, out, err = run(capsys, "index", "--vault", str(vault), "--data-dir", str(data), "--json")
    assert code == STORAGE
    assert_one_clear_line(err, "file name too long", str(data), "255 bytes")
    assert str(json_error(out)["path"]).startswith(str(data))


def test_the_traceback_is_kept_for_verbose_runs(vault: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("not a folder\n", encoding="utf-8")
    out = run_companion("-v", "index", "--vault", str(vault), "--data-dir", str(blocker))
    assert out.returncode == STORAGE
    assert "Traceback" in out.stderr and "NotADirectoryError" in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith("companion: not a folder: ")


# -- a full disk, at the points where the companion writes ---------------------------------------------------------


def test_a_full_disk_while_archiving_names_the_file_and_writes_nothing(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync

    def full_disk(fd: int) -> None:
        # A file's data finds the disk full; folders flush their entries as usual.
        if stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    before = file_tree(vault)
    monkeypatch.setattr(os, "fsync", full_disk)
    data = tmp_path / "data"
    code, out, err = run(capsys, "process", "--vault", str(vault), "--data-dir", str(data), "--as-of", AS_OF, "--json")
    assert code == STORAGE, err
    assert_one_clear_line(err, "no space left on the device holding", str(vault), "Done for sentinel: nothing.")
    assert str(json_error(out)["path"]).startswith(str(vault / "cold-storage"))
    assert file_tree(vault) == before  # no archive, no temporary file, the log as it was


def test_a_full_disk_when_taking_the_writer_lock_names_the_lock_file(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(fd: int, data: bytes, offset: int) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "pwrite", full_disk)
    data = tmp_path / "data"
    code, out, err = run(
        capsys,
        "remember",
        "fact",
        "Chamonix costs 1800 euros",
        "--vault",
        str(vault),
        "--data-dir",
        str(data),
        "--json",
    )
    assert code == STORAGE, err
    assert_one_clear_line(err, "no space left on the device holding", str(data), "writer.lock")
    assert str(json_error(out)["path"]).endswith("writer.lock")
    assert not (vault / "Memory").exists()


@pytest.mark.parametrize(
    "failure",
    [
        sqlite3.OperationalError("database or disk is full"),
        StoreError("The vector store at /x failed: error returned from database: (code: 13) database or disk is full"),
    ],
    ids=["sqlite", "store"],
)
def test_a_full_disk_under_the_index_says_so_not_corrupt(
    vault: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    failure: Exception,
) -> None:
    def full_disk(self: Manifest, key: str, value: str) -> None:
        raise failure

    monkeypatch.setattr(Manifest, "set_meta", full_disk)
    data = tmp_path / "data"
    code, out, err = run(capsys, "index", "--vault", str(vault), "--data-dir", str(data), "--json")
    assert code == STORAGE, err
    assert_one_clear_line(err, f"no space left on the device holding {data}", "free some space")
    assert "--rebuild" not in err and json_error(out)["path"] == str(data)


# -- real permissions and a real full disk, where this machine allows them ------------------------------------------


def _cannot_override_permissions(folder: Path) -> list[str]:
    """A command prefix under which `folder`'s read-only mode holds: none for a normal user; for root (who writes
    anywhere), `setpriv` dropping the capability to override file permissions; else the test is skipped."""
    if not os.access(folder, os.W_OK):
        return []
    setpriv = shutil.which("setpriv")
    prefix = [setpriv or "setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search"]
    if setpriv is None or subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.skip("chmod does not bind this user (root) and setpriv cannot drop that power here")
    return prefix


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o500)
    yield folder
    folder.chmod(0o700)  # so pytest can clean up


@pytest.mark.parametrize("command", [["index"], ["remember", "fact", "Chamonix costs 1800 euros"]])
def test_a_read_only_data_dir_says_which_folder_must_be_writable(
    vault: Path, read_only: Path, command: list[str]
) -> None:
    prefix = _cannot_override_permissions(read_only)
    args = ["--vault", str(vault), "--data-dir", str(read_only), "--json"]
    out = subprocess.run(
        [*prefix, sys.executable, "-m", "companion", *command, *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == STORAGE, out.stderr
    assert_one_clear_line(out.stderr, "permission denied", f"the folder {read_only} must be writable", "--data-dir")
    assert str(json_error(out.stdout)["path"]).startswith(str(read_only))


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB file system of its own (tmpfs), where mounting one is allowed; unmounted afterwards."""
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_really_full_disk_during_index_says_no_space(vault: Path, small_disk: Path) -> None:
    for n in range(150):
        write(vault, f"Notes/n{n}.md", f"# Note {n}\n\n" + " ".join(f"word{n}x{i}" for i in range(400)) + "\n")
    # Room for the lock file, none for the index: SQLite or Chroma runs out of space part way.
    free = shutil.disk_usage(small_disk).free
    (small_disk / "filler").write_bytes(b"\0" * (free - 64 * 1024))
    data = small_disk / "data"
    out = run_companion("index", "--vault", str(vault), "--data-dir", str(data), "--json")
    assert out.returncode == STORAGE, out.stderr
    assert_one_clear_line(out.stderr, "no space left on the device holding", str(small_disk))
    assert json_error(out.stdout)["path"]


# -- the message itself ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.EACCES, ["permission denied: ", "must be writable", "--data-dir"]),
        (errno.EPERM, ["permission denied: "]),
        (errno.ENOSPC, ["no space left on the device holding ", "nothing was half-written"]),
        (errno.EDQUOT, ["disk quota is used up", "free some space"]),
        (errno.EROFS, ["read-only file system: "]),
        (errno.ENAMETOOLONG, ["file name too long: "]),
        (errno.EIO, ["input/output error: "]),
    ],
)
def test_each_common_cause_gets_its_own_words(tmp_path: Path, code: int, words: list[str]) -> None:
    path = tmp_path / "data" / "index.sqlite"
    error = from_os_error(OSError(code, os.strerror(code), str(path)))
    assert error.exit_code == STORAGE and error.path == str(path)
    assert str(path) in str(error)
    for word in words:
        assert word in str(error)
