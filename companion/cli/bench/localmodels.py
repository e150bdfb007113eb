"""The models measure: every local model that is built embeds the same chunks (short conversation windows and long
knowledge notes) and builds the same small vault from nothing, each in a process of its own so that its peak memory
is its own; the models take turns, round after round, so that drift in the machine's speed falls on all of them."""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

from companion.cli.bench.bigvault import long_vault
from companion.cli.bench.common import folder_mb, synthetic_vault, timed
from companion.cli.bench.models import vault_chunks
from companion.errors import BenchError

KINDS = ("conversation_windows", "long_notes")
"""The two sets of chunks every model embeds."""

_CHILD = """
import json, sys
from pathlib import Path
from companion.cli.bench.localmodels import measure_model
print(json.dumps(measure_model(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]))))
"""


def local_models(
    root: Path, models: list[str], notes: int, long_notes: int, cold_notes: int, rounds: int
) -> dict[str, Any]:
    """Measure each of `models` that is built: its speed on the chunks of `notes` conversation notes and of
    `long_notes` long notes (tokens counted by its own tokenizer), its cold build of a vault of `cold_notes` notes,
    its peak memory, its file size and the size of the index it built; each against the float MiniLM model where that
    one is measured too. Models that are not built are listed under `skipped`, with the reason."""
    from companion.embedding.modelbuild import MODEL_ID, MODEL_IDS, is_complete
    from companion.locations import models_dir

    unknown = [m for m in models if m not in MODEL_IDS]
    if unknown:
        raise BenchError(
            f"No local model is called {', '.join(unknown)}: the models measure knows {', '.join(MODEL_IDS)}."
        )
    if rounds < 1:
        raise BenchError(f"The models measure needs at least one round, not {rounds}.")
    built = [m for m in models if is_complete(models_dir() / m, m)]
    skipped = {
        m: f"not built in {models_dir() / m}: run `python -m companion.embedding.modelbuild {m}`"
        for m in models
        if m not in built
    }
    texts = {
        "conversation_windows": vault_chunks(synthetic_vault(root / "short", notes), root / "short" / "data"),
        "long_notes": vault_chunks(long_vault(root / "long" / "vault", long_notes), root / "long" / "data"),
    }
    texts_file = root / "chunks.json"
    texts_file.write_text(json.dumps(texts), encoding="utf-8")
    synthetic_vault(root / "cold", cold_notes)
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in built}
    for turn in range(rounds):
        for model_id in built:
            runs[model_id].append(_child(texts_file, model_id, root / "cold" / f"{model_id}-{turn}"))
    figures = {m: _summary(m, r) for m, r in runs.items()}
    baseline = figures.get(MODEL_ID)
    for model_figures in figures.values():
        _compare(model_figures, baseline)
    return {
        "chunks": {kind: len(texts[kind]) for kind in KINDS},
        "cold_build_notes": cold_notes,
        "rounds": rounds,
        "baseline": MODEL_ID if baseline else None,
        "models": figures,
        "skipped": skipped,
    }


def _child(texts_file: Path, model_id: str, data: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(texts_file), model_id, str(data)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise BenchError(f"Measuring the model {model_id} failed: {out.stderr.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _summary(model_id: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One model's figures over its rounds: mean times (each round's kept), the rates they give, the highest peaks."""
    first = runs[0]
    result: dict[str, Any] = {
        "file_mb": first["file_mb"],
        "folder_mb": first["folder_mb"],
        "load_s": round(statistics.mean(r["load_s"] for r in runs), 2),
    }
    for kind in KINDS:
        seconds = [r[kind]["s"] for r in runs]
        mean = statistics.mean(seconds)
        result[kind] = {
            "chunks": first[kind]["chunks"],
            "tokens": first[kind]["tokens"],
            "s": [round(s, 3) for s in seconds],
            "tokens_per_s": round(first[kind]["tokens"] / mean),
            "chunks_per_s": round(first[kind]["chunks"] / mean, 1),
        }
    build_s = [r["cold_build"]["s"] for r in runs]
    build = statistics.mean(build_s)
    result["cold_build"] = {
        "notes": first["cold_build"]["notes"],
        "chunks": first["cold_build"]["chunks"],
        "s": [round(s, 3) for s in build_s],
        "notes_per_s": round(first["cold_build"]["notes"] / build, 1),
        "index_mb": first["cold_build"]["index_mb"],
    }
    result["peak_rss_mb"] = {
        "embedding": max(r["peak_rss_mb"]["embedding"] for r in runs),
        "cold_build": max(r["peak_rss_mb"]["cold_build"] for r in runs),
    }
    return result


def _compare(figures: dict[str, Any], baseline: dict[str, Any] | None) -> None:
    """Add each time's ratio to the float MiniLM model's (above 1: slower), when that model was measured."""
    for kind in (*KINDS, "cold_build"):
        if baseline is None:
            figures[kind]["time_ratio"] = None
            continue
        mine, theirs = statistics.mean(figures[kind]["s"]), statistics.mean(baseline[kind]["s"])
        figures[kind]["time_ratio"] = round(mine / theirs, 2) if theirs > 0 else None


def _peak_mb() -> float:
    """This process's peak resident memory so far (the kernel's high-water mark), in MB."""
    for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _forget_peak() -> None:
    """Start the kernel's high-water mark again from the current memory, so the next peak is the build's own (Linux;
    elsewhere the build's peak includes the embedding's)."""
    try:
        Path("/proc/self/clear_refs").write_text("5", encoding="utf-8")
    except OSError:
        return


def measure_model(texts_file: Path, model_id: str, data: Path) -> dict[str, Any]:
    """The child process of the models measure: load `model_id`, time it on the chunks in `texts_file`, then build
    the cold vault beside `data` into `data` from nothing, noting the peak memory after each."""
    from companion.embedding.providers import MiniLMEmbedder
    from companion.workspace import Workspace

    texts: dict[str, list[str]] = json.loads(texts_file.read_text(encoding="utf-8"))
    holder: list[MiniLMEmbedder] = []
    load_s = timed(lambda: holder.append(MiniLMEmbedder(model_id=model_id)))
    model = holder[0]
    result: dict[str, Any] = {
        "model": model_id,
        "load_s": load_s,
        "file_mb": round((model.model_dir / "model.onnx").stat().st_size / 2**20, 1),
        "folder_mb": folder_mb(model.model_dir),
    }
    for kind in KINDS:
        chunks = texts[kind]
        model.embed(chunks[:64])  # the first call of a session allocates; keep it out of the timing
        result[kind] = {
            "chunks": len(chunks),
            "tokens": sum(min(n, model.max_tokens) for n in model.count_tokens(chunks)),
            "s": timed(partial(model.embed, chunks)),
        }
    peaks = {"embedding": _peak_mb()}
    _forget_peak()
    if data.exists():
        shutil.rmtree(data)
    ws = Workspace.open(data.parent / "vault", data_dir=data, embedder=model)
    report = ws.indexer().sync()
    ws.close()
    peaks["cold_build"] = _peak_mb()
    result["cold_build"] = {
        "notes": report.notes_indexed,
        "chunks": report.chunks_embedded,
        "s": report.elapsed_s,
        "index_mb": folder_mb(data),
    }
    result["peak_rss_mb"] = peaks
    return result
