"""The review queue on a vault with known problems planted among ordinary notes: each kind found, few false ones."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from companion.curation.curator import Curator
from companion.demo.planted import write_planted_vault
from companion.review.measure import record_planted_uses, score
from companion.review.session import Review
from companion.vault.audit import AuditLog
from tests.helpers.workspaces import workspace

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def test_every_kind_is_found_with_few_false_suggestions(tmp_path: Path) -> None:
    planted = write_planted_vault(tmp_path / "vault", ordinary=300, per_kind=8, now=NOW)
    ws = workspace(tmp_path / "vault", data_dir=tmp_path / "data")
    try:
        ws.catch_up()
        record_planted_uses(ws, planted)
        review = Review(ws, Curator(ws.root, AuditLog(ws.data_dir), source="test"))
        queue = review.queue(NOW)
    finally:
        ws.close()
    scores = score(queue, planted)
    for kind, found in scores.items():
        print(kind, found, f"precision {found.precision:.2f} recall {found.recall:.2f}")
    for kind, found in scores.items():
        assert found.recall >= 0.85, (kind, found)
        assert found.precision >= 0.85, (kind, found)
