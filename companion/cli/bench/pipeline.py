"""The pipeline's measure: `companion process` over days of heartbeat history."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from companion.errors import BenchError

PROCESS_CONFIG = """session_history:
  sources:
    - path: ./agents/{agent}/history.jsonl
  processors:
    - type: redact
    - type: archive
      older_than_days: 3
      destination: ./cold-storage
    - type: retain
      max_age_days: 3
    - type: embed
"""


def process_history(root: Path, days: int, entry_kb: int) -> dict[str, Any]:
    """A heartbeat agent: `days` of polls every 10 minutes, each `entry_kb` KB (its system prompt), run
    through redact, archive (3 days), retain (3 days) and embed by a real `companion process` (with `--no-index`: the
    notes' embedding is the indexer's, measured by `cold`), timed and its peak memory taken from the kernel."""
    vault = root / "vault"
    log = vault / "agents" / "sentinel" / "history.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    (vault / ".companion").mkdir(exist_ok=True)
    (vault / ".companion" / "companion.yaml").write_text(PROCESS_CONFIG, encoding="utf-8")
    now = datetime(2026, 3, 22, 12).astimezone()
    prompt = (
        "You are sentinel, a monitoring agent; check the services and reply HEARTBEAT_OK when all is well. " * 2000
    )[: entry_kb * 1024]
    count = days * 144
    with log.open("w", encoding="utf-8") as handle:
        for i in range(count):
            ts = now - timedelta(minutes=10 * (count - i))
            poll = {
                "messages": [{"role": "user", "content": "Read HEARTBEAT.md; reply HEARTBEAT_OK if nothing is due."}]
            }
            answer = "HEARTBEAT_OK" if i % 50 else f"Disk on db-{i} is 91% full; I opened a ticket for the on-call."
            entry = {"id": f"s-{i}", "ts": ts.isoformat(), "agent": "sentinel", "system": prompt, "request": poll}
            handle.write(json.dumps({**entry, "response": answer}) + "\n")
    size = log.stat().st_size
    started = time.perf_counter()
    cmd = [sys.executable, "-m", "companion", "process", "--vault", str(vault), "--data-dir", str(root / "data")]
    cmd += ["--as-of", now.isoformat(), "--no-index", "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    elapsed = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise BenchError(f"`companion process` failed: {err.decode(errors='replace')[-2000:]}")
    (report,) = json.loads(out)["agents"]
    archived = sum(a["entries"] for a in report["archives"])
    return {
        "entries": count,
        "log_mb": round(size / 2**20, 1),
        "kept": report["kept"],
        "archived": archived,
        "archive_mb": round(sum(Path(a["path"]).stat().st_size for a in report["archives"]) / 2**20, 2),
        "log_after_mb": round(log.stat().st_size / 2**20, 1),
        "history_notes": sum(len(e["notes"]) for e in report["embeds"]),
        "seconds": round(elapsed, 2),
        "mb_per_s": round(size / 2**20 / elapsed, 1),
        "peak_rss_mb_of_the_largest_child": round(usage.ru_maxrss / 1024, 1),
    }
