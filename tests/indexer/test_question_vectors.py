"""A question's vector is embedded once, whoever asks for it, and the model is not opened for words alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from companion.embedding.hashing import HashEmbedder
from companion.errors import ModelError
from indexer.question_vectors import QuestionVectors
from indexer.search import Searcher
from tests.helpers.embedders import QuestionsAsked
from tests.helpers.files import write
from tests.helpers.workspaces import workspace


def test_a_question_is_embedded_once() -> None:
    model = QuestionsAsked()
    questions = QuestionVectors(lambda: model)
    vector = questions.vector("boiler pressure")
    assert questions.vector("boiler pressure") is vector
    questions.embed_many(["boiler pressure", "garden fence", "garden fence", " "])
    assert model.questions == ["boiler pressure", "garden fence"]
    assert np.allclose(vector, HashEmbedder().embed_queries(["boiler pressure"])[0])


def test_a_batch_larger_than_the_cache_keeps_every_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("indexer.question_vectors._KEPT", 3)
    model = QuestionsAsked()
    questions = QuestionVectors(lambda: model)
    questions.vector("an earlier question")
    batch = [f"question {i}" for i in range(5)]
    questions.embed_many(batch)
    for query in batch:
        questions.vector(query)
    assert model.questions == ["an earlier question", *batch]  # none embedded a second time


def test_a_model_that_cannot_open_is_an_error_where_the_vector_is_asked() -> None:
    def broken() -> HashEmbedder:
        raise ModelError("The embedding model folder lacks model.onnx.")

    questions = QuestionVectors(broken)
    with pytest.raises(ModelError, match=r"lacks model\.onnx"):
        questions.vector("boiler pressure")


def test_a_search_embeds_its_question_once(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, "Boiler.md", "The boiler pressure dropped to 0.8 bar; top it up from the filling loop.\n")
    write(vault, "Fence.md", "The garden fence needs two new posts before the winter storms.\n")
    model = QuestionsAsked()
    ws = workspace(vault, model)
    ws.indexer().sync()
    hits = ws.searcher().search("boiler pressure", k=2)
    assert hits[0].path == "Boiler.md"
    assert hits[0].dense > 0.3
    assert model.questions.count("boiler pressure") == 1
    ws.close()


def test_a_search_of_an_index_without_vectors_does_not_open_the_model(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, "Boiler.md", "The boiler pressure dropped to 0.8 bar; top it up from the filling loop.\n")
    model = QuestionsAsked()
    ws = workspace(vault, model)
    ws.indexer().sync(embed_for_s=0)
    opened: list[int] = []

    def opening() -> QuestionsAsked:
        opened.append(1)
        return model

    searcher = Searcher(ws.manifest, opening, ws.store)
    hits = searcher.search("boiler pressure", k=2)
    assert [h.path for h in hits] == ["Boiler.md"]
    assert opened == [] and model.questions == []  # the best word match waits for its vectors
    ws.close()
