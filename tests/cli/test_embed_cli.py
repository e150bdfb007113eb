"""`companion process` with an `embed` processor, end to end with the real model and a real embedded Chroma store:
recall finds what the history said, and seeded secrets reach neither the store nor any other file of the index."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from companion.cli import main
from companion.locations import vault_data_dir
from companion.pipeline.history import serialize
from indexer.lock import WriterLock
from tests.helpers.history import history_config

AS_OF = "2026-03-22T12:00:00+00:00"
SECRETS = {
    "openai_key": "sk-proj-" + "Qw3rTy7uIoP1aSdF" * 2,
    "aws_key": "AKIA" + "Z7Q2M4X8C6V1B3N5",
    "email": "jane.doe@example.com",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXBheWxvYWQ.s1gn4tur3",
}
TURNS = [
    ("user", f"Rebalance the bond ladder; the broker login is {SECRETS['email']} and my key {SECRETS['openai_key']}"),
    ("assistant", "We moved the April coupon into two-year treasuries and kept the corporate bonds."),
    ("user", f"Use AWS {SECRETS['aws_key']} with header Authorization: Bearer {SECRETS['bearer']} for the backup"),
    ("assistant", "HEARTBEAT_OK"),
]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".companion").mkdir(parents=True)
    now = datetime.fromisoformat(AS_OF)
    lines = [
        serialize(
            {
                "id": f"t{i}",
                "ts": (now - timedelta(hours=8 - i)).isoformat(),
                "agent": "trader",
                "role": r,
                "content": c,
            }
        )
        for i, (r, c) in enumerate(TURNS)
    ]
    log = root / "agents" / "trader" / "history.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"".join(line + b"\n" for line in lines))
    return root


def configure(vault: Path, *types: str) -> None:
    items = "".join(f"    - type: {t}\n" for t in types)
    text = history_config(items)
    (vault / ".companion" / "companion.yaml").write_text(text, encoding="utf-8")


def process(capsys: pytest.CaptureFixture[str], vault: Path, data: Path, *extra: str) -> dict[str, object]:
    code = main(["process", "--vault", str(vault), "--data-dir", str(data), "--as-of", AS_OF, "--json", *extra])
    out = capsys.readouterr()
    assert code == 0, out.err
    result = json.loads(out.out)
    assert isinstance(result, dict)
    return result


def files_holding(root: Path, needle: str) -> list[str]:
    """Every file under `root` whose bytes hold `needle` (as UTF-8, or as JSON would escape it)."""
    forms = {needle.encode(), json.dumps(needle)[1:-1].encode()}
    return [p.as_posix() for p in root.rglob("*") if p.is_file() and any(f in p.read_bytes() for f in forms)]


def store_text(data: Path) -> str:
    """Everything the Chroma collection holds besides vectors: ids, documents and metadata."""
    import chromadb
    from chromadb.config import Settings

    (store,) = [p for p in data.rglob("chroma.sqlite3")]
    client = chromadb.PersistentClient(path=str(store.parent), settings=Settings(anonymized_telemetry=False))
    (collection,) = client.list_collections()
    got = client.get_collection(collection.name).get(include=["documents", "metadatas"])
    assert got["ids"], "the store is empty: nothing was embedded"
    return json.dumps({"ids": got["ids"], "documents": got["documents"], "metadatas": got["metadatas"]})


def test_redacted_history_is_embedded_and_recalled_without_its_secrets(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    configure(vault, "embed", "redact")
    result = process(capsys, vault, data)
    indexed = result["indexed"]
    assert isinstance(indexed, dict) and indexed["notes"] == 1 and indexed["chunks"] >= 3
    stored = store_text(data)
    for kind, secret in SECRETS.items():
        assert files_holding(data, secret) == [], kind
        assert files_holding(vault / "Memory", secret) == [], kind
        assert secret not in stored, kind
    code = main(["recall", "--vault", str(vault), "--data-dir", str(data), "--as-of", AS_OF, "--json", "treasuries"])
    out = capsys.readouterr()
    assert code == 0, out.err
    (first, *_) = json.loads(out.out)["results"]
    assert first["path"] == "Memory/History/trader/trader 2026-03-22.md" and first["tier"] == "warm"


def test_without_redact_the_same_run_does_store_the_secrets(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The control: the check above can fail, because without redaction the secrets do reach the history notes
    # (the index itself redacts what it reads, so the data dir stays clean either way).
    data = tmp_path / "data"
    configure(vault, "embed")
    process(capsys, vault, data)
    assert files_holding(vault / "Memory", SECRETS["openai_key"]) != []
    assert files_holding(vault / "Memory", SECRETS["aws_key"]) != []
    assert files_holding(data, SECRETS["openai_key"]) == []


def test_a_running_watcher_is_left_to_index_the_notes(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    configure(vault, "embed", "redact")
    # As `companion index --watch` holds it while it runs.
    with WriterLock(vault_data_dir(vault, str(data))):
        result = process(capsys, vault, data)
    indexed = result["indexed"]
    assert isinstance(indexed, dict) and indexed["notes"] == 0 and "index --watch" in str(indexed["message"])
    assert (vault / "Memory" / "History" / "trader" / "trader 2026-03-22.md").exists()


def test_no_index_and_dry_run_open_no_index(vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    configure(vault, "embed", "redact")
    assert process(capsys, vault, data, "--dry-run")["indexed"] is None
    assert process(capsys, vault, data, "--no-index")["indexed"] is None
    assert not list(data.rglob("chroma.sqlite3"))
