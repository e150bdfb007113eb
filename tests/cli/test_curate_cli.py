"""`companion curate`, `audit` and `undo` on real temporary vaults: what they write, refuse, record and restore."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from companion.cli import main
from companion.locations import vault_data_dir
from tests.helpers.files import file_tree, split_frontmatter, write

SKI = "---\ntags: [travel]\ndate: 2026-02-01\n---\nChamonix in February, budget 1800 euros.\n"
GARDEN = "# Garden\n\nTomatoes want sun.\n"
LINKS = "Plans: [[garden]] and [[ski]].\n"


class _Terminal(io.StringIO):
    """Standard input as a terminal where the user types the given answer."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "vault"
    write(root, "Notes/ski.md", SKI)
    write(root, "Notes/garden.md", GARDEN)
    write(root, "Links.md", LINKS)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # no terminal unless a test gives one
    return root


def _run(capsys: pytest.CaptureFixture[str], vault: Path, *args: str) -> tuple[int, str, str]:
    code = main([*args, "--vault", str(vault)])
    out = capsys.readouterr()
    return code, out.out, out.err


def _json(capsys: pytest.CaptureFixture[str], vault: Path, *args: str) -> Any:
    code, out, err = _run(capsys, vault, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def _audit_folder(vault: Path) -> Path:
    return vault_data_dir(vault) / "audit"


def test_pin_then_undo_restores_the_bytes_exactly(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = file_tree(vault)
    code, out, err = _run(capsys, vault, "curate", "pin", "Notes/ski")
    assert code == 0, err
    assert out.startswith("Pin Notes/ski.md\n") and "write  Notes/ski.md" in out
    assert split_frontmatter((vault / "Notes/ski.md").read_text(encoding="utf-8"))[0]["pinned"] is True
    (entry,) = _json(capsys, vault, "audit")["entries"]
    assert entry["source"] == "cli" and entry["action"] == "pin"
    assert f"undo with: companion undo {entry['id']}" in out

    code, out, err = _run(capsys, vault, "undo")
    assert code == 0, err
    assert "restored Notes/ski.md" in out and entry["id"] in out
    assert file_tree(vault) == before


def test_tag_and_type_edit_the_frontmatter(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, vault, "curate", "tag", "Notes/ski.md", "travel", "#winter", "trips/alps")[0] == 0
    assert _run(capsys, vault, "curate", "type", "Notes/ski", "fact")[0] == 0
    data, body = split_frontmatter((vault / "Notes/ski.md").read_text(encoding="utf-8"))
    assert data["tags"] == ["travel", "winter", "trips/alps"] and data["type"] == "fact"
    assert body == "Chamonix in February, budget 1800 euros.\n"

    result = _json(capsys, vault, "curate", "tag", "Notes/ski")  # no tags: remove them
    assert result["applied"] and result["summary"] == "Remove the tags of Notes/ski.md"
    assert "tags" not in split_frontmatter((vault / "Notes/ski.md").read_text(encoding="utf-8"))[0]
    again = _json(capsys, vault, "curate", "type", "Notes/ski", "fact")
    assert again["writes"] == [] and not again["applied"] and again["entry"] is None


def test_delete_without_yes_and_without_a_terminal_is_refused(vault: Path) -> None:
    # A real process with stdin that is not a terminal, as in a script or an agent's tool call.
    before = file_tree(vault)
    out = subprocess.run(
        [sys.executable, "-m", "companion", "curate", "delete", "Notes/garden", "--vault", str(vault)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        env=dict(os.environ),
    )
    assert out.returncode == 2
    assert "--yes" in out.stderr and "Notes/garden.md" in out.stderr and "Traceback" not in out.stderr
    assert "remove Notes/garden.md" in out.stdout  # the plan is still shown
    assert file_tree(vault) == before
    assert not _audit_folder(vault).exists()


def test_delete_with_yes_moves_the_note_to_the_trash(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _json(capsys, vault, "curate", "delete", "Notes/garden", "--yes")
    assert result["destructive"] and result["applied"]
    assert result["writes"] == [
        {"path": ".trash/garden.md", "change": "create"},
        {"path": "Notes/garden.md", "change": "remove"},
    ]
    assert result["undo"] == f"companion undo {result['entry']['id']} --vault {vault.resolve()}"
    assert not (vault / "Notes/garden.md").exists()
    assert (vault / ".trash/garden.md").read_text(encoding="utf-8") == GARDEN
    assert (_audit_folder(vault) / "log.jsonl").is_file()  # where the tests that write nothing look


def test_a_terminal_is_asked_before_a_destructive_curation(
    vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = file_tree(vault)
    monkeypatch.setattr(sys, "stdin", _Terminal("n\n"))
    code, _, err = _run(capsys, vault, "curate", "archive", "Notes/garden")
    assert code == 1 and "Apply? [y/N]" in err and "nothing was written" in err
    assert file_tree(vault) == before

    monkeypatch.setattr(sys, "stdin", _Terminal("y\n"))
    code, out, err = _run(capsys, vault, "curate", "archive", "Notes/garden")
    assert code == 0, err
    assert "undo with: companion undo " in out
    assert (vault / "archive/Notes/garden.md").read_text(encoding="utf-8") == GARDEN


def test_merge_into_rewrites_a_backlink(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, vault, "curate", "merge", "Notes/garden", "--into", "Notes/ski", "--yes")
    assert code == 0, err
    assert "write  Links.md" in out
    assert (vault / "Links.md").read_text(encoding="utf-8") == "Plans: [[ski]] and [[ski]].\n"
    ski = (vault / "Notes/ski.md").read_text(encoding="utf-8")
    assert "## Merged from garden" in ski and "Tomatoes want sun." in ski
    assert not (vault / "Notes/garden.md").exists() and (vault / ".trash/garden.md").exists()


def test_dry_run_writes_nothing(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = file_tree(vault)
    code, out, _ = _run(capsys, vault, "curate", "merge", "Notes/garden", "--into", "Notes/ski", "--dry-run")
    assert code == 0 and "dry run: nothing was written" in out and "remove Notes/garden.md" in out
    result = _json(capsys, vault, "curate", "pin", "Notes/ski", "--dry-run", "--yes")
    assert (
        result["dry_run"]
        and not result["applied"]
        and result["writes"] == [{"path": "Notes/ski.md", "change": "write"}]
    )
    assert file_tree(vault) == before
    assert not _audit_folder(vault).exists()


def test_audit_lists_newest_first_with_undone_status(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, vault, "curate", "pin", "Notes/ski")[0] == 0
    assert _run(capsys, vault, "curate", "tag", "Notes/garden", "plants")[0] == 0
    undo = _json(capsys, vault, "undo")
    entries = _json(capsys, vault, "audit")["entries"]
    assert [e["action"] for e in entries] == ["undo", "tag", "pin"]
    assert undo["entry"]["id"] == entries[0]["id"] and undo["undid"] == entries[1]["id"]
    assert entries[0]["undoes"] == entries[1]["id"]
    assert (entries[1]["undone"], entries[1]["undone_by"]) == (True, entries[0]["id"])
    assert (entries[2]["undone"], entries[2]["undone_by"]) == (False, None)
    assert [e["id"] for e in _json(capsys, vault, "audit", "--limit", "1")["entries"]] == [entries[0]["id"]]

    code, out, _ = _run(capsys, vault, "audit")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(entries[0]["id"]) and f"[undone by {entries[0]['id']}]" in lines[1]


def test_undo_of_an_entry_already_undone_is_refused(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, vault, "curate", "pin", "Notes/ski")[0] == 0
    (entry,) = _json(capsys, vault, "audit")["entries"]
    assert _run(capsys, vault, "undo", entry["id"])[0] == 0
    before = file_tree(vault)
    code, out, err = _run(capsys, vault, "undo", entry["id"])
    assert code == 1 and out == ""
    assert "already undone" in err and entry["id"] in err and "Traceback" not in err
    assert file_tree(vault) == before
    code, _, err = _run(capsys, vault, "undo")
    assert code == 1 and "nothing to undo" in err
    code, _, err = _run(capsys, vault, "undo", "20260101T000000000000Z-00000000")
    assert code == 2 and "no entry '20260101T000000000000Z-00000000'" in err and "companion audit" in err


def test_a_missing_note_is_named(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, vault, "curate", "pin", "Notes/nope")
    assert code == 2 and out == ""  # a note that does not exist is a bad argument (the documented exit codes)
    assert "Notes/nope.md: no such note" in err and "Traceback" not in err
    code, _, err = _run(capsys, vault, "curate", "delete", "Trips/ski", "--yes")  # right name, wrong folder
    assert code == 2 and "did you mean 'Notes/ski.md'" in err
    code, _, err = _run(capsys, vault, "curate", "merge", "Notes/garden", "--into", "Notes/Kept")
    assert code == 2 and "Notes/Kept.md" in err
    assert not _audit_folder(vault).exists()


def test_the_configured_source_is_recorded(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(vault, ".companion/companion.yaml", "curation:\n  source: nightly-agent\n")
    assert _run(capsys, vault, "curate", "unpin", str(vault / "Notes/ski.md"))[0] == 0  # already unpinned
    assert _run(capsys, vault, "curate", "pin", str(vault / "Notes/ski.md"))[0] == 0  # an absolute path works
    (entry,) = _json(capsys, vault, "audit")["entries"]
    assert (entry["source"], entry["summary"]) == ("nightly-agent", "Pin Notes/ski.md")


@pytest.mark.parametrize("note", ["../x", "Notes/../../x", "/etc/hostname", " "])
def test_a_path_that_names_no_note_in_the_vault_is_a_bad_argument(
    vault: Path, capsys: pytest.CaptureFixture[str], note: str
) -> None:
    before = file_tree(vault)
    code, out, err = _run(capsys, vault, "curate", "pin", note, "--json")
    assert code == 2, err  # like a missing note (the documented exit codes), not a refused curation
    assert json.loads(out)["exit_code"] == 2 and "Traceback" not in err
    assert ("'..'" in err) if ".." in note else ("inside the vault" in err)
    assert file_tree(vault) == before and not _audit_folder(vault).exists()


def test_a_note_is_named_by_its_title_or_an_alias(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(vault, "Projects/Kitchen Renovation.md", "---\naliases: [Reno]\n---\nTiles.\n")
    code, out, err = _run(capsys, vault, "curate", "merge", "garden", "--into", "Kitchen Renovation", "--yes")
    assert code == 0, err
    assert out.startswith("Merge Notes/garden.md into Projects/Kitchen Renovation.md:")
    kept = (vault / "Projects/Kitchen Renovation.md").read_text(encoding="utf-8")
    assert kept.endswith("## Merged from garden\n\nTomatoes want sun.\n")  # its `# Garden` only repeated the name
    assert _run(capsys, vault, "curate", "pin", "reno")[0] == 0
    assert split_frontmatter((vault / "Projects/Kitchen Renovation.md").read_text(encoding="utf-8"))[0]["pinned"]
    write(vault, "Trips/ski.md", "another ski\n")
    before = file_tree(vault)
    code, out, err = _run(capsys, vault, "curate", "pin", "ski")
    assert code == 2 and out == ""
    assert "ski: 2 notes share this name ('Notes/ski.md', 'Trips/ski.md'); give the path" in err
    assert file_tree(vault) == before


def test_the_vault_may_come_before_the_action(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["curate", "--vault", str(vault), "pin", "Notes/ski"]) == 0
    assert split_frontmatter((vault / "Notes/ski.md").read_text(encoding="utf-8"))[0]["pinned"] is True


def test_nothing_to_undo_says_why(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, vault, "undo")
    assert code == 1 and "nothing to undo: no curation of this vault has been done yet" in err
    assert _run(capsys, vault, "curate", "pin", "Notes/ski")[0] == 0
    assert _run(capsys, vault, "undo")[0] == 0
    code, _, err = _run(capsys, vault, "undo")
    assert code == 1 and "nothing to undo: every curation of this vault has been undone already" in err
