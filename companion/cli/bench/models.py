"""The int8 measure: the same chunks embedded by the float model and by its int8 form, for the speed-up and for how
far apart their vectors are, on short conversation windows and on long knowledge notes."""

from __future__ import annotations

import statistics
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from companion.cli.bench.bigvault import long_vault
from companion.cli.bench.common import chunk_texts, synthetic_vault, timed


def vault_chunks(vault: Path, data: Path) -> list[str]:
    """The chunk texts of `vault`, chunked as the models measures share them (by the hashing embedder's count)."""
    from companion.embedding.hashing import HashEmbedder
    from companion.workspace import Workspace

    # Chunking needs the model's tokenizer only; the hashing embedder keeps the model out of this workspace.
    ws = Workspace.open(vault, data_dir=data, embedder=HashEmbedder())
    texts = chunk_texts(ws)
    ws.close()
    return texts


def int8_model(root: Path, notes: int, long_notes: int) -> dict[str, Any]:
    """Embed the chunks of a synthetic conversation vault of `notes` notes and of `long_notes` long notes with both
    models, alternately twice so that drift in the machine's speed falls on both; report each model's chunks and
    tokens per second, the speed-up, and the cosine between the two models' vectors of each chunk."""
    from companion.embedding.modelbuild import INT8_MODEL_ID
    from companion.embedding.providers import MiniLMEmbedder

    float_model = MiniLMEmbedder()
    int8 = MiniLMEmbedder(model_id=INT8_MODEL_ID)
    kinds = {
        "conversation_windows": vault_chunks(synthetic_vault(root / "short", notes), root / "short" / "data"),
        "long_notes": vault_chunks(long_vault(root / "long" / "vault", long_notes), root / "long" / "data"),
    }
    result: dict[str, Any] = {"models": [float_model.model_id, int8.model_id]}
    for kind, texts in kinds.items():
        tokens = sum(min(n, float_model.max_tokens) for n in float_model.count_tokens(texts))
        float_model.embed(texts[:64])  # the first call of a session allocates; keep it out of the timing
        int8.embed(texts[:64])
        times: dict[str, list[float]] = {"float": [], "int8": []}
        for _ in range(2):
            for name, model in (("float", float_model), ("int8", int8)):
                times[name].append(timed(partial(model.embed, texts)))
        cosines = (float_model.embed(texts) * int8.embed(texts)).sum(axis=1)
        float_s, int8_s = statistics.mean(times["float"]), statistics.mean(times["int8"])
        result[kind] = {
            "chunks": len(texts),
            "tokens": tokens,
            "float_s": round(float_s, 2),
            "int8_s": round(int8_s, 2),
            "float_tokens_per_s": round(tokens / float_s),
            "int8_tokens_per_s": round(tokens / int8_s),
            "speedup": round(float_s / int8_s, 2),
            "cosine_mean": round(float(np.mean(cosines)), 4),
            "cosine_min": round(float(np.min(cosines)), 4),
        }
    return result
