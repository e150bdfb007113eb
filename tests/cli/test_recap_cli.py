"""`companion recall` and `companion recent` for a recap of a period, as a user runs them: real processes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli import run_companion
from tests.helpers.files import write
from tests.helpers.recapvault import NOW, TOKEN, Written, write_recap_vault

AS_OF = NOW.isoformat()
QUESTION = "What did we talk about last week?"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, Written]]:
    root = tmp_path_factory.mktemp("recap-cli") / "vault"
    sessions = write_recap_vault(root)
    write(root, ".companion/companion.yaml", "embedding:\n  provider: hash\n")
    data = str(tmp_path_factory.mktemp("recap-cli-data"))
    out = run_companion("index", "--vault", str(root), "--data-dir", data)
    assert out.returncode == 0, out.stderr
    return root, data, sessions


def _run(vault: tuple[Path, str, dict[str, Written]], *args: str) -> subprocess.CompletedProcess[str]:
    out = run_companion(*args, "--vault", str(vault[0]), "--data-dir", vault[1], "--as-of", AS_OF, "--no-sync")
    assert out.returncode == 0, out.stderr
    return out


def test_recall_json_gives_each_listed_session_its_time_people_and_exchange(
    vault: tuple[Path, str, dict[str, Written]],
) -> None:
    sessions = vault[2]
    data = json.loads(_run(vault, "recall", QUESTION, "--json").stdout)
    first = data["results"][0]
    restic = sessions["restic"]
    assert first["path"] == restic.path and first["tier"] == "temporal"
    assert first["session"]["when"] == restic.when.isoformat(timespec="minutes")
    assert first["session"]["line"].startswith(f"{restic.when:%Y-%m-%d %H:%M} ")
    assert first["session"]["line"].endswith(f"→ {restic.reply}")
    assert data["period"]["phrase"] == "last week" and data["period"]["more"] == 0
    apple = data["results"][1]["session"]
    assert (
        apple["line"] == f"{sessions['apple'].when:%Y-%m-%d %H:%M} alice/tg {sessions['apple'].user} → In late winter."
    )
    assert TOKEN not in json.dumps(data)


def test_recall_prints_each_session_on_one_line_under_it(vault: tuple[Path, str, dict[str, Written]]) -> None:
    sessions = vault[2]
    out = _run(vault, "recall", QUESTION).stdout
    assert "recap   the sessions of 2026-11-09 .. 2026-11-15 first, newest first" in out
    bike = sessions["bike"]
    line = f"{bike.when:%Y-%m-%d %H:%M} alice/tg Which bike lock should I buy? → The Abus Granit."
    assert line in out
    lines = out.splitlines()
    listed = [n for n, text in enumerate(lines) if sessions["restic"].path in text or bike.path in text]
    assert lines.index(f"      {line}") == listed[1] + 1, out
    assert TOKEN not in out


def test_recent_lists_a_period(vault: tuple[Path, str, dict[str, Written]]) -> None:
    sessions = vault[2]
    data = json.loads(_run(vault, "recent", "--period", "on 3 November", "--json").stdout)
    assert [s["path"] for s in data["sessions"]] == [sessions["car"].path, sessions["dentist"].path]
    assert data["sessions"][0]["summary"] == "Is the car service booked? → Thursday at 8."
    text = _run(vault, "recent", "--period", "on 3 November").stdout
    assert "Is the car service booked? → Thursday at 8." in text
    assert text.count("Is the car service booked?") == 1  # a summary's title is its message: said once
    out = _run(vault, "recent", "--period", "last week", "--limit", "2").stdout
    assert "and 2 more sessions of that period" in out
    bad = run_companion("recent", "--vault", str(vault[0]), "--data-dir", vault[1], "--period", "someday")
    assert bad.returncode == 2 and "names no past period" in bad.stderr
