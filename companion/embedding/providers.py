"""Turn texts into vectors: the local all-MiniLM-L6-v2 model by default, or an OpenAI-compatible
server.

`MiniLMEmbedder` gives the same vectors as Chroma's default embedding function
(`ONNXMiniLM_L6_V2`): the same tokenizer, truncation at 256 tokens, mean pooling over the attention
mask and L2 normalisation. It pads each batch only to its longest text, after sorting texts by
length, instead of always to 256: padded positions are masked out, so the vectors do not change,
but short texts cost far less.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from companion.embedding.modelbuild import (
    DIM,
    MODEL_ID,
    MODEL_IDS,
    MULTILINGUAL,
    PREFIXES,
    ensure_model,
    model_files,
)
from companion.errors import ConfigError, ModelError

if TYPE_CHECKING:
    # onnxruntime, tokenizers and httpx cost about half a second to import; commands that never embed
    # (a restart with nothing changed) must not pay it, so they are imported where they are used.
    from tokenizers import Tokenizer

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_WORDS = re.compile(r"\w+|[^\w\s]")


class Embedder(Protocol):
    """Anything that turns texts into L2-normalised vectors of a fixed width."""

    @property
    def model_id(self) -> str:
        """Names the model, so an index built with one model is never queried with another."""
        ...

    @property
    def dim(self) -> int:
        """Width of every vector."""
        ...

    @property
    def multilingual(self) -> bool:
        """Whether the model was trained on many languages (a question in one meets a note in another)."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors of questions (a model may embed a question otherwise than a passage)."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """float32 array of shape (len(texts), dim), rows L2-normalised, in the order of `texts`."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens the model would see for each text, without truncation, special tokens included."""
        ...


def _normalise(vectors: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    norms: npt.NDArray[Any] = np.linalg.norm(vectors, axis=1, keepdims=True)
    # Same floor as torch.nn.functional.normalize: an all-zero row stays zero, not NaN.
    scaled: npt.NDArray[Any] = vectors / np.maximum(norms, 1e-12)
    return scaled.astype(np.float32)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime, offline, with the vectors of Chroma's default embedding
    function.

    `model_dir` is a folder with `model.onnx` and the tokenizer files (Chroma's `onnx` layout); None
    builds or reuses the model `model_id` (the float model, or its int8 form) under
    `companion.locations.models_dir()`. `threads` sets
    onnxruntime's intra-op threads (default: every core). A batch holds at most `batch_size` texts
    and, once padded, at most `max_batch_tokens` tokens (None: no limit), since long padded batches
    run slower per token: their attention scores no longer fit in the CPU cache. 1,024 was as fast as
    2,048 here and holds ~70 MB less in onnxruntime's buffers, which keep the largest batch's size for
    good. Raises `ModelError` when the model cannot be built or loaded.
    """

    model_id: str = MODEL_ID
    """The model's name; also Chroma's `ONNXMiniLM_L6_V2.MODEL_NAME`."""
    dim: int = DIM
    """Width of every vector."""
    max_tokens: int = 256
    """Longer texts are cut to this many tokens, special tokens included, as in Chroma."""

    def __init__(
        self,
        model_dir: Path | None = None,
        batch_size: int = 32,
        threads: int | None = None,
        *,
        max_batch_tokens: int | None = 1024,
        model_id: str = MODEL_ID,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        folder = ensure_model(model_id=model_id) if model_dir is None else Path(model_dir)
        self.model_id = model_id
        self.multilingual = reads_every_language(model_id)
        """Whether the model reads many languages."""
        self.query_prefix, self.passage_prefix = PREFIXES.get(model_id, ("", ""))
        """What the model wants before a question and before a passage (the multilingual model was trained so)."""
        missing = [n for n in model_files(model_id) if not (folder / n).is_file()]
        if missing:
            raise ModelError(f"The embedding model folder {folder} lacks {', '.join(missing)}.")
        self.model_dir = folder
        """The folder the model was loaded from."""
        self.batch_size = batch_size
        """Most texts per onnxruntime call."""
        self.max_batch_tokens = max_batch_tokens
        """Most tokens per onnxruntime call, padding included; a longer text still goes alone."""
        self.threads = threads or os.cpu_count() or 1
        """onnxruntime's intra-op threads."""
        rebuild = " (delete the folder to have it rebuilt)" if model_dir is None else ""
        import onnxruntime as ort
        from tokenizers import Tokenizer

        try:
            # One tokenizer serves counting and embedding: the multilingual model's holds about 290 MB, and a
            # second one configured to truncate would hold as much again for what `_cut` does on the ids.
            self._counter = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as exc:  # tokenizers raises a bare Exception on bad files
            raise ModelError(f"Cannot load the tokenizer in {folder}{rebuild}: {exc}") from exc
        # tokenizer.json carries the HF defaults (truncate and pad to 128); we want neither: the model's input
        # is cut to its limit in `_cut`, and padded per batch in `embed`.
        self._counter.no_padding()
        self._counter.no_truncation()
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        try:
            self._session = ort.InferenceSession(
                str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime's errors share no public base class
            raise ModelError(f"Cannot load {folder / 'model.onnx'}{rebuild}: {exc}") from exc
        names = {i.name for i in self._session.get_inputs()}
        if not set(_INPUTS) <= names:
            raise ModelError(f"{folder / 'model.onnx'} is not a BERT encoder: its inputs are {sorted(names)}.")

    @property
    def tokenizer(self) -> Tokenizer:
        """The model's tokenizer with neither padding nor truncation, to count tokens fast.

        Shared, not copied: do not change its settings.
        """
        return self._counter

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens the model would see for each text as a passage before truncation, [CLS] and [SEP] and the
        passage prefix included (so a chunk cut to the budget is never cut again by the model)."""
        if not texts:
            return []
        prefixed = [self.passage_prefix + t for t in texts] if self.passage_prefix else list(texts)
        return [len(e.ids) for e in self._counter.encode_batch(prefixed)]

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors of passages (notes, chunks, titles): float32, shape (len(texts), 384), L2-normalised, in input
        order."""
        return self._embed([self.passage_prefix + t for t in texts] if self.passage_prefix else texts)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors of questions, as `embed` makes those of passages."""
        return self._embed([self.query_prefix + t for t in texts] if self.query_prefix else texts)

    def _embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = [self._cut(e.ids) for e in self._counter.encode_batch(list(texts))]
        # Sorting by length keeps texts of similar length together, so little of a batch is padding.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for chunk in self._batches(order, [len(row) for row in ids]):
            out[chunk] = self._run([ids[i] for i in chunk])
        return out

    def _cut(self, ids: list[int]) -> list[int]:
        """A text's ids cut to the model's limit as the tokenizer's own truncation cuts them: the words past the
        limit go, the closing special token stays."""
        if len(ids) <= self.max_tokens:
            return ids
        return [*ids[: self.max_tokens - 1], ids[-1]]

    def _batches(self, order: list[int], lengths: list[int]) -> list[list[int]]:
        budget = self.max_batch_tokens
        batches: list[list[int]] = []
        chunk: list[int] = []
        for i in order:
            # `order` runs from short to long, so text i sets the padded width of its batch.
            full = len(chunk) >= self.batch_size
            if chunk and (full or (budget is not None and (len(chunk) + 1) * lengths[i] > budget)):
                batches.append(chunk)
                chunk = []
            chunk.append(i)
        if chunk:
            batches.append(chunk)
        return batches

    def _run(self, batch: list[list[int]]) -> npt.NDArray[np.float32]:
        width = max(len(row) for row in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, tokens in enumerate(batch):
            input_ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        feed = {
            "input_ids": input_ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(input_ids),
        }
        try:
            hidden = self._session.run(["last_hidden_state"], feed)[0]
        except Exception as exc:  # onnxruntime's errors share no public base class
            raise ModelError(f"The embedding model in {self.model_dir} failed: {exc}") from exc
        weights = mask.astype(np.float32)
        summed = np.einsum("bsd,bs->bd", hidden, weights)
        pooled = summed / np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)
        return _normalise(pooled)


def _endpoint(url: str) -> str:
    base = url.rstrip("/")
    if base.endswith("/embeddings"):
        return base
    if base.endswith("/v1"):
        return f"{base}/embeddings"
    return f"{base}/v1/embeddings"


class OpenAIEmbedder:
    """Vectors from an OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, llama.cpp...).

    `url` is the server (`http://localhost:11434`), its `/v1` base, or the full `/v1/embeddings`
    address. `dim` None means it is learnt from the first answer. Every failure (connection refused,
    time-out, HTTP error, malformed answer) raises `ModelError` naming the URL. Vectors are
    L2-normalised here, whatever the server does.
    """

    def __init__(
        self,
        url: str,
        model: str,
        api_key: str | None = None,
        dim: int | None = None,
        timeout: float = 30,
        *,
        batch_size: int = 64,
    ) -> None:
        self.url = _endpoint(url)
        """The embeddings endpoint requests go to."""
        self.model = model
        """The model name sent to the server."""
        self.batch_size = batch_size
        """Texts per request."""
        self._dim = dim
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        import httpx

        self._client = httpx.Client(timeout=timeout, headers=headers)

    @property
    def model_id(self) -> str:
        """`openai:<model>`, so vectors of different servers' models are never mixed."""
        return f"openai:{self.model}"

    @property
    def dim(self) -> int:
        """Width of every vector; asks the server once if it was neither given nor seen yet."""
        if self._dim is None:
            return int(self._request(["dimension probe"]).shape[1])
        return self._dim

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """An approximation: words plus punctuation marks, as the server's tokenizer is unknown."""
        return [len(_WORDS.findall(text)) for text in texts]

    multilingual = False
    """Unknown for a server's model: taken as English-first, as the fusion was fitted."""

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Questions are embedded as any text (an endpoint has no separate call for them)."""
        return self.embed(texts)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors of `texts`: float32, shape (len(texts), dim), L2-normalised, in input order."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(list(texts[i : i + self.batch_size])) for i in range(0, len(texts), self.batch_size)]
        return _normalise(np.concatenate(parts))

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()

    def _request(self, texts: list[str]) -> npt.NDArray[np.float64]:
        import httpx

        try:
            response = self._client.post(self.url, json={"model": self.model, "input": texts})
            response.raise_for_status()
            payload = response.json()
        except httpx.HTTPStatusError as exc:
            body = exc.response.text[:200]
            raise ModelError(f"Embedding server {self.url} answered HTTP {exc.response.status_code}: {body}") from exc
        except httpx.HTTPError as exc:
            raise ModelError(f"Cannot reach the embedding server {self.url}: {exc}") from exc
        except ValueError as exc:
            raise ModelError(f"Embedding server {self.url} sent invalid JSON: {exc}") from exc
        try:
            rows = sorted(payload["data"], key=lambda r: int(r.get("index", 0)))
            vectors = np.array([r["embedding"] for r in rows], dtype=np.float64)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ModelError(
                f"Embedding server {self.url} sent an unexpected answer ({exc!r}); "
                "expected {'data': [{'embedding': [...]}, ...]}."
            ) from exc
        if vectors.ndim != 2 or vectors.shape[0] != len(texts) or vectors.shape[1] == 0:
            raise ModelError(
                f"Embedding server {self.url} sent {vectors.shape[0]} vectors of shape "
                f"{vectors.shape[1:]} for {len(texts)} texts."
            )
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        elif vectors.shape[1] != self._dim:
            raise ModelError(
                f"Embedding server {self.url} sent vectors of width {vectors.shape[1]}, "
                f"expected {self._dim} (model {self.model})."
            )
        return vectors


AUTO = "auto"
"""The `embedding.model` that leaves the local model to the companion, as leaving it out does."""


def _local_model(model: str | None) -> str:
    """The local model `model` names (the English one when it names none: the workspace resolves `auto` by the
    vault's languages before it gets here); `ConfigError` for a name no local model has."""
    if model in (None, "", AUTO):
        return MODEL_ID
    if model not in MODEL_IDS:
        names = " or ".join((AUTO, *MODEL_IDS))
        raise ConfigError(
            f"embedding provider minilm runs {names} (auto: chosen by the vault's languages), not {model!r}."
        )
    return model


def _minilm(model: str | None, url: str | None, api_key_env: str | None) -> Embedder:
    return MiniLMEmbedder(model_id=_local_model(model))


def _openai(model: str | None, url: str | None, api_key_env: str | None) -> Embedder:
    if not url or not model:
        raise ConfigError("embedding provider openai needs both `url` and `model`.")
    api_key = None
    if api_key_env:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise ConfigError(f"embedding api_key_env names {api_key_env}, but that variable is not set.")
    return OpenAIEmbedder(url, model, api_key=api_key)


def _hash(model: str | None, url: str | None, api_key_env: str | None) -> Embedder:
    from companion.embedding.hashing import HashEmbedder

    return HashEmbedder()


PROVIDERS: dict[str, Callable[[str | None, str | None, str | None], Embedder]] = {
    "minilm": _minilm,
    "openai": _openai,
    "hash": _hash,
}
"""Each embedding provider by its config name, built from the config's `model`, `url` and `api_key_env`."""


def model_id_of(provider: str, model: str | None) -> str:
    """The `model_id` the embedder a config asks for will have, without loading it (to tell an index built with
    another model before anything is embedded)."""
    name = (provider or "minilm").strip().lower()
    if name == "openai":
        return f"openai:{model}"
    if name == "hash":
        from companion.embedding.hashing import HashEmbedder

        return HashEmbedder.model_id
    return _local_model(model)


class _EmbeddingSettings(Protocol):
    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str | None: ...


def chooses_model(settings: _EmbeddingSettings) -> bool:
    """Whether these embedding settings leave the local model to the companion (the local provider, no model named
    or `auto`): it then picks the English or the multilingual one by the vault's languages."""
    name = (settings.provider or "minilm").strip().lower()
    return name == "minilm" and settings.model in (None, "", AUTO)


def reads_every_language(model_id: str) -> bool:
    """Whether the model with this id is a multilingual one (known without loading it)."""
    return model_id in MULTILINGUAL


def embedder_from_config(provider: str, model: str | None, url: str | None, api_key_env: str | None) -> Embedder:
    """The embedder a vault's config asks for: `minilm` (the default, local), `openai` (a server) or `hash` (the
    hashing embedder, for tests and benchmarks).

    `api_key_env` names the environment variable holding the key, so keys stay out of the vault.
    Raises `ConfigError` for an unknown provider or missing settings, `ModelError` when the local
    model cannot be loaded.
    """
    build = PROVIDERS.get((provider or "minilm").strip().lower())
    if build is None:
        raise ConfigError(f"Unknown embedding provider {provider!r}: use minilm or openai.")
    return build(model, url, api_key_env)
