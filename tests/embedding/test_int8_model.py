"""The int8 model: quantised at install from the float graph, vectors close to the float model's, its own model id,
chosen in the config, and never mixed with the float model's vectors in one index."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

from companion.cli import main
from companion.embedding.modelbuild import INT8_MODEL_ID, MANIFEST_NAME, MODEL_ID, ensure_model, is_complete
from companion.embedding.providers import MiniLMEmbedder, embedder_from_config
from companion.errors import ConfigError, ModelError

pytestmark = pytest.mark.model

REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "minilm_reference.json"


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A fresh int8 build in a temporary model cache: (float folder, int8 folder)."""
    cache = tmp_path_factory.mktemp("models")
    ensure_model(cache / INT8_MODEL_ID, model_id=INT8_MODEL_ID)
    return cache / MODEL_ID, cache / INT8_MODEL_ID


def test_int8_is_quantised_from_the_float_model_beside_it(roots: tuple[Path, Path]) -> None:
    float_root, int8_root = roots
    assert is_complete(float_root) and is_complete(int8_root, INT8_MODEL_ID)
    # Each folder is only its own model.
    assert not is_complete(float_root, INT8_MODEL_ID)
    assert not is_complete(int8_root, MODEL_ID)
    manifest = json.loads((int8_root / MANIFEST_NAME).read_text())
    float_manifest = json.loads((float_root / MANIFEST_NAME).read_text())
    assert manifest["model_id"] == INT8_MODEL_ID
    assert manifest["quantised_from"] == float_manifest["sha256"]
    graph = onnx.load(str(int8_root / "onnx" / "model.onnx")).graph
    ops = {node.op_type for node in graph.node}
    assert ops & {"MatMulInteger", "DynamicQuantizeMatMul", "DynamicQuantizeLinear"}
    int8_weights = [t for t in graph.initializer if t.data_type == onnx.TensorProto.INT8]
    # Six layers of four attention and two feed-forward products.
    assert len(int8_weights) >= 36
    size = (int8_root / "onnx" / "model.onnx").stat().st_size
    assert size < 0.75 * (float_root / "onnx" / "model.onnx").stat().st_size


def test_int8_build_is_idempotent(roots: tuple[Path, Path]) -> None:
    _, int8_root = roots
    model = int8_root / "onnx" / "model.onnx"
    before = model.stat().st_mtime_ns
    assert ensure_model(int8_root, model_id=INT8_MODEL_ID) == int8_root / "onnx"
    assert model.stat().st_mtime_ns == before


def test_an_unknown_local_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=INT8_MODEL_ID):
        ensure_model(tmp_path / "x", model_id="all-MiniLM-L12-v2")
    assert list(tmp_path.iterdir()) == []


def test_int8_vectors_stay_close_to_the_reference(roots: tuple[Path, Path]) -> None:
    _, int8_root = roots
    reference: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    texts = [item["text"] for item in reference["items"]]
    expected = np.array([item["vector"] for item in reference["items"]], dtype=np.float32)
    model = MiniLMEmbedder(int8_root / "onnx", model_id=INT8_MODEL_ID)
    assert model.model_id == INT8_MODEL_ID
    got = model.embed(texts)
    cosines = (got * expected).sum(axis=1)
    # The int8 kernels differ by processor: with VNNI every cosine was above 0.97; without it (AVX2 only), where
    # pairs of products are added in 16 bits, the lowest was 0.966 for the same graph.
    assert cosines.min() > 0.96, cosines
    assert cosines.mean() > 0.98, cosines
    # Close, but a different model: the float vectors are not reproduced exactly.
    assert cosines.max() < 0.99999
    # The reference texts' pairs are ordered by similarity as the float model orders them (a rank correlation over
    # all 78 pairs; which single text is second nearest flips between near ties).
    pairs = np.triu_indices(len(texts), 1)
    ranks_got = (got @ got.T)[pairs].argsort().argsort()
    ranks_expected = (expected @ expected.T)[pairs].argsort().argsort()
    assert np.corrcoef(ranks_got, ranks_expected)[0, 1] > 0.97


def test_the_config_chooses_the_int8_model() -> None:
    assert embedder_from_config("minilm", INT8_MODEL_ID, None, None).model_id == INT8_MODEL_ID
    assert embedder_from_config("minilm", None, None, None).model_id == MODEL_ID
    with pytest.raises(ConfigError) as info:
        embedder_from_config("minilm", "all-mpnet-base-v2", None, None)
    assert MODEL_ID in str(info.value) and INT8_MODEL_ID in str(info.value)


def _configure(vault: Path, model: str) -> None:
    (vault / ".companion").mkdir(parents=True, exist_ok=True)
    (vault / ".companion" / "companion.yaml").write_text(f"embedding:\n  model: {model}\n", encoding="utf-8")


def test_an_index_never_mixes_the_two_models(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault, data = tmp_path / "vault", tmp_path / "data"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "Sourdough.md").write_text("# Sourdough\n\nFeed the starter rye flour twice a day.\n")
    (vault / "notes" / "Cycling.md").write_text("# Cycling\n\nThe chain needs wax every 300 km.\n")
    where = ["--vault", str(vault), "--data-dir", str(data)]
    _configure(vault, INT8_MODEL_ID)
    assert main(["index", *where]) == 0
    capsys.readouterr()
    assert main(["recall", "how often should I feed the bread starter", "--json", *where]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["results"][0]["path"] == "notes/Sourdough.md"

    # Back to the float model: the int8 vectors are dropped and every note embedded again before it is queried,
    # never queried with the other model's vectors.
    _configure(vault, MODEL_ID)
    assert main(["recall", "bread starter", "--json", *where]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["results"][0]["path"] == "notes/Sourdough.md"
    assert f"changed from {INT8_MODEL_ID} to {MODEL_ID}" in out.err
    assert "Traceback" not in out.err

    assert main(["recall", "bicycle chain maintenance", "--json", *where]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["path"] == "notes/Cycling.md"


def test_the_int8_bench_compares_both_models_on_both_kinds_of_chunk(tmp_path: Path) -> None:
    from companion.cli.bench.models import int8_model

    result = int8_model(tmp_path, notes=12, long_notes=2)
    assert result["models"] == [MODEL_ID, INT8_MODEL_ID]
    for kind in ("conversation_windows", "long_notes"):
        figures = result[kind]
        assert figures["chunks"] > 0 and figures["tokens"] >= figures["chunks"]
        assert figures["float_s"] > 0 and figures["int8_s"] > 0
        assert figures["speedup"] == pytest.approx(figures["float_s"] / figures["int8_s"], rel=0.25)  # both rounded
        assert 0.95 < figures["cosine_min"] <= figures["cosine_mean"] < 1.0
