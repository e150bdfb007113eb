"""`companion bench` through the real command: every measure at the smallest size its flags allow runs to the end with
its figures, a measure that fails is reported in the JSON while the others still run, and the models measure lists
the models that are not built."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from companion.cli.bench import MEASURES
from companion.embedding.modelbuild import E5_INT8_MODEL_ID, MODEL_ID
from tests.helpers.cli import run_companion

pytestmark = pytest.mark.model

TINY = {
    "--cold-notes": "10",
    "--restart-notes": "10",
    "--recall-notes": "10",
    "--nearest-notes": "10",
    "--saves": "1",
    "--save-notes": "5",
    "--queries": "2",
    "--batch-notes": "5",
    "--batch-queries": "2",
    "--tui-base-notes": "5",
    "--incoming-notes": "1",
    "--history-days": "4",
    "--entry-kb": "1",
    "--import-sessions": "1",
    "--import-turns": "1",
    "--mcp-notes": "10",
    "--review-notes": "20",
    "--int8-notes": "1",
    "--int8-long-notes": "1",
    "--models": f"{MODEL_ID},{E5_INT8_MODEL_ID}",
    "--models-notes": "1",
    "--models-long-notes": "1",
    "--models-cold-notes": "1",
    "--rounds": "1",
    "--summaries": "10",
    "--bigvault-notes": "1",
}
"""The smallest sizes the flags allow (the review measure plants a problem on each of 20 ordinary notes)."""


def bench(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    out = run_companion("bench", *args, "--dir", str(tmp_path / "work"), env=env, timeout=900)
    assert "Traceback" not in out.stderr, out.stderr
    results: dict[str, Any] = json.loads(out.stdout.splitlines()[-1])
    return out.returncode, results, out.stderr


def test_every_measure_runs_to_the_end_with_its_figures(tmp_path: Path) -> None:
    flags = [part for flag, value in TINY.items() for part in (flag, value)]
    code, results, stderr = bench(tmp_path, "--only", ",".join(MEASURES), *flags)
    failed = {key: value["error"] for key, value in results.items() if isinstance(value, dict) and "error" in value}
    assert failed == {} and code == 0, (failed, stderr)
    assert set(results["measure_wall_s"]) == {
        "cold_build", "restart", "save_to_searchable", "recall", "nearest", "batch", "tui", "tui_while_indexing",
        "mcp", "review", "process", "import", "int8_model", "models", "summaries", "bigvault",
    }  # fmt: skip

    assert results["cold_build"]["notes"] > 0 and results["cold_build"]["chunks_per_s"] > 0
    restart = results["restart"]
    # The restart opens the index with the model that built it: nothing is embedded again, in-process or as a CLI run.
    assert restart["embedder"] == "hash" and restart["notes"] > 0
    assert restart["restart_chunks_embedded"] == restart["restart_cli_chunks_embedded"] == 0
    assert restart["restart_notes_read"] == restart["restart_cli_notes_read"] == 0
    assert results["save_to_searchable"]["found"] + results["save_to_searchable"]["missed"] == 1
    recall = results["recall"]
    assert recall["query_embedder"] == MODEL_ID and 0 < recall["search_p50_ms"] <= recall["search_p95_ms"]
    assert recall["serving_memory"]["peak_rss_mb"] > 0
    assert results["nearest"]["chunks"] > 0
    assert results["batch"]["queries"] == 2 and results["batch"]["answered"] > 0
    assert results["tui"]["first_screen_s"] > 0
    assert results["tui_while_indexing"]["chunks_embedded"] > 0
    assert results["mcp"]["handshake_s"] > 0 and results["mcp"]["tokens_per_step"]["search"] > 0
    assert results["review"]["suggestions"] > 0
    assert results["process"]["entries"] > 0
    assert results["import"]["sessions"] == 1 and results["import"]["sessions_per_s"] > 0
    assert results["int8_model"]["long_notes"]["chunks"] > 0
    assert results["summaries"]["summaries"] == 10
    bigvault = results["bigvault"]
    assert bigvault["notes"] == 2 and bigvault["chunks"] > 0 and bigvault["peak_rss_mb"] > 0

    models = results["models"]
    assert models["baseline"] == MODEL_ID and set(models["models"]) | set(models["skipped"]) == {
        MODEL_ID,
        E5_INT8_MODEL_ID,
    }
    for model_id, figures in models["models"].items():
        assert figures["file_mb"] > 0 and figures["peak_rss_mb"]["embedding"] > 0, model_id
        for kind in ("conversation_windows", "long_notes"):
            assert figures[kind]["chunks"] == models["chunks"][kind] > 0
            assert figures[kind]["tokens"] > figures[kind]["chunks"] and figures[kind]["tokens_per_s"] > 0
            assert figures[kind]["time_ratio"] > 0
        build = figures["cold_build"]
        assert build["notes"] > 0 and build["notes_per_s"] > 0 and build["index_mb"] > 0
    assert models["models"][MODEL_ID]["long_notes"]["time_ratio"] == 1.0


def test_the_restart_opens_the_index_with_the_model_that_filled_it(tmp_path: Path) -> None:
    code, results, stderr = bench(tmp_path, "--only", "restart", "--restart-notes", "10")
    assert code == 0, stderr
    restart = results["restart"]
    # A `companion index` run of its own finds nothing to do: it does not embed the hashed index again with the model.
    assert restart["embedder"] == "hash" and restart["notes"] > 0
    assert restart["restart_cli_chunks_embedded"] == restart["restart_cli_notes_read"] == 0


def test_a_failing_measure_is_reported_and_the_others_still_run(tmp_path: Path) -> None:
    code, results, _ = bench(
        tmp_path, "--only", "review,import", "--review-notes", "3", "--import-sessions", "1", "--import-turns", "1"
    )
    assert code != 0
    assert "at least 20 ordinary notes" in results["review"]["error"]
    assert "error" not in results["import"] and results["import"]["sessions"] == 1


def test_models_that_are_not_built_are_listed_as_skipped(tmp_path: Path) -> None:
    empty = tmp_path / "no-models"
    empty.mkdir()
    code, results, _ = bench(
        tmp_path,
        *("--only", "models", "--models", MODEL_ID, "--models-notes", "1", "--models-long-notes", "1"),
        *("--models-cold-notes", "1"),
        env={"COMPANION_MODEL_DIR": str(empty)},
    )
    assert code == 0
    models = results["models"]
    assert models["models"] == {} and models["baseline"] is None
    assert "not built" in models["skipped"][MODEL_ID] and f"modelbuild {MODEL_ID}" in models["skipped"][MODEL_ID]
