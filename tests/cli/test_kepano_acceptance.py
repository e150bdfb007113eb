"""The foundation's acceptance on a real vault, with the real model, through the real CLI.

On a temporary copy of kepano-obsidian: the first build indexes every note; a second run embeds nothing;
appending a paragraph to one note re-embeds only that note's changed chunks and recall finds the new text;
renaming it re-embeds nothing and only the new path is returned; deleting it removes it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.cli import companion_json
from tests.helpers.files import KEPANO

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(not KEPANO.exists(), reason="shared kepano vault not present"),
]

NOTE = "Notes/Evergreen notes turn ideas into objects that you can manipulate.md"
NEW_TEXT = "The quokka sanctuary on Rottnest Island opens at dawn and the ferry leaves Fremantle at seven."


def _recall(vault: Path, query: str) -> list[str]:
    return [r["path"] for r in companion_json("recall", query, "--vault", str(vault))["results"]]


def test_kepano_lifecycle_with_the_real_model(tmp_path: Path) -> None:
    vault = tmp_path / "kepano"
    shutil.copytree(KEPANO, vault)
    for path in vault.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)  # the shared copy is read-only
    # Its templates (the Templates/ folder `.obsidian/templates.json` names) stay out of recall, and are reported.
    notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if p.parts[-2] != "Templates")

    first = companion_json("index", "--vault", str(vault))
    assert first["notes_indexed"] == len(notes) == first["notes_total"] == 51
    assert first["left_out"] == {"the templates folder Templates/ (index.templates: false)": 52}
    assert first["notes_skipped"] == 0
    assert first["chunks_embedded"] == first["chunks_total"] >= len(notes)

    second = companion_json("index", "--vault", str(vault))
    assert (second["notes_indexed"], second["chunks_embedded"]) == (0, 0)

    chunks_before = first["chunks_total"]
    with (vault / NOTE).open("a", encoding="utf-8") as fh:
        fh.write(f"\n{NEW_TEXT}\n")
    edited = companion_json("index", "--vault", str(vault))
    assert edited["notes_indexed"] == 1
    assert 1 <= edited["chunks_embedded"] <= 2  # the last paragraph's chunk, not the whole vault or note
    assert edited["chunks_total"] in (chunks_before, chunks_before + 1)
    assert _recall(vault, "quokka sanctuary Rottnest ferry")[0] == NOTE

    renamed = "Notes/Ideas as objects.md"
    (vault / NOTE).rename(vault / renamed)
    moved = companion_json("index", "--vault", str(vault))
    assert (moved["notes_renamed"], moved["chunks_embedded"]) == (1, 0)
    found = _recall(vault, "quokka sanctuary Rottnest ferry")
    assert found[0] == renamed and NOTE not in found

    (vault / renamed).unlink()
    deleted = companion_json("index", "--vault", str(vault))
    assert deleted["notes_deleted"] == 1
    assert renamed not in _recall(vault, "quokka sanctuary Rottnest ferry")
    doctor = companion_json("doctor", "--vault", str(vault))
    assert doctor["healthy"] is True and doctor["store"]["orphans"] == 0
