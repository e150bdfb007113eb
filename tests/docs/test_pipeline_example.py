"""The session pipeline page (`docs/pipeline.md`) runs as it is written, so it cannot drift from the program.

The page's worked example is read from the page itself: every fenced block with a `title="PATH"` is a file of the
vault, written there before anything runs; a block titled `PATH (after the run)` is what that file holds after the
run; the `sh` blocks of the "A worked example" section are the commands, run as the page gives them (`~/Vault`
standing for a temporary vault, `--json` or `--no-index` added where a test says so), and a `text` block right
after a command is what the command prints. The figures of the "What the run did" table are checked against the
`--json` report, and every YAML config and JSON entry the page shows must be one the program accepts.

Only `test_the_whole_example_as_a_user_runs_it` loads the embedding model (the run indexes its history notes and
recall embeds the question); the others add `--no-index` or never index.
"""

from __future__ import annotations

import json
import lzma
import re
import shlex
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from companion.config import parse_config
from companion.pipeline.history import parse_entry
from companion.pipeline.transcripts import entry_key, render_entry, turns
from tests.helpers.cli import run_companion
from tests.helpers.files import file_tree

PAGE = Path(__file__).parents[2] / "docs" / "pipeline.md"
VAULT = "~/Vault"
AFTER = " (after the run)"
EXAMPLE = "## A worked example"
FIGURES = "### What the run did"
SOURCE = "./agents/{agent}/history.jsonl"
FENCE = re.compile(r'^```(?P<lang>[\w-]*)(?:[ \t]+title="(?P<title>[^"]+)")?[ \t]*$')
TIMEOUT = 300


@dataclass(frozen=True)
class Block:
    """One fenced block of the page."""

    lang: str
    title: str | None
    text: str
    first: int
    """The line of its opening fence (0-based)."""
    last: int
    """The line of its closing fence."""


@dataclass(frozen=True)
class Command:
    """One command of the worked example and the output the page shows for it (none when it shows none)."""

    args: list[str]
    output: str | None


def page_lines() -> list[str]:
    return PAGE.read_text(encoding="utf-8").splitlines()


def blocks(lines: list[str], start: int = 0, end: int | None = None) -> list[Block]:
    """The fenced blocks opening at the left margin between lines `start` and `end`."""
    found: list[Block] = []
    i, stop = start, len(lines) if end is None else end
    while i < stop:
        match = FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        close = next(j for j in range(i + 1, len(lines)) if lines[j] == "```")
        text = "".join(line + "\n" for line in lines[i + 1 : close])
        found.append(Block(match.group("lang"), match.group("title"), text, i, close))
        i = close + 1
    return found


def section(lines: list[str], heading: str) -> tuple[int, int]:
    """The lines of the section under `heading`, up to the next heading of the same or a higher level."""
    start = lines.index(heading)
    level = heading.split(" ")[0]
    fenced = {i for b in blocks(lines) for i in range(b.first, b.last + 1)}  # a `# Title` in a note is no heading
    ends = [i for i in range(start + 1, len(lines)) if i not in fenced and re.match(rf"#{{1,{len(level)}}} ", lines[i])]
    return start, ends[0] if ends else len(lines)


def vault_files(lines: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The files the page's titled blocks hold before the run, and what it says some hold after it, by path."""
    before: dict[str, str] = {}
    after: dict[str, str] = {}
    for block in blocks(lines):
        if block.title is None:
            continue
        into, path = (after, block.title.removesuffix(AFTER)) if block.title.endswith(AFTER) else (before, block.title)
        assert path not in into, f"two blocks of the page are titled {block.title!r}"
        assert not path.startswith(("/", "~")) and ".." not in path.split("/"), f"{path!r} is not vault-relative"
        into[path] = block.text
    return before, after


def commands(lines: list[str]) -> list[Command]:
    """The worked example's commands, in order, each with the output the page shows right after it."""
    start, end = section(lines, EXAMPLE)
    found = blocks(lines, start, end)
    out: list[Command] = []
    for n, block in enumerate(found):
        if block.lang != "sh":
            continue
        given = [line for line in block.text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        following = found[n + 1] if n + 1 < len(found) else None
        shown = None
        if (
            following is not None
            and following.lang == "text"
            and all(not line.strip() for line in lines[block.last + 1 : following.first])
        ):
            shown = following.text
        assert shown is None or len(given) == 1, "an output block must follow a block of one command"
        for line in given:
            args = shlex.split(line)
            assert args[0] == "companion", f"the example's commands are companion commands: {line!r}"
            out.append(Command(args[1:], shown))
    assert out, "the worked example gives no command"
    return out


def figures(lines: list[str]) -> dict[str, tuple[int, list[str]]]:
    """The "What the run did" table: per row, its count and the ids it names."""
    start, end = section(lines, FIGURES)
    rows = [line for line in lines[start:end] if line.startswith("| ")][2:]  # the header and its rule left out
    table: dict[str, tuple[int, list[str]]] = {}
    for row in rows:
        label, count, ids = (cell.strip() for cell in row.strip("|").split("|"))
        table[label] = (int(count), [i.strip() for i in ids.split(",") if i.strip()])
    assert table, "the page states no figures"
    return table


def text_block_holding(lines: list[str], words: str) -> str:
    """The one `text` block of the page holding `words`."""
    (block,) = [b for b in blocks(lines) if b.lang == "text" and words in b.text]
    return block.text


@dataclass
class Example:
    """A vault made of the page's files, and how to run the page's commands in it."""

    vault: Path
    data: Path
    lines: list[str]

    def args(self, given: list[str], *extra: str) -> list[str]:
        return [str(self.vault) if arg == VAULT else arg for arg in given] + list(extra)

    def run(self, given: list[str], *extra: str, code: int = 0) -> tuple[str, str]:
        """Run a page's command (with `extra` options added); return its stdout and stderr, with the vault's path
        shown as on the page (`~/Vault`) unless the output is JSON."""
        done = run_companion(*self.args(given, *extra), timeout=TIMEOUT)
        assert done.returncode == code, done.stderr
        if "--json" in extra:
            return done.stdout, done.stderr
        return self.shown(done.stdout), self.shown(done.stderr)

    def shown(self, text: str) -> str:
        for path in {str(self.vault.resolve()), str(self.vault)}:
            text = text.replace(path, VAULT)
        return text

    def command(self, *flags: str, without: str | None = None) -> Command:
        """The page's one command that has every flag of `flags` (and not `without`)."""
        (found,) = [
            c
            for c in commands(self.lines)
            if all(f in c.args for f in flags) and (without is None or without not in c.args)
        ]
        return found


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Example:
    """The page's vault: every titled block written at its path (a `.obsidian` folder too, as in Obsidian)."""
    for name in ("AGENT_VAULT_AUTO_WRITE", "AGENT_VAULT_DEDUPE", "AGENT_VAULT_PATH"):
        monkeypatch.delenv(name, raising=False)
    data = tmp_path / "data"
    # The summary's `updated` is the run's moment in local time: the page shows it in UTC.
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("COMPANION_DATA_DIR", str(data))
    vault = tmp_path / "Vault"
    (vault / ".obsidian").mkdir(parents=True)
    lines = page_lines()
    before, _ = vault_files(lines)
    for path, text in before.items():
        target = vault / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return Example(vault, data, lines)


def log_lines(text: str) -> dict[str, str]:
    """A log's lines by entry id."""
    return {parse_entry(line.encode()).id: line for line in text.splitlines() if line.strip()}


def the_log(example: Example) -> str:
    before, _ = vault_files(example.lines)
    (path,) = [p for p in before if p.endswith("history.jsonl")]
    return path


def check_figures(example: Example, report: dict[str, Any], *, after_run: bool) -> None:
    """The page's table against one agent's `--json` report (and, after a real run, against the files)."""
    (embed,) = report["embeds"]
    read = log_lines(vault_files(example.lines)[0][the_log(example)])
    counts = {
        "read": report["entries"],
        "dropped from the log": len(report["dropped"]),
        "archived": sum(a["entries"] for a in report["archives"]),
        "redacted": len(report["replaced"]),
        "kept in the log": report["kept"],
        "written into history notes": embed["entries"],
        "left out of history notes as status replies": embed["status_left_out"],
    }
    ids: dict[str, list[str]] = {
        "read": list(read),
        "dropped from the log": report["dropped"],
        "redacted": report["replaced"],
    }
    if after_run:
        (archive,) = report["archives"]
        ids["archived"] = list(log_lines(lzma.decompress(Path(archive["path"]).read_bytes()).decode()))
        ids["kept in the log"] = list(log_lines((example.vault / the_log(example)).read_text(encoding="utf-8")))
        notes = "".join(p.read_text(encoding="utf-8") for p in sorted(example.vault.rglob("*.md")))
        ids["written into history notes"] = [i for i in read if f" · {entry_key(SOURCE, i)}\n" in notes]
        ids["left out of history notes as status replies"] = [
            i for i in read if i not in ids["written into history notes"]
        ]
    table = figures(example.lines)
    assert set(table) == set(counts), "the page's table has rows this test does not know, or lacks some"
    for label, (count, named) in table.items():
        assert counts[label] == count, f"the page says {label}: {count}; the run says {counts[label]}"
        if label in ids:
            assert ids[label] == named, f"the page names {named} for {label!r}; the run says {ids[label]}"


def written_paths(output: str) -> set[str]:
    """The vault files a run's output (as the page shows it) says it writes, vault-relative."""
    found = re.findall(re.escape(VAULT) + r"/(.+?\.(?:md|jsonl\.xz))(?: \(|$)", output, flags=re.MULTILINE)
    return {path for path in found if not path.endswith("history.jsonl")}


def changed(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}


# -- the examples are ones the program accepts ----------------------------------------------------------------------


def test_every_config_and_entry_the_page_shows_is_valid(tmp_path: Path) -> None:
    lines = page_lines()
    shown = blocks(lines)
    configs = [b for b in shown if b.lang == "yaml"]
    assert configs
    for block in configs:
        parse_config(block.text, f"{PAGE.name}, the block at line {block.first + 1}")
    entries = [parse_entry(line.encode()) for b in shown if b.lang == "json" for line in b.text.splitlines()]
    assert len(entries) >= 4
    for entry in entries:
        # Only the turns reach the notes: no metadata (model, tokens...) is taken for something said.
        assert {speaker for speaker, _ in turns(entry.data)} <= {"user", "assistant"}, entry.id
    (recorder,) = [b for b in shown if b.lang == "python"]
    space: dict[str, Any] = {}
    exec(compile(recorder.text, str(PAGE), "exec"), space)
    log = tmp_path / "history.jsonl"
    for entry in entries[:2]:
        space["record"](log, entry.data)
    assert [parse_entry(line).data for line in log.read_bytes().splitlines()] == [e.data for e in entries[:2]]


def test_the_time_zones_the_page_describes() -> None:
    lines = page_lines()
    start = next(i for i, line in enumerate(lines) if line.startswith("**`ts` and time zones.**"))
    rows = [line for line in lines[start : start + 20] if line.startswith("| `")][1:]  # the header left out
    assert len(rows) >= 5
    for row in rows:
        cell, read_as = (c.strip() for c in row.strip("|").split("|"))
        value: Any = cell.split("`")[1]
        if "(a number)" in cell:
            value = int(value)
        raw = json.dumps({"id": "x", "ts": value, "agent": "assistant"}).encode()
        if "a bad line" in read_as:
            with pytest.raises(ValueError):
                parse_entry(raw)
        else:
            assert parse_entry(raw).ts.tzinfo is not None, row
    text = PAGE.read_text(encoding="utf-8")
    claim = "`2026-03-09T23:30:00-05:00` goes into the history note of 9 March, under the\nheading `23:30:00`"
    assert claim in text
    entry = parse_entry(b'{"id": "x", "ts": "2026-03-09T23:30:00-05:00", "agent": "assistant"}')
    assert entry.ts.date().isoformat() == "2026-03-09"
    assert render_entry(entry, "0123456789", 2000).startswith("## 23:30:00 · ")
    assert datetime(2026, 3, 10, 4, 30, tzinfo=UTC) == entry.ts  # ages compare moments, not the written times


# -- the worked example, without the embedding model ----------------------------------------------------------------


def test_the_dry_run_prints_what_the_page_shows_and_writes_nothing(example: Example, tmp_path: Path) -> None:
    dry = example.command("--dry-run")
    assert dry.output is not None
    before = file_tree(tmp_path)
    out, _ = example.run(dry.args)
    assert out == dry.output
    out, _ = example.run(dry.args, "--json")
    (report,) = json.loads(out)["agents"]
    assert report["dry_run"] is True
    check_figures(example, report, after_run=False)
    assert file_tree(tmp_path) == before
    assert not example.data.exists()


def test_the_run_writes_what_the_page_shows(example: Example) -> None:
    run = example.command("process", without="--dry-run")
    assert run.output is not None
    before, after = vault_files(example.lines)
    start = file_tree(example.vault)
    out, _ = example.run(run.args, "--no-index", "--json")
    data = json.loads(out)
    assert data["indexed"] is None
    (report,) = data["agents"]
    assert report["warnings"] == [] and report["problems"] == []
    check_figures(example, report, after_run=True)

    files = file_tree(example.vault)
    for path, text in after.items():
        assert files[path].decode("utf-8") == text, f"{path} after the run is not what the page shows"
    assert changed(start, files) == written_paths(run.output) | {the_log(example)}

    # The entries the log keeps unredacted are the agent's own bytes; the archive holds the dropped ones as written.
    given, kept = log_lines(before[the_log(example)]), log_lines(after[the_log(example)])
    for entry_id in set(kept) - set(report["replaced"]):
        assert kept[entry_id] == given[entry_id]
    (archive,) = report["archives"]
    archived = lzma.decompress(Path(archive["path"]).read_bytes()).decode()
    assert archived == "".join(given[i] + "\n" for i in report["dropped"])

    # Run again: only the summary changes, now covering what the log holds.
    again, _ = example.run(run.args, "--no-index", "--json")
    (second,) = json.loads(again)["agents"]
    covered = re.search(r"now covers the (\d+) entries left in the log", PAGE.read_text(encoding="utf-8"))
    assert covered is not None
    (summary,) = second["summaries"]
    assert summary["entries"] == int(covered.group(1)) == second["kept"]
    summaries = {p for p in after if "Summaries" in p}
    assert changed(files, file_tree(example.vault)) == summaries

    search = example.command("archives", "search")
    assert search.output is not None
    out, _ = example.run(search.args)
    assert out == search.output


def test_the_messages_the_page_quotes(example: Example) -> None:
    dry = example.command("--dry-run")
    log_path = example.vault / the_log(example)
    original = log_path.read_text(encoding="utf-8")

    # A bad line: the warning the page shows, for a `ts` without a time zone on the line it names.
    warning = text_block_holding(example.lines, "has no time zone").strip()
    shown = re.search(r"line (\d+): 'ts' '([^']+)'", warning)
    assert shown is not None
    number, ts = int(shown.group(1)), shown.group(2)
    lines = original.splitlines()
    bad = json.loads(lines[number - 1])
    bad["ts"] = ts
    lines[number - 1] = json.dumps(bad)
    log_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, _ = example.run(dry.args)
    assert warning in out.splitlines()[-1]
    log_path.write_text(original, encoding="utf-8")

    # A list that drops with nothing to archive is refused, naming the file and what to do.
    refusal = text_block_holding(example.lines, "has no archive processor").strip()
    config = example.vault / ".companion" / "companion.yaml"
    text = config.read_text(encoding="utf-8")
    archive = "    - type: archive\n      destination: ./cold-storage\n"
    assert archive in text
    config.write_text(text.replace(archive, ""), encoding="utf-8")
    before = file_tree(example.vault)
    _, err = example.run(example.command("process", without="--dry-run").args, code=2)
    assert err.strip() == refusal
    assert file_tree(example.vault) == before


# -- the whole example, as a user runs it ---------------------------------------------------------------------------


@pytest.mark.model
def test_the_whole_example_as_a_user_runs_it(example: Example) -> None:
    """Every command in the page's order, as written: the run indexes its history notes with the real model, and
    recall finds the entry the log no longer holds."""
    first = re.search(r"The first result is `([^`]+)`", PAGE.read_text(encoding="utf-8"))
    assert first is not None
    for command in commands(example.lines):
        if command.args[0] == "recall":
            out, _ = example.run(command.args, "--json")
            assert json.loads(out)["results"][0]["path"] == first.group(1)
            continue
        out, _ = example.run(command.args)
        if command.output is not None:
            assert out == command.output, f"`companion {' '.join(command.args)}` printed:\n{out}"
