"""Reading `history.jsonl`: entries, bad lines kept byte for byte, unfinished last lines, `{agent}` sources."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from companion.pipeline.history import BadLine, Entry, find_sources, read_log
from companion.specs import SourceConfig


def test_entries_keep_every_field_and_their_exact_bytes(tmp_path: Path) -> None:
    line = b'{"id": "a1", "ts": "2026-03-01T10:00:00Z", "agent": "sentinel", "extra": {"x": [1, 2]}}'
    path = tmp_path / "history.jsonl"
    path.write_bytes(line + b"\n")
    log = read_log(path, "sentinel")
    (entry,) = log.entries
    assert entry == Entry("a1", datetime(2026, 3, 1, 10, tzinfo=UTC), "sentinel", entry.data, line)
    assert entry.data["extra"] == {"x": [1, 2]}
    assert log.size == len(line) + 1 and log.problems == ()


def test_bad_lines_are_reported_with_file_and_line_and_kept(tmp_path: Path) -> None:
    content = (
        b'{"id": "a", "ts": "2026-03-01T10:00:00+01:00", "agent": "s"}\n'
        b"not json\n"
        b'{"id": "b", "ts": "2026-03-01T10:00:00", "agent": "s"}\n'
        b'{"id": "a", "ts": "2026-03-01T11:00:00Z", "agent": "s"}\n'
        b"\xff\xfe\n"
        b"\n"
        b'["a list"]\n'
        b'{"id": "c", "agent": "s"}\n'
    )
    path = tmp_path / "history.jsonl"
    path.write_bytes(content)
    log = read_log(path, "s")
    lines, size = log.lines, log.size
    assert size == len(content)
    assert [type(line).__name__ for line in lines] == ["Entry"] + ["BadLine"] * 7
    bad = [line for line in lines if isinstance(line, BadLine)]
    assert [b.line for b in bad] == [2, 3, 4, 5, 6, 7, 8]
    assert "not JSON" in bad[0].reason
    assert "no time zone" in bad[1].reason
    assert "used already on line 1" in bad[2].reason
    assert "not UTF-8" in bad[3].reason
    assert bad[4].reason == ""  # a blank line is kept, not reported
    assert "'ts' is missing" in bad[6].reason
    # Every line comes back byte for byte.
    assert b"".join(line.raw + b"\n" for line in lines) == content


def test_problems_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(b'{"id": "a", "ts": "2026-03-01T10:00:00Z", "agent": "s"}\n{oops\n')
    (problem,) = read_log(path, "s").problems
    assert problem.startswith(f"{path}, line 2: not JSON")


def test_an_unfinished_last_line_is_left_out_of_the_read(tmp_path: Path) -> None:
    whole = b'{"id": "a", "ts": "2026-03-01T10:00:00Z", "agent": "s"}\n'
    path = tmp_path / "h.jsonl"
    path.write_bytes(whole + b'{"id": "b", "ts": "2026-')
    log = read_log(path, "s")
    assert [e.id for e in log.entries] == ["a"]
    assert log.size == len(whole) and log.length > log.size


def test_sources_expand_agent(tmp_path: Path) -> None:
    for agent in ("sentinel", "trader-dundas"):
        (tmp_path / "agents" / agent).mkdir(parents=True)
        (tmp_path / "agents" / agent / "history.jsonl").write_bytes(b"")
    (tmp_path / "agents" / "empty").mkdir()
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "research.jsonl").write_bytes(b"")
    found = find_sources(
        tmp_path,
        (SourceConfig("./agents/{agent}/history.jsonl"), SourceConfig("logs/{agent}.jsonl")),
    )
    assert [(s.agent, s.path.relative_to(tmp_path).as_posix()) for s in found] == [
        ("research", "logs/research.jsonl"),
        ("sentinel", "agents/sentinel/history.jsonl"),
        ("trader-dundas", "agents/trader-dundas/history.jsonl"),
    ]
