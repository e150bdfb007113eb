"""The real `companion mcp --transport http` on a free loopback port: every request must carry the vault's bearer
token, kept in its data directory with mode 600; the SDK's Host and Origin checks still hold."""

from __future__ import annotations

import json
import stat
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from companion.locations import DataPaths, vault_data_dir
from companion.mcp_server import bearer
from tests.helpers.agentvault import write_agent_vault
from tests.helpers.cli import run_companion
from tests.helpers.mcphttp import http_server, show_token
from tests.helpers.rawmcp import INITIALIZE, WAIT_S


def post(url: str, headers: dict[str, str]) -> tuple[int, bytes]:
    """POST an `initialize` request with `headers`: (status, body)."""
    request = urllib.request.Request(
        url,
        data=json.dumps(INITIALIZE).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=WAIT_S) as response:
            return response.status, response.read(2048)
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """The agent vault, with the hashing embedder."""
    return write_agent_vault(tmp_path / "vault")


def test_a_client_sending_the_token_lists_and_calls_tools(vault: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with http_server(vault, data) as url:
        token = show_token(vault, data)

        async def main() -> None:
            with anyio.fail_after(WAIT_S):
                # As the SDK says to configure headers: an HTTP client of one's own, handed to its transport.
                headers = {"Authorization": f"Bearer {token}"}
                async with (
                    httpx2.AsyncClient(headers=headers, timeout=WAIT_S) as http,
                    Client(streamable_http_client(url, http_client=http)) as client,
                ):
                    assert "vault_search" in {t.name for t in (await client.list_tools()).tools}
                    found = await client.call_tool("vault_search", {"query": "chalet deposit", "k": 2})
                    assert not found.is_error
                    assert found.structured_content["results"][0]["path"] == "Conversations/2026-10-05 Ski trip.md"

        anyio.run(main)


def test_requests_without_the_token_or_with_a_wrong_one_are_refused(vault: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with http_server(vault, data) as url:
        token = show_token(vault, data)
        for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": f"Basic {token}"}):
            status, body = post(url, headers)
            assert status == 401, headers
            refusal = json.loads(body)
            assert "unauthorized" in refusal["error"] and "companion mcp --show-token" in refusal["token"]
        status, _body = post(url, {"Authorization": f"Bearer {token}"})
        assert status == 200


def test_the_token_file_is_private_and_the_token_stable_across_restarts(vault: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    token_file = DataPaths(vault_data_dir(vault, data)).mcp_token
    with http_server(vault, data) as url:
        assert token_file.is_file()  # made by the server on its first start
        first = show_token(vault, data)
        assert status_with(url, first) == 200
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert token_file.read_text(encoding="ascii").strip() == first
    with http_server(vault, data) as url:
        assert status_with(url, first) == 200
    assert show_token(vault, data) == first
    done = run_companion("mcp", "--vault", str(vault), "--data-dir", str(data), "--show-token", "--json")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown == {"token": first, "url": "http://127.0.0.1:8765/mcp"}


def status_with(url: str, token: str) -> int:
    """The status of an `initialize` request sending `token`."""
    return post(url, {"Authorization": f"Bearer {token}"})[0]


def test_a_token_file_made_readable_by_others_is_made_private_again(vault: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = show_token(vault, data)
    token_file = DataPaths(vault_data_dir(vault, data)).mcp_token
    token_file.chmod(0o644)
    assert show_token(vault, data) == first
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600


def test_the_origin_and_host_checks_still_refuse_with_the_token(vault: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with http_server(vault, data) as url:
        bearer = {"Authorization": f"Bearer {show_token(vault, data)}"}
        assert post(url, {**bearer, "Origin": "http://evil.example"})[0] == 403
        assert post(url, {**bearer, "Host": "evil.example"})[0] == 421
        assert post(url, {**bearer, "Origin": url.removesuffix("/mcp")})[0] == 200


def test_a_new_token_never_starts_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    # A token after `--token` on a command line must not read as an option: the first draws start with one.
    draws = iter(["-starts-with-a-dash", "-again", "fine_token"])
    monkeypatch.setattr(bearer.secrets, "token_urlsafe", lambda n: next(draws))
    assert bearer.new_token() == "fine_token"
