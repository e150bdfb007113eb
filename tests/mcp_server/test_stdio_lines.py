"""Every line the real `companion mcp` reads on stdin gets an answer, a line that is no message an error, and the
server reads on: raw bytes written to a real server process, its stdout read line by line."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import mcp_types as types
import pytest

from companion.mcp_server.stdio import BadLine, encode, read_message
from tests.helpers.agentvault import write_agent_vault
from tests.helpers.rawmcp import INITIALIZE, WAIT_S


class RawServer:
    """A real `companion mcp` process written raw lines and read one JSON message per stdout line."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.stdout: queue.Queue[bytes] = queue.Queue()
        self.stderr: list[bytes] = []
        assert process.stdout is not None and process.stderr is not None
        threading.Thread(target=self._drain, args=(process.stdout, self.stdout.put), daemon=True).start()
        threading.Thread(target=self._drain, args=(process.stderr, self.stderr.append), daemon=True).start()

    @staticmethod
    def _drain(stream: IO[bytes], put: Callable[[bytes], None]) -> None:
        for line in stream:
            put(line)

    def send(self, line: bytes) -> None:
        """Write one line (the newline is added)."""
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def answer(self, matches: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The next message on stdout that `matches` (others, such as notifications, are passed over)."""
        while True:
            try:
                line = self.stdout.get(timeout=WAIT_S)
            except queue.Empty:
                pytest.fail(f"no answer from the server; its stderr: {b''.join(self.stderr)[-2000:]!r}")
            message: dict[str, Any] = json.loads(line)  # every stdout line is one JSON message
            if matches(message):
                return message


def answering(request_id: int | None) -> Callable[[dict[str, Any]], bool]:
    """Matches the answer (result or error) to `request_id`; None matches an error with a null id."""
    return lambda m: "id" in m and m["id"] == request_id and ("result" in m or "error" in m)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    """A read-only server on the agent vault (hashing embedder), handshake done."""
    vault = write_agent_vault(tmp_path / "vault")
    process = subprocess.Popen(
        [sys.executable, "-m", "companion", "mcp", "--vault", str(vault), "--data-dir", str(tmp_path / "data")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    raw = RawServer(process)
    try:
        raw.send(json.dumps(INITIALIZE).encode())
        assert "result" in raw.answer(answering(1))
        raw.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        yield raw
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def search(request_id: int, query: str) -> bytes:
    """A `vault_search` call, as its JSON text (a lone surrogate in `query` goes as its escape, `\\ud800`)."""
    call = {"name": "vault_search", "arguments": {"query": query, "k": 2}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": call}).encode()


def test_garbage_bad_utf8_and_lone_surrogates_are_answered_and_the_server_reads_on(server: RawServer) -> None:
    server.send(b"this is not JSON")
    garbage = server.answer(answering(None))
    assert garbage["jsonrpc"] == "2.0" and garbage["error"]["code"] == -32700
    assert garbage["error"]["message"].startswith("Parse error")

    server.send(b"\xff\xfe{}")
    assert server.answer(answering(None))["error"]["code"] == -32700

    # Well-formed JSON around bytes that are not UTF-8: refused as unparsable, never read with the bytes replaced.
    server.send(b'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"\xc3\x28"}}')
    bad_bytes = server.answer(answering(None))
    assert bad_bytes["error"]["code"] == -32700 and "UTF-8" in bad_bytes["error"]["message"]

    surrogate = search(5, "\ud800")
    assert b'"\\ud800"' in surrogate  # the JSON text holds the escape, as an adversarial client sends it
    server.send(surrogate)
    refused = server.answer(answering(5))
    assert refused["error"]["code"] == -32602
    assert "params.arguments.query" in refused["error"]["message"]

    server.send(b"[1, 2]")
    assert server.answer(answering(None))["error"]["code"] == -32600

    server.send(search(6, "chalet deposit"))
    found = server.answer(answering(6))
    assert not found["result"]["isError"]
    first = found["result"]["structuredContent"]["results"][0]
    assert first["path"] == "Conversations/2026-10-05 Ski trip.md"

    assert server.process.poll() is None  # still serving
    assert server.process.stdin is not None
    server.process.stdin.close()
    server.process.wait(timeout=30)
    log = b"".join(server.stderr).decode("utf-8", "replace")
    assert "Parse error" in log and "params.arguments.query" in log  # each bad line is logged on stderr


def test_a_request_that_is_no_json_rpc_message_is_answered_by_its_id(server: RawServer) -> None:
    server.send(b'{"jsonrpc":"2.0","id":7,"method":42}')
    invalid = server.answer(answering(7))
    assert invalid["error"]["code"] == -32600 and "method" in invalid["error"]["message"]
    server.send(b'{"jsonrpc":"2.0","id":8,"method":"tools/list"}')
    assert "tools" in server.answer(answering(8))["result"]


def test_lines_are_told_apart_by_what_is_wrong_with_them() -> None:
    assert read_message(b"  \r\n") is None  # a blank line is no message, and needs no answer

    def bad(line: bytes) -> BadLine:
        read = read_message(line)
        assert isinstance(read, BadLine), read
        return read

    assert bad(b'{"jsonrpc":"2.0","id":[1],"method":"tools/list"}').code == types.INVALID_REQUEST
    key = bad(rb'{"jsonrpc":"2.0","id":"a","method":"x","params":{"k\udfff":1}}')
    assert (key.code, key.request_id) == (types.INVALID_PARAMS, "a") and "a key of params" in key.message
    method = bad(rb'{"jsonrpc":"2.0","id":2,"method":"x\ud800"}')
    assert (method.code, method.request_id) == (types.INVALID_REQUEST, 2)
    # A notification has no id to be answered by: the null id, as for a line that does not parse.
    assert bad(rb'{"jsonrpc":"2.0","method":"x","params":{"a":"\udc00"}}').request_id is None
    # A response's id names one of the server's own requests: never echoed back.
    assert bad(b'{"jsonrpc":"2.0","id":3}').request_id is None
    assert bad(b"[" * 100_000).code == types.PARSE_ERROR
    pair = read_message(rb'{"jsonrpc":"2.0","id":9,"method":"x","params":{"q":"\ud83d\ude00"}}')
    assert isinstance(pair, types.JSONRPCRequest)  # a surrogate pair is one character, and fine


def test_an_answer_holding_a_lone_surrogate_goes_out_mended() -> None:
    answer = types.JSONRPCResponse(jsonrpc="2.0", id=3, result={"path": "Bad\udcff name.md"})
    line = encode(answer)
    assert line.endswith(b"\n")
    assert json.loads(line) == {"jsonrpc": "2.0", "id": 3, "result": {"path": "Bad\ufffd name.md"}}


def test_requests_read_before_stdin_ends_are_all_answered(tmp_path: Path) -> None:
    vault = write_agent_vault(tmp_path / "vault")
    lines = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "vault_search", "arguments": {"query": "kitchen budget", "k": 1}},
        },
    ]
    done = subprocess.run(
        [sys.executable, "-m", "companion", "mcp", "--vault", str(vault), "--data-dir", str(tmp_path / "data")],
        input="".join(json.dumps(line) + "\n" for line in lines).encode(),  # then stdin ends at once
        capture_output=True,
        timeout=WAIT_S,
        check=False,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a.get("id") for a in answers] == [1, 2, 3], done.stderr[-2000:]
    assert "result" in answers[2]
