"""The `extract` processor on real files: each kind from realistic entries (never from heartbeats or questions), the
notes' frontmatter and link back, dedupe across runs, the write budget, auto-write modes, redaction first, notes
of the user's left alone, dry runs, the audit record."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from companion.config import parse_config
from companion.errors import ConfigError
from companion.pipeline.extract import classify, make_title
from companion.pipeline.history import serialize
from companion.pipeline.run import AgentReport, process_vault
from companion.vault.audit import AuditLog
from tests.helpers.history import history_config, write_history

NOW = datetime(2026, 3, 22, 12, tzinfo=UTC)
SECRET_KEY = "sk-" + "A1b2C3d4" * 4
FOLDER = Path("Memory/Extracted")

TEXTS = [
    "HEARTBEAT_OK",
    "We decided to stop trading options until the volatility model is fixed.",
    "HEARTBEAT_OK",
    "Should we buy more ACME shares before Friday?",
    "TODO: rebalance the bond ladder before the April coupon.",
    "Remember that the broker closes the ACME account review on the 3rd of April.",
    "HEARTBEAT_OK",
]


def write_log(vault: Path, texts: list[str], agent: str = "trader") -> Path:
    return write_history(vault, texts, NOW, agent)


def config(item: str = "    - type: extract\n", before: str = "") -> str:
    return history_config(before + item)


def run(vault: Path, yaml_text: str, mode: str | None = "aggressive", **kwargs: object) -> AgentReport:
    environ = {} if mode is None else {"AGENT_VAULT_AUTO_WRITE": mode}
    (report,) = process_vault(vault, parse_config(yaml_text), NOW, environ=environ, **kwargs)  # type: ignore[arg-type]
    return report


def notes(vault: Path) -> dict[str, str]:
    folder = vault / FOLDER
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md"))} if folder.exists() else {}


def front(text: str) -> dict[str, object]:
    data = yaml.safe_load(text.split("---\n")[1])
    assert isinstance(data, dict)
    return data


def test_rules_pick_each_kind_and_skip_heartbeats_questions_and_fragments() -> None:
    assert classify("We decided to move the cron job to 02:00 UTC.") == ("decision", 0.85)
    assert classify("Decision: use Postgres for the ledger service.") == ("decision", 0.9)
    assert classify("Let's go with the smaller instance for staging.") == ("decision", 0.75)
    assert classify("TODO: rotate the staging credentials this week.") == ("task", 0.9)
    assert classify("Remind me to renew the TLS certificate in May.") == ("task", 0.8)
    assert classify("I need to update the runbook for the failover.") == ("task", 0.6)
    assert classify("Remember that the VPN gateway restarts every Sunday.") == ("fact", 0.85)
    assert classify("Our staging database is hosted in Frankfurt.") == ("fact", 0.7)
    assert classify("The rate limit is 120 requests per minute.") == ("fact", 0.6)
    assert classify("HEARTBEAT_OK, all systems nominal and nothing to report.") is None
    assert classify("Should we decide to use Postgres for the ledger?") is None
    assert classify("TODO: fix.") is None
    assert classify("We decided " + "very " * 80 + "carefully.") is None
    assert classify("The weather was nice and the walk was pleasant.") is None


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Decided to keep the nightly backup on the old server.", ("decision", 0.75)),
        ("Decided against renewing the market data feed this year.", ("decision", 0.75)),
        ("Agreed to move the release to Thursday next week.", ("decision", 0.75)),
        ("Decided: the nightly backup stays on the old server.", ("decision", 0.8)),
        ("Agreed: the release moves to Thursday next week.", ("decision", 0.8)),
        ("Decision: keep the nightly backup on the old server.", ("decision", 0.9)),
        ("We're going with the smaller instance for staging.", ("decision", 0.7)),
        ("We\u2019re going with the smaller instance for staging.", ("decision", 0.7)),
        ("We'll go with the smaller instance for staging.", ("decision", 0.7)),
        ("I will go with the fixed-rate bond for the ladder.", ("decision", 0.7)),
        ("We decided not to renew the contract this year.", ("decision", 0.85)),
    ],
)
def test_decisions_in_note_style_and_contracted_forms(sentence: str, expected: tuple[str, float]) -> None:
    assert classify(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "I haven't decided yet which broker to use.",
        "We have not decided on the broker for the fund.",
        "We haven't agreed on the vendor for the new ledger.",
        "The team is still undecided about the broker for the fund.",
        "Undecided: which broker handles the fund next year.",
        "If we decided to switch brokers, what would it cost?",
        "If we decided to switch brokers, the fees would double.",
        "Whether we agreed on the budget is still unclear to me.",
        "We won't go with the larger instance for staging.",
        "Decided to keep the nightly backup on the old server?",
    ],
)
def test_undecided_conditional_and_questioned_decisions_are_not_decisions(sentence: str) -> None:
    assert classify(sentence) is None


def test_research_mode_writes_note_style_decisions(tmp_path: Path) -> None:
    write_log(
        tmp_path,
        [
            "Decided to keep the nightly backup on the old server.",
            "Agreed: the release moves to Thursday next week.",
            "We\u2019ll go with the smaller instance for staging.",
            "I haven't decided yet which broker to use.",
        ],
    )
    run(tmp_path, config(), mode="research")
    written = notes(tmp_path)
    assert sorted(written) == [
        "Decided to keep the nightly backup on the old server",
        "The release moves to Thursday next week",
        "We\u2019ll go with the smaller instance for staging",
    ]
    assert all(front(text)["type"] == "decision" for text in written.values())


def test_titles_are_clean_file_safe_and_short() -> None:
    assert make_title("TODO: rotate the keys/certs: staging [urgent]?") == "Rotate the keys certs staging urgent"
    long = make_title("Decision: " + "we will migrate every service to the new cluster " * 3)
    assert len(long) <= 60 and not long.endswith(" ") and long.startswith("We will migrate")
    assert make_title("...hidden.") == "Hidden"


def test_each_kind_becomes_a_typed_note_with_frontmatter_and_link(tmp_path: Path) -> None:
    write_log(tmp_path, TEXTS)
    audit = AuditLog(tmp_path / "data")
    report = run(tmp_path, config(before="    - type: summarize\n"), audit=audit)
    (extract,) = report.extracts
    written = notes(tmp_path)
    assert len(written) == 3 and all(n.written for n in extract.notes) and not report.warnings
    kinds = {str(front(text)["type"]): (title, text) for title, text in written.items()}
    assert set(kinds) == {"fact", "decision", "task"}
    title, text = kinds["decision"]
    assert title == "We decided to stop trading options until the volatility"
    meta = front(text)
    assert meta["agent"] == "trader" and str(meta["date"]) == "2026-03-22" and meta["entry"] == "e1"
    assert meta["source"] == "agents/trader/history.jsonl" and meta["extracted_by"] == "rules-v1"
    assert 0.5 <= float(str(meta["confidence"])) <= 0.9
    assert "- We decided to stop trading options until the volatility model is fixed." in text
    assert "[[Memory/Summaries/trader]]" in text
    assert not any("ACME shares before Friday" in t or "HEARTBEAT" in t for t in written.values())
    (record,) = audit.entries()
    paths = {c.path for c in record.changes}
    assert "Memory/Summaries/trader.md" in paths and {f"Memory/Extracted/{t}.md" for t in written} <= paths
    assert "extracted notes" in record.summary and "rules-v1" in record.summary
    assert all(audit.has_blob(c.after) for c in record.changes if c.after)


def test_without_summarize_the_link_is_the_log_path(tmp_path: Path) -> None:
    write_log(tmp_path, TEXTS)
    run(tmp_path, config())
    text = next(iter(notes(tmp_path).values()))
    assert "[[" not in text and "From agents/trader/history.jsonl · entry e" in text


def test_second_run_does_not_duplicate_and_same_title_appends(tmp_path: Path) -> None:
    log = write_log(tmp_path, TEXTS)
    run(tmp_path, config())
    first = notes(tmp_path)
    again = run(tmp_path, config())
    assert notes(tmp_path) == first and not again.extracts[0].notes and again.extracts[0].known == 3
    # A new sentence with the same title (differing after 60 characters) updates the same note in place.
    with log.open("a", encoding="utf-8") as handle:
        ts = NOW.isoformat()
        text = "We decided to stop trading options until the volatility model has two weeks of clean data."
        handle.write(serialize({"id": "e9", "ts": ts, "agent": "trader", "text": text}).decode() + "\n")
    third = run(tmp_path, config())
    (note,) = third.extracts[0].notes
    assert note.action == "append" and len(notes(tmp_path)) == 3
    body = note.path.read_text(encoding="utf-8")
    assert "is fixed." in body and "two weeks of clean data" in body and body.count("extracted_by") == 1


def test_dedupe_off_writes_a_new_note(tmp_path: Path) -> None:
    write_log(tmp_path, TEXTS)
    run(tmp_path, config())
    (report,) = process_vault(
        tmp_path,
        parse_config(config()),
        NOW,
        environ={"AGENT_VAULT_AUTO_WRITE": "aggressive", "AGENT_VAULT_DEDUPE": "0"},
    )
    assert len(report.extracts[0].notes) == 3 and len(notes(tmp_path)) == 6


def test_budget_caps_writes_and_the_rest_follows_later(tmp_path: Path) -> None:
    write_log(tmp_path, TEXTS)
    report = run(tmp_path, config("    - type: extract\n      max_notes: 2\n"))
    assert len(notes(tmp_path)) == 2 and report.extracts[0].over_budget == 1
    run(tmp_path, config("    - type: extract\n      max_notes: 2\n"))
    assert len(notes(tmp_path)) == 3


def test_auto_write_modes(tmp_path: Path) -> None:
    write_log(tmp_path, [*TEXTS, "Our tax adviser is very thorough and calm."])
    off = run(tmp_path, config(), mode="off")
    assert not notes(tmp_path) and off.extracts[0].reason and "off" in off.extracts[0].reason
    run(tmp_path, config(), mode=None)  # research, the default
    kinds = sorted(str(front(t)["type"]) for t in notes(tmp_path).values())
    assert kinds == ["decision", "fact", "fact"]  # no task
    run(tmp_path, config(), mode="aggressive")
    assert sorted(str(front(t)["type"]) for t in notes(tmp_path).values()) == ["decision", "fact", "fact", "task"]


def test_research_leaves_out_weak_facts(tmp_path: Path) -> None:
    write_log(tmp_path, ["The new analyst from Boston joined the desk today and was quiet."])
    run(tmp_path, config(), mode="research")
    assert not notes(tmp_path)
    run(tmp_path, config(), mode="aggressive")
    assert len(notes(tmp_path)) == 1


def test_a_seeded_secret_never_reaches_a_note(tmp_path: Path) -> None:
    write_log(tmp_path, [f"Remember that the production OpenAI key is {SECRET_KEY} for the trading bot."])
    run(tmp_path, config(before="    - type: redact\n"))
    written = notes(tmp_path)
    assert len(written) == 1
    (text,) = written.values()
    assert SECRET_KEY not in text and "[REDACTED:openai_key]" in text
    assert all(SECRET_KEY not in p.name for p in (tmp_path / FOLDER).iterdir())


def test_a_hand_written_note_of_the_same_title_is_left_alone(tmp_path: Path) -> None:
    write_log(tmp_path, TEXTS)
    mine = tmp_path / FOLDER / "Rebalance the bond ladder before the April coupon.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("---\ntype: task\n---\nMy own plan for the ladder.\n", encoding="utf-8")
    report = run(tmp_path, config())
    assert mine.read_text(encoding="utf-8") == "---\ntype: task\n---\nMy own plan for the ladder.\n"
    assert len(notes(tmp_path)) == 3  # mine plus the decision and the fact
    assert any(str(mine) in w and "left as it is" in w for w in report.warnings)


def test_dry_run_writes_nothing_and_lists_the_notes(tmp_path: Path) -> None:
    write_log(tmp_path, TEXTS)
    audit = AuditLog(tmp_path / "data")
    report = run(tmp_path, config(), audit=audit, dry_run=True)
    assert not (tmp_path / FOLDER).exists() and not audit.entries()
    (extract,) = report.extracts
    assert len(extract.notes) == 3 and not any(n.written for n in extract.notes)
    assert {n.finding.kind for n in extract.notes} == {"fact", "decision", "task"}


def test_config_keys_are_checked() -> None:
    spec = parse_config(config()).session_history.processors[0]
    assert spec.type == "extract" and spec.folder == "Memory/Extracted" and spec.max_notes == 10
    for bad, message in (
        ("      folder: ../outside\n", "inside the vault"),
        ("      folder: .hidden/x\n", "dot-folder"),
        ("      kinds: [fact, rumour]\n", "rumour"),
        ("      max_notes: 0\n", "max_notes"),
    ):
        with pytest.raises(ConfigError, match=message):
            parse_config(config("    - type: extract\n" + bad))
