"""`eval` and `fusion` as a user runs them: real processes scoring recall against questions with known answers,
training fusion weights from the features they write, and comparing runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.config import RecallConfig
from companion.recall.fusion import QUESTION_FEATURES, default_model
from tests.helpers.cli import run_companion
from tests.helpers.conversations import conversation_path, write_vault
from tests.helpers.files import write
from tests.helpers.recallcli import AS_OF
from tests.helpers.recallcli import run_on as _run

REPO = Path(__file__).resolve().parents[2]


def test_eval_features_train_fusion_weights_that_recall_can_use(vault: Path, data_dir: str, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": str(i), "query": q, "evidence": [p], "as_of": AS_OF}) + "\n"
            for i, (q, p) in enumerate(
                [
                    ("sourdough starter hydration", conversation_path(-60, "sourdough")),
                    ("oak worktop for the kitchen", conversation_path(-20, "kitchen")),
                    ("train tickets", conversation_path(-9, "train")),
                ]
            )
        )
    )
    features = tmp_path / "mine.jsonl"
    out = _run(vault, data_dir, "eval", str(questions), "--features", str(features), "--json")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in features.read_text().splitlines()]
    assert len(rows) == 3 and all(any(c["answer"] for c in r["candidates"]) for r in rows)
    none = tmp_path / "elsewhere.jsonl"
    assert _run(vault, data_dir, "eval", str(questions), "--features", str(none), "--unanswerable").returncode == 0
    assert not any(c["answer"] for line in none.read_text().splitlines() for c in json.loads(line)["candidates"])

    weights = tmp_path / "weights.json"
    trained = run_companion(
        "fusion", "train", str(features), str(none), "--out", str(weights), "--dense-span", "0.3", "--json"
    )
    assert trained.returncode == 0, trained.stderr
    assert json.loads(trained.stdout)["weights"]["trained_on"] == ["elsewhere", "mine"]
    assert json.loads(trained.stdout)["weights"]["dense_span"] == 0.3
    assert {json.loads(line)["dense_span"] for line in features.read_text().splitlines()} == {0.3}
    # The span the features recorded is the weights' without being asked for; another one is refused.
    implied = run_companion("fusion", "train", str(features), str(none), "--out", str(weights), "--json")
    assert json.loads(implied.stdout)["weights"]["dense_span"] == 0.3
    for flags, said in (
        (["--dense-span", "0.1"], "the features were written with 0.3"),
        (["--dense-span", "0"], "a span is above 0"),
        (["--dense-span", "0.3", "--keep-ranking", "shipped"], "the kept weights' span stays"),
    ):
        refused = run_companion("fusion", "train", str(features), "--out", str(tmp_path / "x.json"), *flags)
        assert refused.returncode == 2 and said in refused.stderr, refused.stderr
    shown = run_companion("fusion", "show", "--weights", str(weights))
    assert "fitted on elsewhere, mine" in shown.stdout and "bias" in shown.stdout
    # Keeping the shipped ranking: only the question's own features are fitted, the rest stay as shipped.
    kept = tmp_path / "kept.json"
    calibrated = run_companion(
        "fusion", "train", str(features), str(none), "--keep-ranking", "shipped", "--out", str(kept), "--json"
    )
    assert calibrated.returncode == 0, calibrated.stderr
    shipped = default_model()
    tuned = json.loads(calibrated.stdout)["weights"]
    assert tuned["bias"] == shipped.bias
    for name, value, was in zip(tuned["features"], tuned["weights"], shipped.weights, strict=True):
        assert name in QUESTION_FEATURES or value == pytest.approx(was, abs=1e-6), name
    # One of the question's own features fitted alone: every other weight stays as shipped.
    alone = run_companion(
        "fusion", "train", str(features), str(none), "--keep-ranking", "shipped", "--fit", "unknown_words",
        "--out", str(kept), "--json",
    )  # fmt: skip
    assert alone.returncode == 0, alone.stderr
    fitted = json.loads(alone.stdout)["weights"]
    for name, value, was in zip(fitted["features"], fitted["weights"], shipped.weights, strict=True):
        assert name == "unknown_words" or value == pytest.approx(was, abs=1e-6), name
    refused = run_companion("fusion", "train", str(features), "--fit", "unknown_words", "--out", str(kept))
    assert refused.returncode == 2 and "needs --keep-ranking" in refused.stderr
    own = tmp_path / "own"
    write_vault(own)
    write(own, ".companion/companion.yaml", f"embedding:\n  provider: hash\nrecall:\n  fusion_weights: {weights}\n")
    used = run_companion("recall", "sourdough", "--vault", str(own), "--data-dir", str(tmp_path / "d"), "--json")
    assert used.returncode == 0, used.stderr
    assert json.loads(used.stdout)["results"]
    weights.write_text("{}")
    broken = run_companion("recall", "sourdough", "--vault", str(own), "--data-dir", str(tmp_path / "d"))
    assert broken.returncode == 2 and "recall.fusion_weights" in broken.stderr

    bad = run_companion("fusion", "train", str(questions), "--out", str(weights))
    assert bad.returncode == 2 and "not a line of `companion eval --features`" in bad.stderr
    assert _run(vault, data_dir, "eval", str(questions), "--unanswerable").returncode == 2


def test_eval_names_the_answerable_questions_recall_said_no_note_matches(
    vault: Path, data_dir: str, tmp_path: Path
) -> None:
    questions = tmp_path / "q.jsonl"
    asked = [("found", "sourdough starter", "sourdough"), ("lost", "zeppelin hangar xylophone", "kitchen")]
    questions.write_text(
        "".join(
            json.dumps({"id": i, "query": q, "evidence": [conversation_path(-60, slug)], "as_of": AS_OF}) + "\n"
            for i, q, slug in asked
        )
    )
    out = _run(vault, data_dir, "eval", str(questions), "--modes", "hybrid", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["no_good_match"] == ["lost"]
    text = _run(vault, data_dir, "eval", str(questions), "--modes", "hybrid").stdout
    assert "said to have no good match (every question here has an answer): 1 (lost)" in text


def test_the_multilingual_model_s_shipped_weights_can_be_shown() -> None:
    shown = run_companion("fusion", "show", "--multilingual", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["dense_span"] < RecallConfig().dense_span


def test_eval_scores_the_companion_beside_bm25_and_dense(vault: Path, data_dir: str, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    rows = [
        {"id": "1", "query": "sourdough hydration", "evidence": [conversation_path(-60, "sourdough")], "label": "a"},
        {"id": "2", "query": "oak worktop", "evidence": [conversation_path(-20, "kitchen")], "label": "b"},
    ]
    questions.write_text("".join(json.dumps({**r, "as_of": AS_OF}) + "\n" for r in rows))
    out = _run(vault, data_dir, "eval", str(questions), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data["overall"]) == {"hybrid", "bm25", "dense"}
    assert data["overall"]["hybrid"]["recall@1"] == 1.0
    assert set(data["by_label"]["hybrid"]) == {"a", "b"}
    questions.write_text('{"id": "x", "query": "q", "evidence": []}\n')
    bad = _run(vault, data_dir, "eval", str(questions))
    assert bad.returncode == 2 and "line 1" in bad.stderr and "evidence" in bad.stderr


def test_eval_compares_the_companion_with_each_baseline_question_by_question(
    vault: Path, data_dir: str, tmp_path: Path
) -> None:
    questions = tmp_path / "q.jsonl"
    rows = [
        {"id": "1", "query": "sourdough hydration", "evidence": [conversation_path(-60, "sourdough")]},
        {"id": "2", "query": "oak worktop", "evidence": [conversation_path(-20, "kitchen")]},
        {"id": "3", "query": "train tickets from Lyon", "evidence": [conversation_path(-9, "train")]},
    ]
    questions.write_text("".join(json.dumps({**r, "as_of": AS_OF}) + "\n" for r in rows))
    out = _run(vault, data_dir, "eval", str(questions), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data["paired"]) == {"bm25", "dense"}
    for comparison in data["paired"].values():
        assert set(comparison) == {"any@5", "all@5", "mrr"}
        for p in comparison.values():
            assert p["low"] <= p["diff"] <= p["high"] and p["wins"] + p["losses"] <= 3
    text = _run(vault, data_dir, "eval", str(questions), "--modes", "hybrid,bm25")
    assert text.returncode == 0, text.stderr
    assert "hybrid vs bm25, question by question" in text.stdout and "dense" not in text.stdout


def test_eval_use_asks_questions_first_and_keeps_the_access_statistics_as_they_were(
    vault: Path, data_dir: str, tmp_path: Path
) -> None:
    used, scored = tmp_path / "use.jsonl", tmp_path / "q.jsonl"
    used.write_text(
        json.dumps({"id": "u1", "query": "sourdough hydration", "evidence": [conversation_path(-60, "sourdough")]})
        + "\n"
        + json.dumps({"id": "u2", "query": "train tickets", "evidence": [conversation_path(-9, "train")]})
        + "\n"
    )
    scored.write_text(json.dumps({"id": "1", "query": "oak worktop", "evidence": [conversation_path(-20, "kitchen")]}))
    assert _run(vault, data_dir, "recall", "oak worktop").returncode == 0  # the vault's own statistics exist
    access = next(Path(data_dir).rglob("access.sqlite"))
    before = access.read_bytes()
    out = _run(vault, data_dir, "eval", str(scored), "--use", str(used), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["use"]["questions"] == 2 and data["use"]["accesses"] > 0
    assert data["overall"]["hybrid"]["questions"] == 1
    assert access.read_bytes() == before  # recorded on a scratch copy only
    text = _run(vault, data_dir, "eval", str(scored), "--use", str(used), "--modes", "hybrid")
    assert "after 2 questions of" in text.stdout


@pytest.mark.model
def test_on_the_evaluation_set_the_companion_beats_bm25(tmp_path: Path) -> None:
    # The real model on the project's own evaluation set (eval/): a measurement, so it can fail.
    out = run_companion(
        "eval",
        str(REPO / "eval" / "questions.jsonl"),
        "--vault",
        str(REPO / "eval" / "vault"),
        "--data-dir",
        str(tmp_path),
        "--json",
    )
    assert out.returncode == 0, out.stderr
    overall = json.loads(out.stdout)["overall"]
    assert overall["hybrid"]["recall@5"] > overall["bm25"]["recall@5"]
    assert overall["hybrid"]["mrr"] > overall["bm25"]["mrr"]
    assert overall["hybrid"]["recall@5"] >= overall["dense"]["recall@5"]
    assert overall["hybrid"]["questions"] >= 60


def test_eval_pairs_a_run_with_rankings_written_earlier(vault: Path, data_dir: str, tmp_path: Path) -> None:
    asked = [
        ("sourdough starter hydration", conversation_path(-60, "sourdough")),
        ("oak worktop for the kitchen", conversation_path(-20, "kitchen")),
        ("train tickets", conversation_path(-9, "train")),
    ]
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": str(i), "query": q, "evidence": [p], "as_of": AS_OF}) + "\n"
            for i, (q, p) in enumerate(asked)
        )
    )
    first = tmp_path / "first.jsonl"
    out = _run(vault, data_dir, "eval", str(questions), "--modes", "hybrid", "--rankings", str(first), "--json")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in first.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["0", "1", "2"] and rows[0]["evidence"] == [asked[0][1]]
    # The same ranking against itself: no difference; an earlier ranking that missed every answer: a gain.
    same = _run(vault, data_dir, "eval", str(questions), "--modes", "hybrid", "--against", str(first), "--json")
    assert json.loads(same.stdout)["against"]["any@5"]["diff"] == 0
    worse = tmp_path / "worse.jsonl"
    worse.write_text("".join(json.dumps({**r, "ranked": []}) + "\n" for r in rows))
    gain = json.loads(
        _run(vault, data_dir, "eval", str(questions), "--modes", "hybrid", "--against", str(worse), "--json").stdout
    )
    assert gain["against"]["any@5"]["diff"] == json.loads(out.stdout)["overall"]["hybrid"]["recall@5"] > 0
    text = _run(vault, data_dir, "eval", str(questions), "--modes", "hybrid", "--against", str(worse)).stdout
    assert f"hybrid vs {worse}" in text
    # A file that is no rankings file is named with its line, as JSON under --json.
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "0"}\n')
    refused = _run(vault, data_dir, "eval", str(questions), "--against", str(bad), "--json")
    assert refused.returncode == 2 and "line 1" in json.loads(refused.stdout)["error"]
