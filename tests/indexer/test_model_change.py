"""A change of embedding model: the vectors of the model before are dropped and every note embedded again, the
words index kept and searched meanwhile; an index made with one model is never searched with another."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.embedding.hashing import HashEmbedder
from companion.errors import ConfigError, ModelError
from companion.recall.fusion import FEATURES
from companion.workspace import Workspace
from tests.helpers.cli import companion_json
from tests.helpers.embedders import QuestionsAsked
from tests.helpers.files import write
from tests.helpers.workspaces import workspace

NOTES = {
    "Boiler.md": "The boiler pressure dropped to 0.8 bar; top it up to 1.5 bar from the filling loop.\n",
    "Fence.md": "The garden fence needs two new posts before the winter storms.\n",
    "Lisbon.md": "Lisbon in March: trams, custard tarts and the castle at sunset.\n",
}


class _Other(HashEmbedder):
    """Another model of the same width: its vectors must never meet the first one's."""

    def __init__(self) -> None:
        super().__init__()
        self.model_id = "hash-384-other"


@pytest.fixture
def built(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for name, text in NOTES.items():
        write(root, name, text)
    ws = workspace(root)
    ws.indexer().sync()
    assert ws.manifest.get_meta("vectors_model") == "hash-384"
    ws.close()
    return root


def test_a_new_model_embeds_every_note_again_and_keeps_the_words(built: Path) -> None:
    ws = workspace(built, HashEmbedder(dim=256))
    indexer = ws.indexer()
    assert ws.model_change == ("hash-384", "hash-256")
    # Nothing embedded yet: the notes are still found by their words, and the answer says why.
    searcher = ws.searcher()
    hits = searcher.search("boiler pressure", k=3)
    assert hits and hits[0].path == "Boiler.md"
    assert searcher.dense_unavailable is not None and "model changed" in searcher.dense_unavailable
    report = indexer.sync()
    assert report.chunks_embedded == len(ws.manifest.chunk_ids()) > 0
    assert ws.store().ids() == ws.manifest.chunk_ids()
    assert ws.manifest.reembedding() is None and ws.manifest.get_meta("vectors_model") == "hash-256"
    hits = searcher.search("boiler pressure", k=3)
    assert searcher.dense_unavailable is None and hits[0].path == "Boiler.md" and hits[0].dense > 0
    ws.close()
    again = workspace(built, HashEmbedder(dim=256))
    again.indexer()
    assert again.model_change is None
    again.close()


def test_words_only_until_every_note_is_read_again(built: Path) -> None:
    ws = workspace(built, _Other())
    indexer = ws.indexer()
    indexer.sync(embed_for_s=0.0)  # read, nothing embedded: the usual words-first state, no more a model change
    searcher = ws.searcher()
    searcher.search("garden fence posts", k=3)
    assert ws.manifest.reembedding() is None
    assert searcher.dense_unavailable is not None and "model changed" not in searcher.dense_unavailable
    ws.close()


def test_a_reader_of_another_model_answers_from_words(built: Path) -> None:
    ws = workspace(built, HashEmbedder(dim=256))
    searcher = ws.searcher()  # a reader: it never writes the index, so nothing is embedded again
    hits = searcher.search("garden fence posts", k=3)
    assert hits and hits[0].path == "Fence.md"
    assert searcher.dense_unavailable is not None and "hash-384" in searcher.dense_unavailable
    ws.close()


def test_title_vectors_of_another_model_are_never_compared(built: Path) -> None:
    ws = workspace(built)
    column = FEATURES.index("title_cosine")

    def title_cosines() -> list[float]:
        searcher = ws.searcher()
        searcher.capture = []
        searcher.search("Lisbon", k=3)
        return [f[column] for _, rows in searcher.capture for f in rows.values()]

    assert any(title_cosines())
    ws.manifest.set_meta("title_model", "another-model")  # as if the titles had been embedded by another model
    cosines = title_cosines()
    assert cosines and not any(cosines)
    ws.close()


@pytest.mark.model
def test_index_says_the_model_changed(built: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = companion_json("index", "--vault", str(built), "--data-dir", str(data))
    assert first["model_change"] is None
    (built / ".companion").mkdir(exist_ok=True)
    (built / ".companion" / "companion.yaml").write_text("embedding:\n  provider: hash\n", encoding="utf-8")
    changed = companion_json("index", "--vault", str(built), "--data-dir", str(data))
    assert changed["model_change"] == {"from": "all-MiniLM-L6-v2", "to": "hash-384"}
    assert changed["chunks_embedded"] == changed["chunks_total"] > 0


def test_questions_asked_in_a_batch_are_embedded_as_questions(built: Path) -> None:
    embedder = QuestionsAsked()
    ws = workspace(built, embedder)
    searcher = ws.searcher()
    searcher.embed_queries(["garden fence posts", "boiler pressure"])
    assert embedder.questions == ["garden fence posts", "boiler pressure"]
    ws.close()


def test_a_misspelt_model_drops_nothing(built: Path) -> None:
    ws = workspace(built)
    before = ws.store().ids()
    ws.close()
    (built / ".companion").mkdir(exist_ok=True)
    (built / ".companion" / "companion.yaml").write_text("embedding:\n  model: all-MiniLM-L6-v2-typo\n", "utf-8")
    typo = Workspace.open(built)
    with pytest.raises(ConfigError, match="all-MiniLM-L6-v2-typo"):
        typo.indexer()
    typo.close()
    again = workspace(built)
    assert again.store().ids() == before and again.manifest.get_meta("vectors_model") == "hash-384"
    again.close()


def test_a_process_started_before_the_config_changed_does_not_undo_the_change(built: Path) -> None:
    (built / ".companion").mkdir(exist_ok=True)
    config = built / ".companion" / "companion.yaml"
    config.write_text("embedding:\n  provider: hash\n", encoding="utf-8")
    old = Workspace.open(built)  # started while the config named the hashing embedder
    config.unlink()  # the config now names the default model, and another process embedded with it
    old.manifest.set_meta("vectors_model", "all-MiniLM-L6-v2")
    chunks = old.manifest.chunk_ids()
    with pytest.raises(ModelError, match="restart it"):
        old.indexer()
    assert old.manifest.chunk_ids() == chunks and old.manifest.reembedding() is None
    old.close()
