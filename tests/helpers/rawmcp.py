"""What tests that speak raw JSON-RPC to the real `companion mcp` share."""

from __future__ import annotations

WAIT_S = 120
"""The longest wait for the server or one answer: a bound, so a server that never answers fails the test instead of
hanging it."""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
"""The first request of a session."""
