"""The encoder of multilingual-e5-small (XLM-R's architecture, 12 layers) written as an ONNX graph from the weights
`e5source` reads.

The same inputs and output as the English model's graph (`input_ids`, `attention_mask`, `token_type_ids` to
`last_hidden_state`), standard operators of opset 17 only. The matrices are dequantised into float32; the word
embeddings (250,000 rows, most of the model) stay 4-bit in the file and are dequantised in the graph for the rows a
batch uses, so the model is 130 MB instead of 470 MB and gives the same numbers. Kept apart from `modelbuild` so that
importing the model's constants never loads `onnx`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, helper, numpy_helper

from companion.embedding.e5source import BLOCK, E5Weights
from companion.embedding.onnxgraph import encoder_model

_MASK_VALUE = -10000.0  # exp() of a masked score underflows to exactly 0 in float32


class _Graph:
    def __init__(self, weights: E5Weights) -> None:
        self.w = weights
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0
        self.head = weights.width // weights.heads

    def init(self, array: npt.NDArray[Any], name: str | None = None) -> str:
        self._count += 1
        name = name or f"const_{self._count}"
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def const(self, value: Any, dtype: npt.DTypeLike = np.float32) -> str:
        return self.init(np.asarray(value, dtype=dtype))

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out, **attrs))
        return out

    def linear(self, x: str, name: str, rows: int, cols: int) -> str:
        bias = self.init(self.w.floats(name[:-2] + ".b", (rows,)), name[:-2] + ".b")
        matrix = self.w.matrix(name, rows, cols)
        return self.op("Add", self.op("MatMul", x, self.init(matrix.T.copy(), name)), bias)

    def layer_norm(self, x: str, prefix: str) -> str:
        scale = self.init(self.w.floats(prefix + ".w", (self.w.width,)), prefix + ".w")
        shift = self.init(self.w.floats(prefix + ".b", (self.w.width,)), prefix + ".b")
        return self.op("LayerNormalization", x, scale, shift, axis=-1, epsilon=float(self.w.eps))

    def split_heads(self, x: str, perm: list[int]) -> str:
        shaped = self.op("Reshape", x, self.const([0, 0, self.w.heads, self.head], np.int64))
        return self.op("Transpose", shaped, perm=perm)

    def layer(self, x: str, mask: str, i: int) -> str:
        width, inner, p = self.w.width, self.w.inner, f"l{i}"
        q = self.split_heads(self.linear(x, f"{p}.q.w", width, width), [0, 2, 1, 3])
        k = self.split_heads(self.linear(x, f"{p}.k.w", width, width), [0, 2, 3, 1])
        v = self.split_heads(self.linear(x, f"{p}.v.w", width, width), [0, 2, 1, 3])
        scores = self.op("Div", self.op("MatMul", q, k), self.const(math.sqrt(self.head)))
        probs = self.op("Softmax", self.op("Add", scores, mask), axis=-1)
        context = self.op("Transpose", self.op("MatMul", probs, v), perm=[0, 2, 1, 3])
        context = self.op("Reshape", context, self.const([0, 0, width], np.int64))
        x = self.layer_norm(self.op("Add", self.linear(context, f"{p}.ao.w", width, width), x), f"{p}.aln")
        up = self.linear(x, f"{p}.fi.w", inner, width)
        erf = self.op("Erf", self.op("Div", up, self.const(math.sqrt(2.0))))
        gelu = self.op("Mul", self.op("Mul", up, self.const(0.5)), self.op("Add", erf, self.const(1.0)))
        return self.layer_norm(self.op("Add", self.linear(gelu, f"{p}.fo.w", width, inner), x), f"{p}.oln")

    def word_embeddings(self) -> str:
        """The rows of the 4-bit table the batch uses, dequantised in the graph as the package's engine does."""
        w, width = self.w, self.w.width
        per_row = width // BLOCK
        nibbles, scales = w.blocks("emb.word", w.vocab, width)
        blocks = nibbles.reshape(w.vocab, per_row, BLOCK)
        packed = (blocks[:, :, :16] | (blocks[:, :, 16:] << 4)).astype(np.uint8)
        rows = self.op("Gather", self.init(packed.reshape(w.vocab, per_row * 16), "emb.word.q4"), "input_ids", axis=0)
        rows = self.op("Cast", rows, to=TensorProto.INT32)
        low = self.op("Mod", rows, self.const(16, np.int32))
        high = self.op("Div", rows, self.const(16, np.int32))
        shape = self.const([0, 0, per_row, 16], np.int64)
        both = self.op("Concat", self.op("Reshape", low, shape), self.op("Reshape", high, shape), axis=-1)
        values = self.op("Sub", self.op("Cast", both, to=TensorProto.FLOAT), self.const(8.0))
        row_scales = self.op("Gather", self.init(scales.astype(np.float16), "emb.word.scales"), "input_ids", axis=0)
        row_scales = self.op("Cast", row_scales, to=TensorProto.FLOAT)
        row_scales = self.op("Unsqueeze", row_scales, self.const([-1], np.int64))
        return self.op("Reshape", self.op("Mul", values, row_scales), self.const([0, 0, width], np.int64))

    def build(self) -> onnx.ModelProto:
        w, width = self.w, self.w.width
        # The first `seq` rows of the position table by a Slice: onnxruntime rewrites a Gather over a Range into a
        # Slice with scalar bounds that fails on this graph.
        seq = self.op("Shape", "input_ids", start=1, end=2)
        words = self.word_embeddings()
        table = self.init(w.floats("emb.pos", (w.positions, width)), "emb.pos")
        places = self.op("Slice", table, self.const([0], np.int64), seq, self.const([0], np.int64))
        kinds = self.op(
            "Gather", self.init(w.floats("emb.type", (w.types, width)), "emb.type"), "token_type_ids", axis=0
        )
        x = self.layer_norm(self.op("Add", self.op("Add", words, kinds), places), "emb.ln")
        keep = self.op("Cast", "attention_mask", to=TensorProto.FLOAT)
        bias = self.op("Mul", self.op("Sub", self.const(1.0), keep), self.const(_MASK_VALUE))
        mask = self.op("Unsqueeze", bias, self.const([1, 2], np.int64))
        for i in range(w.layers):
            x = self.layer(x, mask, i)
        return encoder_model(self.nodes, self.initializers, x, "xlmr_encoder", width)


def build_graph(weights: E5Weights) -> onnx.ModelProto:
    """The encoder as an ONNX model."""
    return _Graph(weights).build()
