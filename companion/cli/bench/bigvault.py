"""The big-vault measure: a cold `companion index` of thousands of long notes, as a user runs it, with another process
asking `companion recall` meanwhile.

It reports when the words of every note were in (the build's own progress says so), when a recall from another
process first found the note read last, when the build was done, the build against embedding its chunks alone,
and the build's peak memory (the kernel's account of the child process).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from companion.cli.bench.common import chunk_texts, timed
from companion.errors import BenchError

PROBE_WORD = "quillmarrow"
"""A word only the note read last holds: a recall finds it as soon as the words of every note are in."""
PROBE_NOTE = "zz-probe.md"

_SYLLABLES = tuple(
    a + b for a in ("b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v") for b in "aeiou"
)


def long_vault(dest: Path, notes: int, *, variant: int = 5) -> Path:
    """A vault of `notes` long knowledge notes (four sections of three paragraphs, about 700 words each, dated
    over three years) plus the probe note; written once and reused."""
    marker = dest / ".companion-bench.json"
    if marker.exists() and json.loads(marker.read_text(encoding="utf-8")) == {"notes": notes, "variant": variant}:
        return dest
    rng = random.Random(variant)
    words = sorted({"".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 3))) for _ in range(6000)})
    dest.mkdir(parents=True, exist_ok=True)
    (dest / ".obsidian").mkdir(exist_ok=True)

    def paragraph() -> str:
        return " ".join(
            " ".join(rng.choice(words) for _ in range(rng.randint(6, 14))).capitalize() + "."
            for _ in range(rng.randint(3, 5))
        )

    for i in range(notes):
        day = f"{2023 + i % 3}-{1 + i % 12:02d}-{1 + i % 28:02d}"
        sections = [
            f"## {rng.choice(words).capitalize()} {rng.choice(words)}\n\n" + "\n\n".join(paragraph() for _ in range(3))
            for _ in range(4)
        ]
        folder = dest / f"Notes/{i // 500:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        text = f"---\ndate: {day}\ntags: [bench]\n---\n# Note {i:05d}\n\n" + "\n\n".join(sections) + "\n"
        (folder / f"Note {i:05d}.md").write_text(text, encoding="utf-8")
    probe(dest)
    marker.write_text(json.dumps({"notes": notes, "variant": variant}), encoding="utf-8")
    return dest


def probe(vault: Path) -> None:
    """Put the probe note in a vault: last in the order notes are read, oldest in the order they are embedded."""
    path = vault / PROBE_NOTE
    path.write_text(
        f"---\ndate: 1999-01-01\n---\nThe {PROBE_WORD} is the probe of the big-vault measure.\n", encoding="utf-8"
    )


def big_vault(root: Path, notes: int, vault: Path | None = None, alone: bool = True) -> dict[str, Any]:
    """Build the index of a generated vault of `notes` long notes (or of `vault`, a real one, with the probe note
    added) from nothing with `companion index --json`, asking `companion recall` from another process every second
    until it finds the probe; then embed the same chunks alone (unless `alone` is false)."""
    if vault is None:
        vault = long_vault(root / "vault", notes)
    else:
        probe(vault)
    data = root / "data"
    if data.exists():
        import shutil

        shutil.rmtree(data)
    base = [sys.executable, "-m", "companion"]
    where = ["--vault", str(vault), "--data-dir", str(data)]
    events = root / "index-progress.jsonl"
    started = time.perf_counter()
    with open(events, "w", encoding="utf-8") as err, open(root / "index-report.json", "w", encoding="utf-8") as out:
        build = subprocess.Popen([*base, "index", "--json", *where], stdout=out, stderr=err)
        words_s: list[float] = []
        watcher = threading.Thread(target=_words_done, args=(events, build, started, words_s), daemon=True)
        watcher.start()
        first_recall: dict[str, Any] | None = None
        while _running(build.pid) and first_recall is None:
            asked = subprocess.run(
                [*base, "recall", "--json", "--no-sync", "-k", "3", *where, PROBE_WORD],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            if asked.returncode == 0:
                answer = json.loads(asked.stdout)
                paths = [r["path"] for r in answer.get("results", [])]
                if PROBE_NOTE in paths:
                    first_recall = {
                        "s": round(time.perf_counter() - started, 1),
                        "rank": paths.index(PROBE_NOTE) + 1,
                        "dense_built": answer.get("dense_built"),
                        "notice": answer.get("notice"),
                    }
                    break
            time.sleep(1.0)
        _pid, status, usage = os.wait4(build.pid, 0)
        build.returncode = os.waitstatus_to_exitcode(status)
        done_s = time.perf_counter() - started
        watcher.join(5)
    if build.returncode != 0:
        raise BenchError(f"The big vault's `companion index` failed: {events.read_text(encoding='utf-8')[-2000:]}")
    report = json.loads((root / "index-report.json").read_text(encoding="utf-8").strip().splitlines()[-1])
    result: dict[str, Any] = {
        "notes": report["notes_total"],
        "chunks": report["chunks_total"],
        "words_done_s": words_s[0] if words_s else None,
        "first_lexical_recall": first_recall,
        "build_done_s": round(done_s, 1),
        "build_in_process_s": round(report["elapsed_s"], 1),
        "model_in_build_s": round(report["embed_s"], 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "target_first_recall_s": 60,
        "target_peak_rss_mb": 800,
    }
    if alone:
        result.update(_alone(vault, data, report["elapsed_s"]))
    return result


def _running(pid: int) -> bool:
    """Whether the child `pid` still runs, without reaping it: `os.wait4` must find it to report its peak memory (a
    small vault's build may end before the first look)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None


def _words_done(events: Path, build: subprocess.Popen[bytes], started: float, out: list[float]) -> None:
    """Note when the build's progress first says it embeds: every note's words are in by then."""
    with open(events, encoding="utf-8") as stream:
        while True:
            line = stream.readline()
            if not line:
                if not _running(build.pid):
                    return
                time.sleep(0.05)
                continue
            if '"embedding"' in line and '"progress"' in line:
                out.append(round(time.perf_counter() - started, 1))
                return


def _alone(vault: Path, data: Path, build_s: float) -> dict[str, Any]:
    """Embed every chunk of the vault with the model alone, as one call (the best case of padding)."""
    from companion.workspace import Workspace

    ws = Workspace.open(vault, data_dir=data)
    texts = chunk_texts(ws)
    embedder = ws.embedder()
    seconds = timed(lambda: embedder.embed(texts))
    ws.close()
    return {
        "embed_alone_s": round(seconds, 1),
        "ratio": round(build_s / seconds, 3),
        "chunks_per_s": round(len(texts) / build_s, 1),
        "target_ratio": 1.15,
    }
