"""The built processors: retain (age, size), archive (xz), redact (each secret kind, no false positives)."""

from __future__ import annotations

import functools
import json
import lzma
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from companion.pipeline.history import Entry, parse_entry, serialize
from companion.pipeline.processors import ArchiveProcessor, Redactor, RedactProcessor, RetainProcessor
from companion.specs import ArchiveSpec, RedactSpec, RetainSpec

NOW = datetime(2026, 3, 22, 12, tzinfo=UTC)


def entry(i: int, age_hours: float, text: str = "HEARTBEAT_OK") -> Entry:
    ts = NOW - timedelta(hours=age_hours)
    return parse_entry(serialize({"id": f"e{i}", "ts": ts.isoformat(), "agent": "a", "response": text}))


def test_retain_drops_by_age() -> None:
    entries = [entry(0, 100), entry(1, 73), entry(2, 71), entry(3, 1)]
    result = RetainProcessor(RetainSpec(max_age_days=3)).process("a", entries, NOW)
    assert result.drop == {"e0", "e1"} and not result.replace and not result.derived


def test_retain_drops_the_oldest_until_the_size_fits() -> None:
    entries = [entry(i, 10 - i, "x" * 1000) for i in range(10)]
    line = len(entries[0].raw) + 1
    limit_mb = (line * 4 + 10) / (1024 * 1024)
    result = RetainProcessor(RetainSpec(max_size_mb=limit_mb)).process("a", entries, NOW)
    assert result.drop == {f"e{i}" for i in range(6)}


def test_archive_packs_old_entries_into_readable_xz(tmp_path: Path) -> None:
    entries = [entry(0, 50), entry(1, 10)]
    processor = ArchiveProcessor(ArchiveSpec(older_than_days=1, destination="cold"), tmp_path)
    result = processor.process("a", entries, NOW)
    assert result.drop == {"e0"}
    (artifact,) = result.derived
    assert artifact.path == tmp_path / "cold" / "a" / "a-20260322T120000Z.jsonl.xz"
    assert lzma.decompress(artifact.content) == entries[0].raw + b"\n"
    assert ArchiveProcessor(ArchiveSpec(), tmp_path).process("a", entries, NOW).drop == frozenset()


SECRETS = {
    "openai_key": "sk-proj-abcDEF1234567890abcdefGHIJ",
    "anthropic_key": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
    "aws_key": "AKIAIOSFODNN7EXAMPLE",
    "github_token": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "slack_token": "xoxb-1234567890-abcdefghij",
    "google_key": "AIza" + "SyA1234567890abcdefghijklmnopqrstuv",
    "email": "ada.lovelace@example.org",
    "card_number": "4111 1111 1111 1111",
    "phone": "+1 415 555 2671",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_secret_kind_is_redacted(kind: str) -> None:
    text = f"before {SECRETS[kind]} after"
    assert Redactor().text(text) == f"before [REDACTED:{kind}] after"


def test_bearer_tokens_url_passwords_and_private_keys() -> None:
    redactor = Redactor()
    assert redactor.text("Authorization: Bearer abcdef0123456789ABCDEF.xyz") == (
        "Authorization: Bearer [REDACTED:bearer_token]"
    )
    assert redactor.text("db at postgres://admin:hunter2@db.internal:5432/x") == (
        "db at postgres://admin:[REDACTED:url_password]@db.internal:5432/x"
    )
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----"
    assert redactor.text(f"key:\n{pem}\nend") == "key:\n[REDACTED:private_key]\nend"


def test_no_false_positives_on_plain_text_and_numbers() -> None:
    plain = (
        "The heartbeat returned HEARTBEAT_OK 144 times on 2026-03-22 at 10:15:00; "
        "order 12345678 cost 1,234.56 and the task-queue holds 42 items (see ask-later)."
    )
    assert Redactor().text(plain) == plain
    assert Redactor().text("4111 1111 1111 1112") == "4111 1111 1111 1112"  # fails the Luhn check


def test_configured_patterns_and_nested_values() -> None:
    processor = RedactProcessor(RedactSpec(patterns=(r"PROJECT-\d+",)))
    data = {
        "id": "x",
        "ts": NOW.isoformat(),
        "agent": "a",
        "request": {"messages": [{"content": "codename PROJECT-7, mail me at bob@example.com"}]},
        "n": 5,
    }
    original = parse_entry(serialize(data))
    untouched = entry(2, 1, "nothing here")
    result = processor.process("a", [original, untouched], NOW)
    assert set(result.replace) == {"x"}
    new = result.replace["x"]
    assert new.data["request"]["messages"][0]["content"] == ("codename [REDACTED:pattern], mail me at [REDACTED:email]")
    assert json.loads(new.raw) == new.data and new.id == "x" and new.ts == original.ts


def test_long_texts_and_the_quick_checks_redact_exactly_what_the_patterns_find() -> None:
    # Each kind's quick substring check must never skip a text its pattern matches: compare with the bare patterns,
    # on short texts and on long ones (which are also cached), with the secrets in other letter cases too.
    from companion.secrets import KINDS, _replacement

    def bare(text: str) -> str:
        for kind in KINDS:
            text = kind.pattern.sub(functools.partial(_replacement, kind=kind.name), text)
        return text

    pem = "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----"
    extras = ["bEaReR abcdef0123456789ABCDEF", "https://u:p4ss@h.example", pem, "call 020 7946 0958 now"]
    aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYq1w2E3r4T5"
    extras += [
        f"Aws_Secret_Access_Key: {aws}",
        f"{SECRETS['aws_key']} / {aws}",
        "The Password is hunter2-x",
        "PIN 4821",
    ]
    filler = "You are sentinel; reply HEARTBEAT_OK when all is well. " * 60
    for secret in [*SECRETS.values(), *extras]:
        for text in (f"x {secret} y", f"{filler}{secret} {filler}", filler + secret.lower(), filler + secret.upper()):
            assert Redactor().text(text) == bare(text), secret
            assert Redactor().text(text) == bare(text)  # the cached answer is the same
