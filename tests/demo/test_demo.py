"""The demo vault: counts, structure, links, hot window, determinism, refusing foreign folders."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from companion.demo.build import MARKER, DemoSummary, is_demo_vault, write_demo_vault
from companion.demo.content import DANGLING_LINK
from companion.errors import VaultError
from companion.vault.notes import MEMORY_TYPES
from companion.vault.parse import parse_note
from tests.helpers.files import file_tree, split_frontmatter

NOW = datetime(2026, 3, 1, 9, 30, 0)
LINK = re.compile(r"\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
TIME = re.compile(r"^\d{2}:\d{2}:\d{2}$")


def md(root: Path, folder: str) -> list[Path]:
    return sorted((root / folder).rglob("*.md"))


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DemoSummary]:
    root = tmp_path_factory.mktemp("demo") / "vault"
    return root, write_demo_vault(root, now=NOW)


def test_counts_match_the_summary_and_the_brief(vault: tuple[Path, DemoSummary]) -> None:
    root, summary = vault
    assert summary.root == root
    assert summary.sessions >= 45 and summary.conversations == summary.sessions
    assert summary.memory_notes >= 15
    assert len(md(root, "ops/sessions")) == summary.sessions
    assert len(md(root, "Conversations")) == summary.conversations
    assert len(md(root, "Memory")) == summary.memory_notes
    all_md = sorted(root.rglob("*.md"))
    assert len(all_md) == (summary.sessions + summary.conversations + summary.memory_notes + summary.other_notes)
    assert isinstance(json.loads((root / ".obsidian/app.json").read_text()), dict)
    marker = json.loads((root / MARKER).read_text())
    assert marker["counts"]["sessions"] == summary.sessions
    assert is_demo_vault(root)


def test_sessions_have_every_field_and_sit_in_their_date_folder(
    vault: tuple[Path, DemoSummary],
) -> None:
    root, _ = vault
    for path in md(root, "ops/sessions"):
        fm, body = split_frontmatter(path.read_text(encoding="utf-8"))
        for key in ("date", "user_id", "chat_id", "time", "user_msg", "sentinel_msg"):
            assert fm.get(key), f"{path}: {key} missing"
        assert str(fm["date"]) == path.parent.name
        assert isinstance(fm["time"], str) and TIME.match(fm["time"]), path
        assert path.name.startswith(fm["time"].replace(":", "") + "-")
        when = datetime.fromisoformat(f"{fm['date']}T{fm['time']}")
        assert NOW - timedelta(days=125) <= when <= NOW
        assert body.strip()


def test_sessions_span_about_four_months_three_users_several_chats(
    vault: tuple[Path, DemoSummary],
) -> None:
    root, _ = vault
    chats: dict[str, set[str]] = defaultdict(set)
    days: set[date] = set()
    for path in md(root, "ops/sessions"):
        fm, _ = split_frontmatter(path.read_text(encoding="utf-8"))
        chats[fm["user_id"]].add(fm["chat_id"])
        days.add(fm["date"])
    assert set(chats) == {"alice", "bob", "carol"}
    assert all(len(c) >= 2 for c in chats.values())
    assert (max(days) - min(days)).days >= 100


def test_conversation_notes_are_turns_with_speaker_names(vault: tuple[Path, DemoSummary]) -> None:
    root, _ = vault
    for path in md(root, "Conversations"):
        fm, body = split_frontmatter(path.read_text(encoding="utf-8"))
        assert fm["type"] == "conversation"
        for key in ("date", "time", "user_id", "chat_id", "session", "participants", "tags"):
            assert fm.get(key), f"{path}: {key} missing"
        assert (root / fm["session"]).is_file()
        assert path.name.startswith(f"{fm['date']} ")
        user = fm["user_id"]
        turns = [p for p in body.split("\n\n") if p.startswith("**")]
        assert 4 <= len(turns) <= 12, path
        for i, turn in enumerate(turns):
            speaker = user if i % 2 == 0 else "sentinel"
            assert turn.startswith(f"**{speaker}:** "), (path, turn[:40])
        assert fm["participants"] == [user, "sentinel"]


def test_conversations_carry_specific_recurring_facts(vault: tuple[Path, DemoSummary]) -> None:
    root, _ = vault
    text = "\n".join(p.read_text(encoding="utf-8") for p in md(root, "Conversations"))
    for fact in ("Chamonix", "14 February", "1,800 EUR", "18,500 EUR", "1:54:12", "tock-cli"):
        assert fact in text
    ski = [p for p in md(root, "Conversations") if "Chamonix" in p.read_text(encoding="utf-8")]
    assert len(ski) >= 5


def test_memory_notes_cover_all_six_types_with_confidence(vault: tuple[Path, DemoSummary]) -> None:
    root, _ = vault
    types: Counter[str] = Counter()
    for path in md(root, "Memory"):
        fm, _ = split_frontmatter(path.read_text(encoding="utf-8"))
        types[fm["type"]] += 1
        assert isinstance(fm["confidence"], float) and 0 <= fm["confidence"] <= 1
        assert fm["tags"]
    assert set(types) == set(MEMORY_TYPES)


def test_people_and_topics_have_aliases(vault: tuple[Path, DemoSummary]) -> None:
    root, _ = vault
    for folder in ("People", "Projects"):
        for path in md(root, folder):
            fm, _ = split_frontmatter(path.read_text(encoding="utf-8"))
            assert fm.get("aliases"), path


def test_every_link_resolves_except_the_deliberate_dangling_one(
    vault: tuple[Path, DemoSummary],
) -> None:
    root, _ = vault
    names = {p.stem.lower() for p in root.rglob("*.md")}
    found = [m.group(1).strip() for path in root.rglob("*.md") for m in LINK.finditer(path.read_text(encoding="utf-8"))]
    targets = set(found)
    assert len(found) > 300 and len(targets) > 75
    dangling = {t for t in targets if t.rsplit("/", 1)[-1].lower() not in names}
    assert dangling == {DANGLING_LINK}


@pytest.mark.parametrize("clock", ["00:05:00", "09:30:00", "23:55:00"])
def test_more_than_three_sessions_of_one_user_in_the_last_two_days(tmp_path: Path, clock: str) -> None:
    now = datetime.fromisoformat(f"2026-03-01T{clock}")
    write_demo_vault(tmp_path, now=now)
    recent: Counter[str] = Counter()
    window = {now.date(), now.date() - timedelta(days=1)}
    for path in md(tmp_path, "ops/sessions"):
        fm, _ = split_frontmatter(path.read_text(encoding="utf-8"))
        when = datetime.fromisoformat(f"{fm['date']}T{fm['time']}")
        assert when <= now
        if fm["date"] in window:
            recent[fm["user_id"]] += 1
    assert recent["alice"] > 3
    assert len(recent) == 3  # every user has something in the hot tier


def test_same_now_and_variant_give_the_same_bytes(tmp_path: Path) -> None:
    write_demo_vault(tmp_path / "a", now=NOW, variant=7)
    write_demo_vault(tmp_path / "b", now=NOW, variant=7)
    write_demo_vault(tmp_path / "c", now=NOW, variant=8)
    a, b, c = (file_tree(tmp_path / n) for n in "abc")
    assert a == b
    assert a != c


def test_timezone_aware_now_is_read_as_wall_clock(tmp_path: Path) -> None:
    aware = NOW.astimezone()
    write_demo_vault(tmp_path / "a", now=aware.replace(tzinfo=None))
    write_demo_vault(tmp_path / "b", now=aware)
    assert file_tree(tmp_path / "a") == file_tree(tmp_path / "b")


def test_refuses_a_non_empty_folder_that_is_not_a_demo_vault(tmp_path: Path) -> None:
    (tmp_path / "My note.md").write_text("mine", encoding="utf-8")
    with pytest.raises(VaultError, match="not a demo vault"):
        write_demo_vault(tmp_path, now=NOW)
    assert [p.name for p in tmp_path.iterdir()] == ["My note.md"]
    target = tmp_path / "My note.md"
    with pytest.raises(VaultError, match="is a file"):
        write_demo_vault(target, now=NOW)


def test_rewriting_a_demo_vault_replaces_it_and_keeps_user_files(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write_demo_vault(root, now=NOW)
    (root / "Inbox").mkdir()
    (root / "Inbox" / "Idea.md").write_text("keep me", encoding="utf-8")
    later = NOW + timedelta(days=9)
    write_demo_vault(root, now=later)
    write_demo_vault(tmp_path / "fresh", now=later)
    rewritten = file_tree(root)
    assert rewritten.pop("Inbox/Idea.md") == b"keep me"
    assert rewritten == file_tree(tmp_path / "fresh")


def test_every_note_parses_with_the_companion_parser(vault: tuple[Path, DemoSummary]) -> None:
    root, summary = vault
    kinds: Counter[str] = Counter()
    for path in root.rglob("*.md"):
        rel = path.relative_to(root).as_posix()
        note = parse_note(rel, path.read_bytes())
        kinds[note.kind] += 1
    assert kinds == {
        "session": summary.sessions,
        "conversation": summary.conversations,
        "memory": summary.memory_notes,
        "note": summary.other_notes,
    }


def test_companion_demo_keeps_a_curated_demo_vault_unless_asked_to_reset(tmp_path: Path) -> None:
    import json as jsonlib

    from tests.helpers.cli import run_companion

    root = tmp_path / "demo"
    where = [str(root), "--no-tui", "--json", "--data-dir", str(tmp_path / "data")]
    first = run_companion("demo", *where)
    assert first.returncode == 0, first.stderr
    note = next((root / "Memory").glob("*.md"))
    curated = note.read_text(encoding="utf-8").replace("---\n", "---\npinned: true\n", 1)
    note.write_text(curated, encoding="utf-8")
    again = run_companion("demo", *where)
    assert again.returncode == 0, again.stderr
    assert jsonlib.loads(again.stdout)["kept"] is True
    assert note.read_text(encoding="utf-8") == curated  # the user's pin survived
    reset = run_companion("demo", *where, "--reset")
    assert reset.returncode == 0 and jsonlib.loads(reset.stdout)["kept"] is False
    assert "pinned: true" not in note.read_text(encoding="utf-8")


def test_companion_demo_prints_the_policy_it_used(tmp_path: Path) -> None:
    import json as jsonlib

    from tests.helpers.cli import run_companion

    root = tmp_path / "demo"
    where = [str(root), "--no-tui", "--data-dir", str(tmp_path / "data")]
    first = run_companion("demo", *where)
    assert first.returncode == 0, first.stderr
    assert "(policy: 3 per user and chat, 2 days)" in first.stdout  # the defaults
    (root / ".companion" / "companion.yaml").write_text(
        "retention:\n  hot_limit: 1\n  hot_window_days: 5\n", encoding="utf-8"
    )
    again = run_companion("demo", *where)
    assert again.returncode == 0, again.stderr
    assert "(policy: 1 per user and chat, 5 days)" in again.stdout
    shown = jsonlib.loads(run_companion("demo", *where, "--json").stdout)
    assert shown["policy"] == {"hot_limit": 1, "hot_window_days": 5}


def test_the_demos_closing_hint_runs_as_printed_on_the_index_it_built(tmp_path: Path) -> None:
    import shlex

    from tests.helpers.cli import run_companion

    root, data = tmp_path / "demo vault", tmp_path / "data"
    shown = run_companion("demo", str(root), "--no-tui", "--data-dir", str(data))
    assert shown.returncode == 0, shown.stderr
    hint = next(line for line in shown.stdout.splitlines() if line.startswith("Try:"))
    words = shlex.split(hint.removeprefix("Try:"))
    assert words[:2] == ["companion", "recall"] and words[words.index("--data-dir") + 1] == str(data)
    asked = run_companion(*words[1:], "--no-sync")
    assert asked.returncode == 0, asked.stderr
    assert "running" in asked.stdout.lower()
