"""The MCP server as a client meets it: the handshake and search round trips through the real `companion mcp`."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

from companion.cli.bench.common import percentile, synthetic_vault, workspace
from companion.embedding.hashing import HashEmbedder


def mcp(root: Path, notes: int, queries: int) -> dict[str, Any]:
    """Start `companion mcp` on an indexed vault of `notes` notes as a client would, and time it.

    `handshake_s` runs from spawning the process to `initialize` answered; `search_*` are `vault_search` round
    trips (k=10) through stdio. The index and the server's questions use the hashing embedder (configured in the
    vault), so the figures leave out the model's ~6-8 ms per question that `recall` measures with the real model;
    filling 10k notes with it would take the model alone about a quarter of an hour.
    """
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    vault = synthetic_vault(root, notes)
    config = vault / ".companion" / "companion.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("embedding:\n  provider: hash\n", encoding="utf-8")
    ws = workspace(root, HashEmbedder())
    ws.indexer().sync()
    titles = [n.title for n in ws.manifest.notes()]
    ws.close()
    rng = random.Random(11)
    asked = [f"what did we say about {rng.choice(titles)}" for _ in range(queries)]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "companion", "mcp", "--vault", str(vault), "--data-dir", str(root / "data")]
    )
    out: dict[str, Any] = {"notes": notes, "queries": queries, "embedder": "hash-384 (index and questions)"}

    async def session() -> None:
        started = time.perf_counter()
        async with Client(params) as client:
            out["handshake_s"] = round(time.perf_counter() - started, 3)
            began = time.perf_counter()
            await client.list_tools()
            out["list_tools_ms"] = round(1000 * (time.perf_counter() - began), 2)
            began = time.perf_counter()
            await client.call_tool("vault_search", {"query": asked[0], "k": 10})
            out["first_search_ms"] = round(1000 * (time.perf_counter() - began), 1)
            times = []
            for query in asked:
                began = time.perf_counter()
                result = await client.call_tool("vault_search", {"query": query, "k": 10})
                times.append(1000 * (time.perf_counter() - began))
                if result.is_error:
                    raise RuntimeError(f"vault_search failed: {result.content}")
            out["search_p50_ms"] = round(percentile(times, 50), 2)
            out["search_p95_ms"] = round(percentile(times, 95), 2)

    anyio.run(session)
    out["target_handshake_s"] = 1.0
    return out
