"""A note whose frontmatter is not valid YAML is indexed and recalled, its properties read line by line; the index
says which note and which line, keeps saying it to `doctor`, and does not count the note as skipped."""

from __future__ import annotations

import json
from pathlib import Path

from companion.recall.scope import Scope
from companion.workspace import Workspace
from tests.helpers.cli import run_companion
from tests.helpers.files import write

PATH = "knowledge/learnings/x.md"
NOTE = """---
title: TuCRMIA
updated: 2026-08-17 iteraciones 33-35 (Storage desbloqueado · `meta` 193 · siguiente: las TRES unidades)
tags: [hub, tucrmia, crm]
---
El sistema de la casa: clientes, facturas y la agenda del taller de cerámica.
"""


def test_the_note_is_indexed_and_recalled_by_its_body_title_and_tags(hash_ws: Workspace) -> None:
    write(hash_ws.root, PATH, NOTE)
    write(hash_ws.root, "other.md", "Una nota sobre el jardín y las plantas.\n")
    report = hash_ws.indexer().sync()
    assert (report.notes_indexed, report.notes_skipped, report.skipped) == (2, 0, [])
    assert [path for path, _ in report.problems] == [PATH]
    assert "line 3" in report.problems[0][1] and "read line by line" in report.problems[0][1]
    assert hash_ws.manifest.skipped() == []
    record = hash_ws.manifest.note(PATH)
    assert record is not None and record.frontmatter["tags"] == ["hub", "tucrmia", "crm"]
    engine = hash_ws.recall()
    assert engine.recall("facturas taller cerámica", k=1).results[0].path == PATH
    # The title property is nowhere in the body or the file name: only the properties read line by line hold it.
    assert engine.recall("TuCRMIA", k=1).results[0].path == PATH
    tagged = engine.recall("casa", k=5, scope=Scope(where=(("tags", "crm"),))).results
    assert [r.path for r in tagged] == [PATH]


def test_doctor_keeps_the_problem_until_the_note_is_fixed(hash_ws: Workspace) -> None:
    write(hash_ws.root, PATH, NOTE)
    hash_ws.indexer().sync()
    again = hash_ws.indexer().sync()
    assert again.problems == [] and again.notes_indexed == 0  # said when read, not on every run
    assert [path for path, _ in hash_ws.manifest.problems()] == [PATH]
    fixed = NOTE.replace("updated: 2026-08-17 iteraciones", 'updated: "2026-08-17 iteraciones').replace(
        "unidades)\n", 'unidades)"\n'
    )
    write(hash_ws.root, PATH, fixed)
    after = hash_ws.indexer().sync()
    assert after.notes_indexed == 1 and after.problems == []
    assert hash_ws.manifest.problems() == []


def test_an_index_that_skipped_such_notes_reads_them_again(hash_ws: Workspace) -> None:
    note = write(hash_ws.root, PATH, NOTE)
    hash_ws.indexer().sync()
    # As an index kept before these notes were read: the note skipped at its current stat, no reading rule recorded.
    info = note.stat()
    with hash_ws.manifest.transaction() as db:
        hash_ws.manifest.delete_note(db, PATH)
        hash_ws.manifest.mark_skipped(db, PATH, info.st_mtime_ns, info.st_size, "malformed YAML frontmatter at line 3")
        db.execute("DELETE FROM meta WHERE key = 'reading_rule'")
    report = hash_ws.indexer().sync()
    assert report.notes_indexed == 1 and hash_ws.manifest.skipped() == []
    assert hash_ws.manifest.note(PATH) is not None


def test_index_and_doctor_name_the_file_and_line(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    write(vault, PATH, NOTE)
    common = ("--vault", str(vault), "--data-dir", str(tmp_path / "data"))
    as_json = run_companion("index", *common, "--json")
    assert as_json.returncode == 0, as_json.stderr
    done = json.loads(as_json.stdout.splitlines()[-1])
    assert done["notes_skipped"] == 0 and done["skipped"] == []
    assert [p["path"] for p in done["problems"]] == [PATH] and "line 3" in done["problems"][0]["reason"]
    write(vault, PATH, NOTE + "\nOne more line.\n")
    text = run_companion("index", *common)
    assert text.returncode == 0, text.stderr
    assert f"problem {PATH}: properties could not be read as YAML (line 3: " in text.stdout
    assert "skipped 0" in text.stdout
    doctor = run_companion("doctor", *common, "--json")
    report = json.loads(doctor.stdout)
    assert [p["path"] for p in report["index"]["problems"]] == [PATH] and report["index"]["skipped"] == []
    assert report["healthy"], report["errors"]
