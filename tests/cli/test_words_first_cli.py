"""A vault searchable by its words before its meaning is built, as a user meets it from the command line: a recall on a
never-indexed vault says what it does, an index whose vectors are still being made says so in every answer, and
`companion index` finishes it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_companion
from tests.helpers.files import write
from tests.helpers.workspaces import workspace


def _vault(root: Path) -> Path:
    vault = root / "vault"
    write(vault, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    write(vault, "Birds/Kiwi.md", "---\ndate: 2025-02-01\n---\nThe kiwi is a flightless bird of New Zealand.\n")
    write(vault, "Birds/Kea.md", "---\ndate: 2025-03-01\n---\nThe kea is a clever alpine parrot.\n")
    write(vault, "Fish.md", "Salmon swim upstream to spawn.\n")
    return vault


def test_a_recall_on_a_never_indexed_vault_says_so_and_indexes(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    data = str(tmp_path / "data")
    out = run_companion("recall", "flightless kiwi", "--json", "--vault", str(vault), "--data-dir", data)
    assert out.returncode == 0, out.stderr
    assert "has never been indexed: indexing its 3 notes before answering" in out.stderr
    answer = json.loads(out.stdout)
    assert answer["results"][0]["path"] == "Birds/Kiwi.md"
    assert answer["dense_built"] == 1.0 and answer["notice"] is None  # three notes embed well within the budget
    again = run_companion("recall", "kea", "--json", "--vault", str(vault), "--data-dir", data)
    assert "never been indexed" not in again.stderr


def test_an_index_still_embedding_answers_from_words_and_says_so(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    data = tmp_path / "data"
    ws = workspace(vault, data_dir=data)
    ws.indexer().sync(embed_for_s=0.0)  # what a build shows between its words and its meaning
    ws.close()
    where = ["--vault", str(vault), "--data-dir", str(data)]

    out = run_companion("recall", "flightless kiwi", "--no-sync", "--json", *where)
    answer = json.loads(out.stdout)
    assert answer["results"][0]["path"] == "Birds/Kiwi.md"
    assert answer["dense_built"] == 0.0
    assert "0% built: results from words only" in answer["notice"]
    human = run_companion("recall", "flightless kiwi", "--no-sync", *where)
    assert "note    the meaning side of the index is 0% built" in human.stdout

    doctor = json.loads(run_companion("doctor", "--json", *where).stdout)
    assert doctor["index"]["to_embed"] == 3 and doctor["healthy"], doctor["errors"]

    built = run_companion("index", *where)
    assert built.returncode == 0, built.stderr
    assert "chunks  3 embedded" in built.stdout and "still to embed" not in built.stdout
    answer = json.loads(run_companion("recall", "flightless kiwi", "--no-sync", "--json", *where).stdout)
    assert answer["dense_built"] == 1.0 and answer["notice"] is None
    assert json.loads(run_companion("doctor", "--json", *where).stdout)["index"]["to_embed"] == 0
