"""Session-history logs and configs, and a real local HTTP server for the pipeline's sinks and endpoints."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


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


@dataclass
class Hook:
    """A webhook on 127.0.0.1: records every request and answers with the queued statuses (then 200)."""

    url: str
    statuses: list[int] = field(default_factory=list)
    requests: list[tuple[dict[str, str], bytes]] = field(default_factory=list)

    @property
    def ids(self) -> list[str]:
        return [e["id"] for _, body in self.requests if body for e in json.loads(body)["entries"]]
