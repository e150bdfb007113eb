"""Recall with the real model, through the real CLI: exact titles and aliases first, translations sharing a
name after the notes in the question's language, "no good match" for what a vault does not hold, and use that does
not push the named note down.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import companion_json
from tests.helpers.files import KEPANO, write

pytestmark = pytest.mark.model


def _recall(vault: Path, data: Path, query: str, *extra: str) -> dict[str, Any]:
    return companion_json("recall", query, "--vault", str(vault), "--data-dir", str(data), "--no-sync", *extra)


def _indexed(tmp_path: Path, notes: dict[str, str], model: str | None = None) -> tuple[Path, Path]:
    """A vault of these notes (path to text), indexed with `model` (else the one chosen by its languages): (the
    vault, its data folder)."""
    vault, data = tmp_path / "vault", tmp_path / "data"
    for path, text in notes.items():
        write(vault, path, text)
    if model is not None:
        write(vault, ".companion/companion.yaml", f"embedding:\n  model: {model}\n")
    companion_json("index", "--vault", str(vault), "--data-dir", str(data))
    return vault, data


@pytest.mark.skipif(not KEPANO.exists(), reason="shared kepano vault not present")
def test_kepano_names_kevin_kelly_first_and_says_when_nothing_matches(tmp_path: Path) -> None:
    vault, data = tmp_path / "kepano", tmp_path / "data"
    shutil.copytree(KEPANO, vault)
    for path in vault.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    companion_json("index", "--vault", str(vault), "--data-dir", str(data))

    named = _recall(vault, data, "Kevin Kelly")
    assert named["results"][0]["path"] == "References/Kevin Kelly.md"
    assert not named["no_good_match"]
    assert "References/Well Made 145 Kevin Kelly.md" in [r["path"] for r in named["results"]]
    # Named, it is scored as the best: its final score (what the list is in order of) agrees with its place.
    assert named["results"][0]["score"] == max(r["score"] for r in named["results"])

    for query in ("quantum chromodynamics", "when is my dentist appointment"):
        nothing = _recall(vault, data, query)
        assert nothing["no_good_match"], query
        assert 1 <= len(nothing["results"]) <= 3 and not any(r["match"] for r in nothing["results"])

    # Use: other questions whose results were put in an agent's context, some of them naming the other note.
    for query in ("Well Made 145", "books about technology and the future", "Out of Control"):
        _recall(vault, data, query, "--record")
    after = _recall(vault, data, "Kevin Kelly")
    assert after["results"][0]["path"] == "References/Kevin Kelly.md"


def test_a_name_in_the_question_s_language_comes_first_and_its_translations_keep_their_place(tmp_path: Path) -> None:
    vault, data = _indexed(
        tmp_path,
        {
            "ro/Recuperarea fișierelor.md": (
                "---\naliases: [File recovery]\n---\nRecuperarea fișierelor păstrează instantanee ale notelor tale, "
                "ca să poți reveni la o versiune mai veche a unei note după ce ai șters ceva din greșeală.\n"
            ),
            "de/Dateiwiederherstellung.md": (
                "---\naliases: [File recovery, Hotkeys backup]\n---\nDie Dateiwiederherstellung speichert "
                "Schnappschüsse deiner Notizen, damit du eine ältere Version wiederherstellen kannst, wenn du etwas "
                "gelöscht hast.\n"
            ),
            "en/File recovery.md": (
                "File recovery keeps snapshots of your notes, so you can go back to an older version of a note after "
                "deleting something by mistake.\n"
            ),
            "fr/Raccourcis clavier.md": (
                "---\naliases: [Hotkeys]\n---\nLes raccourcis clavier vous permettent de lancer une commande sans la "
                "souris ; vous pouvez les modifier dans les paramètres de l'application.\n"
            ),
            "en/Keyboard shortcuts.md": (
                "---\naliases: [Hotkeys]\n---\nKeyboard shortcuts let you run a command without the mouse; you can "
                "change them in the settings of the app.\n"
            ),
            "en/Snapshots explained.md": "How file recovery snapshots are taken every five minutes.\n",
            "clipper/Templates.md": "A clipper's page can follow a layout you pick.\n",
            "en/Templates.md": (
                "Templates insert text into the current note: pick one of your templates from the templates folder, "
                "and the template's date and time variables are filled in when it is inserted.\n"
            ),
        },
    )

    recovery = [r["path"] for r in _recall(vault, data, "File recovery")["results"]]
    assert recovery[0] == "en/File recovery.md"  # the title, in the question's language
    # Its translations share the name but are not put before the English note about it.
    assert recovery[1] == "en/Snapshots explained.md"
    hotkeys = [r["path"] for r in _recall(vault, data, "Hotkeys")["results"]]
    assert hotkeys[0] == "en/Keyboard shortcuts.md"
    # Two notes of one title: by their relevance, not by their paths.
    templates = _recall(vault, data, "Templates")["results"]
    assert [r["path"] for r in templates[:2]] == ["en/Templates.md", "clipper/Templates.md"]
    assert templates[0]["relevance"] > templates[1]["relevance"]
    # Named only in another language: the translation still comes first.
    backup = [r["path"] for r in _recall(vault, data, "Hotkeys backup")["results"]]
    assert backup[0] == "de/Dateiwiederherstellung.md"


def test_keywords_that_name_no_language_are_read_in_the_language_of_the_notes_holding_them(tmp_path: Path) -> None:
    # The English model, named: a vault this mixed would get the multilingual one, to which no language is foreign.
    vault, data = _indexed(
        tmp_path,
        {
            "de/Spracheinstellungen.md": (
                "Obsidian zeigt die Oberfläche in deiner Sprache. Um die Sprache umzustellen, öffne die Einstellungen, "
                "wähle Allgemein und dann Sprache; nach einem Neustart gilt die neue Sprache. Sprache umstellen geht "
                "jederzeit.\n"
            ),
            "en/Language settings.md": (
                "Obsidian shows its interface in your language. To change the language, open Settings, choose General "
                "and then Language; the new language applies after a restart.\n"
            ),
            "en/Themes.md": (
                "A theme changes how Obsidian looks: colours, fonts and spacing. Install one from the community list.\n"
            ),
        },
        model="all-MiniLM-L6-v2",
    )

    # Plain letters and no common word of any language: only the notes holding the words say it is German, so the
    # German answer is in the question's language (not a translation) and the English-only model's vote shrinks.
    german = _recall(vault, data, "Obsidian Sprache umstellen", "--explain")["results"][0]
    assert german["path"] == "de/Spracheinstellungen.md" and german["match"]
    assert "other_language" not in german["explanation"]["fusion"]
    assert {"foreign_dense", "foreign_bm25"} <= set(german["explanation"]["fusion"])
    # An English question of keywords finds English notes holding its words, and stays English.
    english = _recall(vault, data, "Obsidian interface language", "--explain")["results"][0]
    assert english["path"] == "en/Language settings.md"
    assert not {"foreign_dense", "foreign_bm25", "other_language"} & set(english["explanation"]["fusion"])


def test_a_date_that_is_a_note_s_title_names_that_note(tmp_path: Path) -> None:
    vault, data = _indexed(
        tmp_path,
        {
            "Daily/2023-09-12.md": "- Called the plumber about the leak.\n- Bought bread.\n",
            "Notes/Meeting with Sam.md": "---\ndate: 2023-09-12\n---\nMet Sam about the garden project.\n",
            "Notes/Garden.md": "The garden project: beds, a pond and a path.\n",
            "Notes/Parcel.md": (
                "---\ndate: 2024-01-05\n---\nThe parcel sent 2023-09-12 is lost; its label says 2023-09-12, "
                "shelf 09, row 12.\n"
            ),
        },
    )
    day = [r["path"] for r in _recall(vault, data, "2023-09-12")["results"]]
    assert day[0] == "Daily/2023-09-12.md"  # its title is the question, though the date is left out of the words
    # Then that day's notes: a question that is only a date asks for them, whatever other notes' digits say.
    assert day[1] == "Notes/Meeting with Sam.md"
