"""A planted-secrets corpus through the real `companion index`, `companion process` (every processor at work) and
everything an agent is shown: every kind the redactor knows, in ordinary notes, session notes and a history log,
plain and JSON-escaped. Afterwards no file the companion wrote (the data dir with its SQLite and Chroma files and
audit copies, the log, the xz archives, the sinks, the derived notes) and no file or folder name holds any of them,
and neither does any answer: `recall`, `vault`, `context` and `recent` as text and JSON, and every MCP tool,
resource and prompt through a real client session. Only the user's own notes keep what they say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from companion.cli import main
from companion.mcp_server.server import CompanionServer
from companion.workspace import Workspace
from tests.helpers.cli import run_companion
from tests.helpers.files import write
from tests.helpers.history import Hook
from tests.helpers.secretcorpus import (
    AWS_NAMED,
    ESCAPED_WORD,
    HEADING_SECRET,
    LOG_WORD,
    NOTE_WORD,
    NOW,
    SESSION_WORD,
    config,
    history_log,
    holding,
    leaks,
    readable,
    session_notes,
    user_notes,
)

QUESTIONS = ("password PIN passcode", "IBAN card key token", NOTE_WORD, ESCAPED_WORD, SESSION_WORD, LOG_WORD)
"""What an agent asks: words beside every secret, and the planted words of each kind of note."""


def cli_answers(vault: Path, data: Path, batch: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, bytes]:
    """What `recall`, `vault`, `context` and `recent` print, by command line (run in this process: they only
    read)."""
    where = ["--vault", str(vault), "--data-dir", str(data), "--no-sync"]
    batch.write_text("".join(json.dumps({"id": q, "query": q}) + "\n" for q in QUESTIONS), encoding="utf-8")
    as_of = ["--as-of", NOW.isoformat()]
    commands = [
        ["recall", "--batch", str(batch), *where],
        ["recall", QUESTIONS[0], "--json", *as_of, *where],
        ["recall", QUESTIONS[1], "--explain", *as_of, *where],
        ["context", QUESTIONS[0], "--json", *as_of, *where],
        ["recent", "--json", "--hours", "200", *as_of, *where],
        ["vault", "search", QUESTIONS[1], "--json", *where],
        ["vault", "read", "Notes/Chat export.md", *where],
    ]
    out: dict[str, bytes] = {}
    for args in commands:
        capsys.readouterr()
        code = main(args)
        printed = capsys.readouterr()
        assert code == 0, (args, printed.err)
        out[" ".join(args[:2])] = (printed.out + printed.err).lower().encode("utf-8")
    return out


def mcp_answers(vault: Path, data: Path) -> dict[str, bytes]:
    """What every MCP tool, resource and prompt answers an agent, by call."""
    out: dict[str, bytes] = {}

    def keep(name: str, result: Any) -> None:
        out[name] = json.dumps(result, ensure_ascii=False, default=_plain).lower().encode("utf-8")

    async def session(client: Client) -> None:
        for query in QUESTIONS:
            found = await client.call_tool("vault_search", {"query": query, "k": 20, "as_of": NOW.isoformat()})
            keep(f"vault_search {query}", found.content)
            keep(f"recall_relevant {query}", (await client.call_tool("recall_relevant", {"query": query})).content)
            keep(f"context {query}", (await client.call_tool("context", {"message": query})).structured_content)
            lexical = await client.call_tool("memory_query", {"mode": "lexical", "query": query})
            keep(f"memory_query {query}", lexical.structured_content)
            keep(f"prompt recall {query}", (await client.get_prompt("recall", {"topic": query})).messages)
        keep("recall_recent", (await client.call_tool("recall_recent", {"hours": 24 * 3650})).structured_content)
        keep("timeline", (await client.call_tool("timeline", {"date": f"{NOW:%Y-%m-%d}", "days": 10})).content)
        keep("vault_list", (await client.call_tool("vault_list", {})).structured_content)
        keep("prompt recap", (await client.get_prompt("recap", {"days": "90"})).messages)
        listed = (await client.list_resources()).resources
        keep("resources", listed)
        for resource in listed:
            path = resource.name
            for tool in ("vault_read", "vault_links", "vault_graph"):
                keep(f"{tool} {path}", (await client.call_tool(tool, {"note": path})).content)
            keep(f"resource {path}", (await client.read_resource(str(resource.uri))).contents)
            keep(f"exact {path}", (await client.call_tool("memory_query", {"mode": "exact", "query": path})).content)

    ws = Workspace.open(vault, data_dir=data)
    companion = CompanionServer(lambda: ws)

    async def main() -> None:
        async with Client(companion.server) as client:
            await session(client)

    try:
        anyio.run(main)
    finally:
        companion.close()
    return out


def _plain(value: Any) -> Any:
    """A protocol object (a result's content, a prompt's message, a resource) as its JSON."""
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else str(value)


def test_no_planted_secret_survives_processing_and_indexing_or_reaches_an_agent(
    tmp_path: Path, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    vault, data, sink = tmp_path / "vault", tmp_path / "data", tmp_path / "sink"
    write(vault, ".companion/companion.yaml", config(hook.url, sink))
    notes = user_notes(vault)
    sessions = session_notes(vault)
    log = history_log(vault)
    where = ["--vault", str(vault), "--data-dir", str(data)]

    # Indexed before processing too, while the session notes still hold their secrets, and once more after.
    for args in (["index", *where], ["process", *where, "--as-of", NOW.isoformat()], ["index", *where]):
        done = run_companion(*args)
        assert done.returncode == 0, done.stderr
    for n, (_headers, body) in enumerate(hook.requests):
        write(tmp_path, f"webhook/{n}.json", body.decode("utf-8"))
    answers = {**cli_answers(vault, data, tmp_path / "questions.jsonl", capsys), **mcp_answers(vault, data)}

    # Everything under the test's folder, file and folder names included, but the user's own notes; the session
    # notes too, which the pipeline's redaction rewrote.
    skip = {p.relative_to(tmp_path).as_posix() for p in notes}
    files = {
        p.relative_to(tmp_path).as_posix(): readable(p) if p.is_file() else b""
        for p in sorted(tmp_path.rglob("*"))
        if p.relative_to(tmp_path).as_posix() not in skip
    }

    # Every place a secret could reach was written, and is read: the planted plain words are found there.
    assert log.is_file() and list((vault / "cold").rglob("*.xz")) and hook.requests
    assert (vault / "Memory/Summaries/sentinel.md").is_file() and (vault / "Memory/Summaries/trader.md").is_file()
    assert list((vault / "Memory/History").rglob("*.md")) and list(data.rglob("audit/blobs/*"))
    extracted = [p.name for p in (vault / "Memory/Extracted").glob("*.md")]
    assert any(name.startswith("Our wifi password is") for name in extracted), extracted
    # Sentences holding a token and an IBAN were made notes, named from them.
    assert any(name.startswith("The rent IBAN is") for name in extracted), extracted
    assert any(name.startswith("The staging cookie is") for name in extracted), extracted
    for word in (NOTE_WORD, ESCAPED_WORD):
        assert {f for f in holding(files, word) if f.startswith("data/")}, f"the user's notes were not indexed: {word}"
    for word in (SESSION_WORD, LOG_WORD):
        found = holding(files, word)
        for place in ("data/", "vault/cold/", "sink/", "webhook/", "vault/Memory/History/", "vault/agents/"):
            if place != "vault/agents/" or word == LOG_WORD:
                assert any(f.startswith(place) for f in found), (word, place)
    assert any(f.startswith("vault/ops/sessions/") for f in holding(files, SESSION_WORD))
    # The answers read every kind of note: the user's, the escaped export, the sessions and the log's history.
    for word in (NOTE_WORD, ESCAPED_WORD, SESSION_WORD, LOG_WORD):
        assert {a for a in holding(answers, word) if a.startswith("vault_read")}, word
        assert {a for a in holding(answers, word) if a.startswith("recall")}, word

    assert leaks(files) == {}
    assert leaks(answers) == {}
    assert (
        holding(answers, "Rotate it soon")
        and holding(answers, "[REDACTED:jwt]")
        and holding(answers, "[REDACTED:iban]")
    )
    # The user's notes are theirs: the index never rewrites them.
    assert all(secret in notes[0].read_text(encoding="utf-8") for secret in (AWS_NAMED, HEADING_SECRET))
    assert sessions[1].is_file()  # kept, and read above as the pipeline rewrote it
