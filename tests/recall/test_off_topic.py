"""A small vault says "no good match" for a question about something it does not hold, even when a long clipping
holds one of its common words, and still answers a question about what it holds, asked in English, German or
Spanish."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import companion_json
from tests.helpers.files import KEPANO, write

pytestmark = [pytest.mark.model, pytest.mark.skipif(not KEPANO.exists(), reason="shared kepano vault not present")]

GERMAN = """---
tags: [rezepte]
---
# Sauerteigbrot backen

Der Sauerteig muss vor dem Backen zwölf Stunden bei Zimmertemperatur gehen. Danach wird der Teig geformt und im
vorgeheizten Gusseisentopf bei 250 Grad gebacken, die ersten zwanzig Minuten mit Deckel.
"""

SPANISH = """---
tags: [viajes]
---
# Ruta por los Picos de Europa

La ruta de los lagos de Covadonga empieza en el aparcamiento del lago Enol. Conviene llevar botas de montaña y
agua: son unas cuatro horas de caminata con subidas fuertes hasta el mirador de Ordiales.
"""


def _recall(vault: Path, data: Path, query: str) -> dict[str, Any]:
    return companion_json("recall", query, "--vault", str(vault), "--data-dir", str(data), "--no-sync")


def test_an_off_topic_question_gets_no_match_and_a_german_or_spanish_one_its_note(tmp_path: Path) -> None:
    vault, data = tmp_path / "kepano", tmp_path / "data"
    shutil.copytree(KEPANO, vault)
    for path in vault.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    write(vault, "Notes/Sauerteigbrot.md", GERMAN)
    write(vault, "Notes/Picos de Europa.md", SPANISH)
    companion_json("index", "--vault", str(vault), "--data-dir", str(data))

    # "best" is held by a long clipping: against fifty notes it looked like a match. "return", "bought" and
    # "online" are held by notes too, but no chunk of the vault comes near the question in meaning.
    for query in (
        "Where can I get the best pizza in Naples?",
        "How often should I change the oil in my car?",
        "Can I return shoes I bought online without a receipt?",
    ):
        assert _recall(vault, data, query)["no_good_match"], query
    japan = _recall(vault, data, "Which places did I visit on the trip to Japan?")
    assert not japan["no_good_match"] and japan["results"][0]["path"] == "Notes/2023 Japan Trip.md"

    for query, note in (
        ("Wie lange muss der Sauerteig vor dem Backen gehen?", "Notes/Sauerteigbrot.md"),
        ("¿Dónde empieza la ruta de los lagos de Covadonga?", "Notes/Picos de Europa.md"),
    ):
        found = _recall(vault, data, query)
        assert not found["no_good_match"], query
        assert found["results"][0]["path"] == note
