"""Ask your vault from Python through the companion's MCP server (the official MCP Python SDK, `pip install mcp`).

Over stdio, the script starts `companion mcp` itself:

    python mcp_client.py ~/Vault "what did we decide about the kitchen?"

Over HTTP, to a server you started with `companion mcp --vault ~/Vault --transport http`, with the token
`companion mcp --vault ~/Vault --show-token` prints:

    python mcp_client.py ~/Vault "what did we decide about the kitchen?" --http http://127.0.0.1:8765/mcp --token TOKEN

`--companion` names the program when `companion` is not on the PATH (`./.venv/bin/companion` after `make run`).
"""

from __future__ import annotations

import argparse

import anyio
import httpx2  # the HTTP client the MCP SDK itself uses
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


async def ask(client: Client, question: str) -> None:
    """Search, then read the best note: the two calls an agent makes most."""
    found = await client.call_tool("vault_search", {"query": question, "k": 3})
    if found.is_error:
        raise SystemExit(found.content[0].text)
    answer = found.structured_content  # {"results": [...], "no_good_match": bool, "notice": ...}
    if answer["no_good_match"]:
        print("No good match; the closest notes:")
    for result in answer["results"]:
        print(f"{result['ref']}  {result['relevance']:.2f}  {result['path']}\n     {result['snippet']}")
    if answer["results"] and not answer["no_good_match"]:
        note = await client.call_tool("vault_read", {"note": answer["results"][0]["ref"]})
        print(f"\n{note.structured_content['path']}: {len(note.structured_content['body'])} characters")


async def main() -> None:
    """Read the command line, connect over the transport it names, and ask."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vault")
    parser.add_argument("question")
    parser.add_argument("--http", metavar="URL", help="a running `companion mcp --transport http` server")
    parser.add_argument("--token", help="its bearer token (`companion mcp --show-token`)")
    parser.add_argument("--companion", default="companion", help="the companion program, for stdio")
    args = parser.parse_args()
    if args.http and not args.token:
        parser.error("--http needs --token (companion mcp --show-token prints it)")
    if args.http:
        # The token travels as an HTTP header, set on an HTTP client handed to the SDK's transport.
        headers = {"Authorization": f"Bearer {args.token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=120) as http,
            Client(streamable_http_client(args.http, http_client=http)) as client,
        ):
            await ask(client, args.question)
    else:
        server = StdioServerParameters(command=args.companion, args=["mcp", "--vault", args.vault])
        async with Client(server) as client:
            await ask(client, args.question)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except* MCPError as refused:  # the SDK raises inside a task group, so the error comes in a group
        first = refused.exceptions[0]
        raise SystemExit(
            f"The server refused: {first} (over HTTP: is the token right? `companion mcp --show-token`)"
        ) from None
