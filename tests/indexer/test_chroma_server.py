"""The server path: a real `chroma run` on loopback, driven through the real `companion` CLI."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers.cli import run_companion
from tests.helpers.files import write

pytestmark = pytest.mark.server

CHROMA = Path(sys.executable).with_name("chroma")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not CHROMA.exists() and shutil.which("chroma") is None:
        pytest.fail("the `chroma` command that ships with chromadb is missing")
    port = _free_port()
    store = tmp_path_factory.mktemp("chroma-server")
    proc = subprocess.Popen(
        [
            str(CHROMA if CHROMA.exists() else "chroma"),
            "run",
            "--path",
            str(store),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("chroma run did not come up within 60 s")
    yield url
    proc.terminate()
    proc.wait(20)


def _vault(root: Path) -> Path:
    write(root, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    write(
        root,
        "Conversations/ski.md",
        "---\ntype: conversation\n---\n**alice:** Chamonix in February.\n\n**sentinel:** Budget 1800 euros.\n",
    )
    write(root, "Notes/garden.md", "Tomatoes need sun and water.\n")
    return root


def test_index_and_recall_through_a_chroma_server(tmp_path: Path, chroma_url: str) -> None:
    vault = _vault(tmp_path / "vault")
    built = run_companion("index", "--json", "--vault", str(vault), "--chroma-url", chroma_url)
    assert built.returncode == 0, built.stderr
    report = json.loads(built.stdout.splitlines()[-1])
    assert report["notes_indexed"] == 2 and report["store"].startswith("server")
    # Nothing was written into an embedded store for this vault.
    assert not list(Path(os.environ["COMPANION_DATA_DIR"]).glob("vaults/*/chroma"))
    found = run_companion("recall", "Chamonix budget", "--json", "--vault", str(vault), "--chroma-url", chroma_url)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["path"] == "Conversations/ski.md"
    (vault / "Notes/garden.md").unlink()
    again = run_companion("index", "--json", "--vault", str(vault), "--chroma-url", chroma_url)
    assert json.loads(again.stdout.splitlines()[-1])["notes_deleted"] == 1
    doctor = run_companion("doctor", "--json", "--vault", str(vault), "--chroma-url", chroma_url)
    assert json.loads(doctor.stdout)["healthy"] is True, doctor.stdout


def test_a_server_that_is_down_is_a_clear_error(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault")
    url = f"http://127.0.0.1:{_free_port()}"
    out = run_companion("index", "--vault", str(vault), "--chroma-url", url)
    assert out.returncode == 4
    assert url in out.stderr and "chroma run" in out.stderr
    assert "Traceback" not in out.stderr
