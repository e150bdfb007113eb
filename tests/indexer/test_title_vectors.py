"""Title vectors: each note's title embedded on its own, kept in the manifest, compared with the question."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from companion.embedding.hashing import HashEmbedder
from companion.recall.fusion import FEATURES, NEAR_COSINE
from companion.recall.language import language_of
from companion.workspace import Workspace
from indexer.derived import TITLE_VECTOR_DTYPE
from indexer.manifest import Manifest
from indexer.openings import LANGUAGE_RULE
from indexer.records import NoteRecord
from tests.helpers.embedders import UnderTheEnglishModelsName
from tests.helpers.files import write
from tests.helpers.workspaces import workspace

_TITLE = FEATURES.index("title_cosine")


def _stored(ws: Workspace) -> dict[str, np.ndarray]:
    paths = [r.path for r in ws.manifest.notes()]
    return {p: np.frombuffer(b, dtype=TITLE_VECTOR_DTYPE) for p, b in ws.manifest.derived.title_vectors(paths).items()}


def _title_features(ws: Workspace, question: str) -> dict[str, float]:
    """Each candidate's title feature when `question` is asked."""
    searcher = ws.searcher()
    searcher.capture = []
    ws.recall().recall(question, k=5)
    return {path: vector[_TITLE] for path, vector in searcher.capture[0][1].items()}


def test_a_sync_embeds_every_title_once(hash_ws: Workspace) -> None:
    write(hash_ws.root, "Multiple cursors.md", "Hold Alt and click to add another caret.\n")
    write(hash_ws.root, "Plugins/Status bar.md", "The strip along the bottom of the window shows counts.\n")
    report = hash_ws.indexer().sync()
    assert report.titles_embedded == 2
    stored = _stored(hash_ws)
    expected = hash_ws.embedder().embed(["Multiple cursors"])[0]
    assert float(stored["Multiple cursors.md"].astype(np.float32) @ expected) == pytest.approx(1.0, abs=2e-3)
    assert hash_ws.manifest.derived.untitled_count() == 0
    assert hash_ws.indexer().sync().titles_embedded == 0


def test_an_edit_keeps_the_title_vector_and_a_rename_makes_a_new_one(hash_ws: Workspace) -> None:
    note = write(hash_ws.root, "Kitchen.md", "The worktop is oak.\n")
    hash_ws.indexer().sync()
    before = _stored(hash_ws)["Kitchen.md"]
    note.write_text("The worktop is oak, oiled twice a year.\n", encoding="utf-8")
    assert hash_ws.indexer().sync().titles_embedded == 0
    assert np.array_equal(_stored(hash_ws)["Kitchen.md"], before)

    note.rename(hash_ws.root / "Worktop.md")
    assert hash_ws.indexer().sync().titles_embedded == 1
    assert set(_stored(hash_ws)) == {"Worktop.md"}


def test_a_note_written_anew_under_another_title_loses_its_old_vector(tmp_path: Path) -> None:
    manifest = Manifest(tmp_path / "manifest.sqlite")
    record = NoteRecord("a.md", 1, 1, "h", "m", "note", None, "Old title", None)
    with manifest.transaction() as db:
        manifest.put_note(db, record, [], "body")
        manifest.derived.set_title_vectors(db, [("a.md", np.ones(4, dtype=TITLE_VECTOR_DTYPE).tobytes())])
        manifest.put_note(db, record, [], "body again")
    assert set(manifest.derived.title_vectors(["a.md"])) == {"a.md"}  # same title: kept
    with manifest.transaction() as db:
        manifest.put_note(db, NoteRecord("a.md", 2, 1, "h2", "m", "note", None, "New title", None), [], "body")
    assert manifest.derived.title_vectors(["a.md"]) == {}
    assert manifest.derived.untitled(10) == [("a.md", "New title")]
    manifest.close()


def test_vectors_of_another_model_are_all_made_again(hash_ws: Workspace) -> None:
    write(hash_ws.root, "a.md", "alpha beta\n")
    write(hash_ws.root, "b.md", "gamma delta\n")
    hash_ws.indexer().sync()
    hash_ws.manifest.set_meta("title_model", "some-other-model")
    write(hash_ws.root, "c.md", "epsilon\n")
    assert hash_ws.indexer().sync().titles_embedded == 3  # not only the new note's
    assert hash_ws.manifest.get_meta("title_model") == hash_ws.embedder().model_id


def test_an_older_index_gains_the_column_without_reading_every_note_again(tmp_path: Path) -> None:
    path = tmp_path / "manifest.sqlite"
    manifest = Manifest(path)
    with manifest.transaction() as db:
        manifest.put_note(db, NoteRecord("a.md", 5, 1, "hash", "m", "note", None, "A", None), [], "body")
    manifest.close()
    db = sqlite3.connect(path)
    db.execute("DROP INDEX notes_untitled")
    db.execute("ALTER TABLE notes DROP COLUMN title_vec")
    db.execute("ALTER TABLE notes DROP COLUMN language")
    db.commit()
    db.close()
    reopened = Manifest(path)
    record = reopened.note("a.md")
    assert record is not None and (record.mtime_ns, record.content_hash) == (5, "hash")  # not queued for a re-read
    assert reopened.derived.untitled(10) == [("a.md", "A")]
    assert reopened.derived.languages(["a.md"]) == {}  # guessed by recall until the note is written again
    reopened.close()


def test_search_compares_the_question_with_each_title(hash_ws: Workspace) -> None:
    write(hash_ws.root, "Lentil dal.md", "Soak the pulses overnight, then simmer with cumin.\n")
    write(hash_ws.root, "Bike tyres.md", "Soak nothing; pump the tyres to six bar.\n")
    hash_ws.indexer().sync()
    features = _title_features(hash_ws, "lentil dal recipe")
    assert features["Lentil dal.md"] > features["Bike tyres.md"]
    embedder = hash_ws.embedder()
    assert isinstance(embedder, HashEmbedder)
    question, title = embedder.embed(["lentil dal recipe", "Lentil dal"])
    assert features["Lentil dal.md"] == pytest.approx(float(question @ title), abs=2e-3)


def test_a_title_without_a_vector_yet_is_neither_favoured_nor_held_back(hash_ws: Workspace) -> None:
    write(hash_ws.root, "Lentil dal.md", "Soak the pulses overnight, then simmer with cumin.\n")
    write(hash_ws.root, "Bike tyres.md", "Soak nothing; pump the tyres to six bar.\n")
    write(hash_ws.root, "Soak times.md", "Soak beans for twelve hours.\n")
    hash_ws.indexer().sync()
    with hash_ws.manifest.transaction() as db:
        db.execute("UPDATE notes SET title_vec = NULL WHERE path = 'Soak times.md'")
    features = _title_features(hash_ws, "soak")
    others = [features[p] for p in ("Lentil dal.md", "Bike tyres.md")]
    assert features["Soak times.md"] == pytest.approx(sum(others) / 2, abs=1e-6)


def test_a_conversations_title_does_not_count(hash_ws: Workspace) -> None:
    write(
        hash_ws.root,
        "Conversations/Adopting a cat.md",
        "---\ntype: conversation\ndate: 2026-03-07\n---\n**alice:** The cat hid under the sofa all day.\n",
    )
    write(hash_ws.root, "Cat care.md", "A cat needs a quiet corner on moving day.\n")
    hash_ws.indexer().sync()
    features = _title_features(hash_ws, "adopting a cat")
    assert features["Conversations/Adopting a cat.md"] == 0.0  # a session's name, not what was said in it
    assert features["Cat care.md"] > 0.0


def test_a_notes_language_is_kept_as_recall_would_guess_it(hash_ws: Workspace) -> None:
    write(hash_ws.root, "Einstellungen.md", "Hier kannst du die Sprache der Oberfläche ändern und die Schrift.\n")
    write(hash_ws.root, "設定.md", "ここでは表示言語やフォントを変更できます。\n")
    write(hash_ws.root, "Settings.md", "Here you can change the language of the interface and the font.\n")
    hash_ws.indexer().sync()
    paths = ["Einstellungen.md", "設定.md", "Settings.md"]
    kept = hash_ws.manifest.derived.languages(paths)
    assert kept == {p: language_of(t) for p, t in hash_ws.manifest.derived.openings(paths).items()}
    assert kept == {"Einstellungen.md": "de", "設定.md": "ja", "Settings.md": "en"}


def test_an_index_guessed_by_an_older_rule_guesses_its_notes_languages_again(tmp_path: Path) -> None:
    danish = (
        "Canvas er et kerneplugin, der giver dig mulighed for at organisere noter visuelt på et uendeligt lærred. Du "
        "kan tilføje noter, vedhæftede filer og websider og forbinde dem med linjer. Når du har oprettet et lærred, "
        "kan du gruppere kort, ændre deres farver og zoome ind og ud for at få overblik over dine idéer."
    )
    path = tmp_path / "manifest.sqlite"
    manifest = Manifest(path)
    with manifest.transaction() as db:
        manifest.put_note(db, NoteRecord("da.md", 5, 1, "h1", "m", "note", None, "Canvas", None), [], danish)
        manifest.put_note(db, NoteRecord("en.md", 5, 1, "h2", "m", "note", None, "Canvas", None), [], "A board.")
        db.execute("UPDATE notes SET language = 'fr' WHERE path = 'da.md'")  # what the older rule guessed
        db.execute("DELETE FROM meta WHERE key = 'language_rule'")
    manifest.close()
    reopened = Manifest(path)
    # Opening writes nothing (a reader, a read-only app); the writer guesses them again at its next sync.
    assert reopened.derived.languages(["da.md"]) == {"da.md": "fr"} and reopened.get_meta("language_rule") is None
    assert reopened.derived.guess_languages_again() == 2
    assert reopened.derived.languages(["da.md", "en.md"]) == {"da.md": "latin", "en.md": "en"}
    assert reopened.get_meta("language_rule") == LANGUAGE_RULE
    assert reopened.derived.guess_languages_again() == 0  # once
    reopened.close()


def test_a_sync_guesses_the_languages_again_after_the_rule_changed(hash_ws: Workspace) -> None:
    write(hash_ws.root, "Settings.md", "Here you can change the language of the interface and the font.\n")
    hash_ws.indexer().sync()
    with hash_ws.manifest.transaction() as db:
        db.execute("UPDATE notes SET language = 'pt'")
        db.execute("DELETE FROM meta WHERE key = 'language_rule'")
    hash_ws.indexer().sync()
    assert hash_ws.manifest.derived.languages(["Settings.md"]) == {"Settings.md": "en"}


def test_the_words_no_note_holds_are_a_share_of_the_question(hash_ws: Workspace) -> None:
    write(hash_ws.root, "Boiler.md", "The boiler pressure fell to 0.6 bar; top it up at the filling loop.\n")
    write(hash_ws.root, "Bike.md", "Pump the tyres to six bar before the ride.\n")
    hash_ws.indexer().sync()
    searcher = hash_ws.searcher()
    unknown = FEATURES.index("unknown_words")

    def share(question: str) -> set[float]:
        searcher.capture = []
        hash_ws.recall().recall(question, k=5)
        return {round(vector[unknown], 6) for vector in searcher.capture[0][1].values()}

    assert share("boiler pressure bar") == {0.0}
    (part,) = share("boiler pressure pizza naples")  # one value for every candidate
    # Two of four words unknown, weighted by idf: a word no note holds weighs more than one every other note holds.
    assert 0.5 < part < 1.0


def test_how_far_the_nearest_chunk_lies_counts_only_where_the_model_reads_the_question(tmp_path: Path) -> None:
    far, cosine, missing = (FEATURES.index(n) for n in ("far_nearest", "cosine", "dense_missing"))

    def opened(embedder: HashEmbedder, name: str) -> Workspace:
        (tmp_path / name / "vault" / ".obsidian").mkdir(parents=True)
        ws = workspace(tmp_path / name / "vault", embedder, data_dir=tmp_path / name / "data")
        write(ws.root, "Boiler.md", "The boiler pressure fell to 0.6 bar; top it up at the filling loop.\n")
        write(ws.root, "Bike.md", "Pump the tyres to six bar before the ride.\n")
        write(ws.root, "Heizung.md", "Der Heizungsdruck ist auf 0,6 bar gefallen; am Füllhahn nachfüllen.\n")
        ws.indexer().sync()
        return ws

    def asked(ws: Workspace, question: str) -> list[tuple[float, ...]]:
        searcher = ws.searcher()
        searcher.capture = []
        ws.recall().recall(question, k=5)
        return list(searcher.capture[0][1].values())

    english = opened(UnderTheEnglishModelsName(), "english")
    vectors = asked(english, "boiler pressure loop")
    nearest = max(v[cosine] for v in vectors if not v[missing])
    # The same for every candidate: it never reorders a question's notes, only says whether any is a match.
    assert {round(v[far], 6) for v in vectors} == {round(max(0.0, NEAR_COSINE - nearest), 6)} != {0.0}
    # The English model reads English only: a German question's cosines say nothing of how near the vault comes.
    assert {v[far] for v in asked(english, "Warum ist der Druck der Heizung gefallen?")} == {0.0}
    # A question naming a date asks what that day holds.
    assert {v[far] for v in asked(english, "what did I write about the boiler on 3 March 2026?")} == {0.0}
    english.close()
    # Cosines of a model the shipped weights were not fitted on (here one with no sense of meaning) count for nothing.
    other = opened(HashEmbedder(), "other")
    assert {v[far] for v in asked(other, "boiler pressure loop")} == {0.0}
    other.close()
