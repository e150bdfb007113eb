"""OpenAIEmbedder against a real HTTP server on 127.0.0.1 that answers /v1/embeddings."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from companion.embedding.providers import Embedder, OpenAIEmbedder, embedder_from_config
from companion.errors import ConfigError, ModelError


class _Handler(BaseHTTPRequestHandler):
    """Answers each input i with the vector (3, 4, 0, i): easy norms, and rows that tell their order.

    The model name picks a failure: "broken" -> HTTP 500, "garbage" -> invalid JSON, "wrong" -> a
    JSON answer without "data". Rows are sent in reverse order with their "index", as servers may.
    """

    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep pytest's output clean

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        self.server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        if self.path != "/v1/embeddings":
            self._send(404, b'{"error": "not found"}')
        elif body["model"] == "broken":
            self._send(500, b'{"error": "model crashed"}')
        elif body["model"] == "garbage":
            self._send(200, b"<html>not json</html>")
        elif body["model"] == "wrong":
            self._send(200, b'{"object": "list"}')
        else:
            rows = [
                {"object": "embedding", "index": i, "embedding": [3.0, 4.0, 0.0, float(i)]}
                for i in range(len(body["input"]))
            ]
            payload = {"object": "list", "data": rows[::-1], "model": body["model"]}
            self._send(200, json.dumps(payload).encode())

    def _send(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    """The test server, recording every request it got."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []


@pytest.fixture
def server() -> Iterator[_Server]:
    httpd = _Server()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def _url(httpd: _Server) -> str:
    return f"http://127.0.0.1:{httpd.server_address[1]}"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_vectors_are_normalised_and_in_input_order(server: _Server) -> None:
    embedder = OpenAIEmbedder(_url(server), "nomic-embed-text")
    vectors = embedder.embed(["a", "b", "c"])
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, 4)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(vectors[0], [0.6, 0.8, 0.0, 0.0], atol=1e-7)
    # Row i came back with 4th component i (before normalising): the "index" order was kept.
    raw = np.array([[3, 4, 0, i] for i in range(3)], dtype=np.float64)
    np.testing.assert_allclose(vectors, raw / np.linalg.norm(raw, axis=1, keepdims=True), atol=1e-7)
    assert server.requests[0]["body"] == {"model": "nomic-embed-text", "input": ["a", "b", "c"]}
    assert server.requests[0]["auth"] is None


def test_dim_is_discovered_from_the_first_answer(server: _Server) -> None:
    embedder = OpenAIEmbedder(_url(server), "m")
    as_protocol: Embedder = embedder
    assert as_protocol.model_id == "openai:m"
    assert embedder.dim == 4  # asks the server once
    assert len(server.requests) == 1
    assert embedder.embed([]).shape == (0, 4)
    assert embedder.dim == 4
    assert len(server.requests) == 1


def test_given_dim_is_checked(server: _Server) -> None:
    empty = OpenAIEmbedder(_url(server), "m", dim=768).embed([])
    assert empty.shape == (0, 768)
    assert server.requests == []
    with pytest.raises(ModelError, match="width 4, expected 768"):
        OpenAIEmbedder(_url(server), "m", dim=768).embed(["x"])


@pytest.mark.parametrize("url_suffix", ["", "/", "/v1", "/v1/embeddings"])
def test_url_forms_and_batches(server: _Server, url_suffix: str) -> None:
    embedder = OpenAIEmbedder(_url(server) + url_suffix, "m", api_key="sk-test", batch_size=2)
    vectors = embedder.embed([f"t{i}" for i in range(5)])
    assert vectors.shape == (5, 4)
    requests = server.requests
    assert [len(r["body"]["input"]) for r in requests] == [2, 2, 1]
    assert {r["path"] for r in requests} == {"/v1/embeddings"}
    assert requests[0]["auth"] == "Bearer sk-test"
    # Each batch numbers its rows from 0, so rows 0/2/4 all start a batch and are equal.
    np.testing.assert_allclose(vectors[0], vectors[2])
    np.testing.assert_allclose(vectors[1], vectors[3])


def test_closed_port_gives_a_clear_model_error() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    embedder = OpenAIEmbedder(url, "m", timeout=5)
    with pytest.raises(ModelError) as info:
        embedder.embed(["hello"])
    assert f"{url}/v1/embeddings" in str(info.value)
    assert "Cannot reach" in str(info.value)


@pytest.mark.parametrize(
    ("model", "words"),
    [("broken", "HTTP 500"), ("garbage", "invalid JSON"), ("wrong", "unexpected answer")],
)
def test_server_failures_give_model_errors(server: _Server, model: str, words: str) -> None:
    url = _url(server)
    with pytest.raises(ModelError) as info:
        OpenAIEmbedder(url, model).embed(["x"])
    assert words in str(info.value)
    assert url in str(info.value)


def test_count_tokens_is_a_word_and_punctuation_count() -> None:
    embedder = OpenAIEmbedder("http://127.0.0.1:1", "m", dim=3)
    assert embedder.count_tokens(["Hello, world!", "", "one two  three"]) == [4, 0, 3]


def test_embedder_from_config(server: _Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_EMBED_KEY", "sk-env")
    embedder = embedder_from_config("openai", "m", _url(server), "TEST_EMBED_KEY")
    assert embedder.model_id == "openai:m"
    embedder.embed(["x"])
    assert server.requests[0]["auth"] == "Bearer sk-env"
    with pytest.raises(ConfigError, match="url"):
        embedder_from_config("openai", "m", None, None)
    with pytest.raises(ConfigError, match="NOT_SET_ANYWHERE"):
        embedder_from_config("openai", "m", _url(server), "NOT_SET_ANYWHERE")
    with pytest.raises(ConfigError, match="Unknown embedding provider"):
        embedder_from_config("word2vec", None, None, None)
    with pytest.raises(ConfigError, match="minilm runs"):
        embedder_from_config("minilm", "bge-small", None, None)
