"""The MCP server as a client meets it: the handshake and search round trips through the real `companion mcp`, and
what an agent reads at each step of a lookup."""

from __future__ import annotations

import random
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from companion.cli.bench.common import choose_model, percentile, synthetic_vault, workspace
from companion.cli.demo import SAMPLE_QUERIES
from companion.embedding.hashing import HashEmbedder

LOOKUPS = (
    *SAMPLE_QUERIES,
    "when and where does the book club meet now?",
    "how did the backup restore test of the Pi go?",
)
"""Questions asked of the demo vault to count what each step of a lookup costs."""


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
    choose_model(vault, "hash")
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


def disclosure(root: Path) -> dict[str, Any]:
    """Tokens an agent reads at each step of a lookup on the demo vault, through a client session on the server.

    For each of `LOOKUPS`: `vault_search` (k=5), `timeline` around its first result (3 before, 3 after), `vault_read`
    of that result, and for comparison `vault_read` of all five results and `context` at its default budget. Tokens
    are counted on the text a client receives with the embedding model's WordPiece tokenizer (a chat model's own
    tokenizer counts somewhat differently); each figure is the median over the questions.
    """
    import anyio
    from mcp import Client

    from companion.demo.build import write_demo_vault
    from companion.embedding.tokens import TokenCounter
    from companion.mcp_server.server import CompanionServer
    from companion.workspace import Workspace

    vault = root / "demo"
    if not vault.exists():
        write_demo_vault(vault, now=datetime.now().astimezone())
    ws = Workspace.open(vault, data_dir=root / "data")
    ws.catch_up()
    companion = CompanionServer(lambda: ws)
    count = TokenCounter()
    steps: dict[str, list[int]] = {"search": [], "timeline": [], "read_first": [], "read_all_five": [], "context": []}

    def tokens(result: Any) -> int:
        if result.is_error:
            raise RuntimeError(f"a lookup step failed: {result.content}")
        return count(result.content[0].text)

    async def session() -> None:
        async with Client(companion.server) as client:
            for question in LOOKUPS:
                found = await client.call_tool("vault_search", {"query": question, "k": 5})
                steps["search"].append(tokens(found))
                paths = [r["path"] for r in found.structured_content["results"]]
                around = await client.call_tool("timeline", {"note": paths[0], "before": 3, "after": 3})
                steps["timeline"].append(tokens(around))
                reads = [tokens(await client.call_tool("vault_read", {"note": p})) for p in paths]
                steps["read_first"].append(reads[0])
                steps["read_all_five"].append(sum(reads))
                steps["context"].append(tokens(await client.call_tool("context", {"message": question})))

    try:
        anyio.run(session)
    finally:
        companion.close()
    out: dict[str, Any] = {k: int(statistics.median(v)) for k, v in steps.items()}
    out["look_then_read"] = out["search"] + out["timeline"] + out["read_first"]
    out["read_every_result"] = out["search"] + out["read_all_five"]
    out["saved_share"] = round(1 - out["look_then_read"] / out["read_every_result"], 2)
    out["questions"] = len(LOOKUPS)
    out["tokenizer"] = count.name
    return out
