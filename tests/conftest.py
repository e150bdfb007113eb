"""Shared fixtures: every test gets its own data root, so no test touches the user's index."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from companion.embedding.hashing import HashEmbedder
from companion.embedding.providers import Embedder
from companion.workspace import Workspace

SHARED = Path(__file__).resolve().parents[2] / "shared"
KEPANO = SHARED / "vaults" / "kepano-obsidian"


@pytest.fixture(autouse=True)
def _isolated_data(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPANION_DATA_DIR", str(tmp_path_factory.mktemp("data")))
    for name in (
        "AGENT_VAULT_PATH",
        "AGENT_OBSIDIAN_DISCOVER",
        "AGENT_OBSIDIAN_VAULT_NAME_SUBSTRING",
        "AGENT_OBSIDIAN_REQUIRE_DOT_OBSIDIAN",
    ):
        monkeypatch.delenv(name, raising=False)


def write(root: Path, rel: str, text: str) -> Path:
    """Write a note (creating folders) and return its path."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def workspace(vault: Path, embedder: Embedder | None = None, data_dir: Path | None = None) -> Workspace:
    """A workspace on `vault` with the given embedder (the hashing one by default)."""
    return Workspace.open(vault, data_dir=data_dir, embedder=embedder if embedder is not None else HashEmbedder())


@pytest.fixture
def hash_ws(tmp_path: Path) -> Iterator[Workspace]:
    """A workspace on an empty vault in tmp_path, indexed with the hashing embedder."""
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    ws = workspace(vault)
    yield ws
    ws.close()


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Frontmatter (read with PyYAML's YAML 1.1 loader, the strictest common reader) and body."""
    assert text.startswith("---\n")
    end = text.index("\n---\n", 4)
    data = yaml.safe_load(text[4:end])
    assert isinstance(data, dict)
    return data, text[end + 5 :]


def file_tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` by relative POSIX path, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def history_config(processors: str, source: str = "- path: ./agents/{agent}/history.jsonl") -> str:
    """A config with one session-history source and these processor items (YAML lines indented four spaces)."""
    return f"session_history:\n  sources:\n    {source}\n  processors:\n{processors}"


def write_history(vault: Path, texts: list[str], now: datetime, agent: str = "trader", **fields: str) -> Path:
    """An agent's `history.jsonl` with one entry per text, an hour apart, the last an hour before `now`."""
    from companion.pipeline.history import serialize

    path = vault / "agents" / agent / "history.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, text in enumerate(texts):
        ts = now - timedelta(hours=len(texts) - i)
        lines.append(serialize({"id": f"e{i}", "ts": ts.isoformat(), "agent": agent, **fields, "text": text}))
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


@contextmanager
def local_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A real HTTP server on a free loopback port, answering with `handler`; yields `http://127.0.0.1:PORT`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
