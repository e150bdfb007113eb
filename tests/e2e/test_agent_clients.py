"""The README's agent set-up run as written with the real agent programs: Claude Code's `claude mcp add` followed by
its own health check, and Codex CLI's `codex mcp add` followed by a session that starts the server, initialises it and
lists its tools. Each runs in a home of its own, so a user's configuration is never read or written.

The programs come from the npm registry (CI installs them into `.clients/`); where they are missing the tests are
skipped and say so. Neither needs an account for this: Claude Code's health check only connects, and Codex starts its
MCP servers before it asks a model anything (no key reaches it, and its endpoint is a closed local port, so its
session is stopped once the tools are listed)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPANION = Path(sys.executable).parent / "companion"
CLIENTS = ROOT / ".clients" / "node_modules" / ".bin"


def _client(name: str) -> str:
    # The pinned programs CI installs first; another version on the PATH only where they are not installed.
    found = shutil.which(name, path=str(CLIENTS)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (npm install --prefix .clients, as CI does)")
    return found


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "Vault"
    root.mkdir()
    (root / "Boiler.md").write_text("The boiler rattles when it starts; the plumber comes on Tuesday.\n")
    return root


def _env(home: Path, *first_on_path: Path) -> dict[str, str]:
    """A user's environment with a home of its own and the companion on the PATH, as after activating the venv."""
    # No key or endpoint of a real model reaches the clients: on a machine that has them, Codex would ask one.
    private = ("COMPANION_", "CODEX_", "CLAUDE_", "OPENAI_", "ANTHROPIC_", "AZURE_OPENAI_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(private) and not k.endswith("_API_KEY")}
    env.update(
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        PATH=os.pathsep.join([*map(str, first_on_path), str(COMPANION.parent), env.get("PATH", "")]),
        # Nothing but the server is needed: no update checks or telemetry from a machine with no network.
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    return env


def _run(command: list[str], env: dict[str, str], cwd: Path) -> str:
    # In a process group of its own, so a timeout ends the servers it started too.
    process = subprocess.Popen(
        command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = process.communicate(timeout=180)
    finally:
        _end(process)
    assert process.returncode == 0, f"{command[:3]} failed ({process.returncode}):\n{out}\n{err}"
    return out + err


def _end(process: subprocess.Popen[str]) -> None:
    """End a client's whole process group (it, the servers it started, their pipes), politely then not."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue


def _listed(output: str) -> str:
    """The line a client's server list gives ours."""
    return next((line for line in output.splitlines() if line.startswith("vault-companion")), "")


def test_claude_code_connects_with_the_readme_command(tmp_path: Path, vault: Path) -> None:
    claude = _client("claude")
    home = tmp_path / "home"
    home.mkdir()
    env = _env(home)
    # The README's line, with this test's vault for ~/Vault.
    _run([claude, "mcp", "add", "vault-companion", "--", "companion", "mcp", "--vault", str(vault)], env, tmp_path)
    listed = _run([claude, "mcp", "list"], env, tmp_path)
    assert "Connected" in _listed(listed) and "Failed" not in _listed(listed), listed


def test_claude_code_connects_with_the_whole_path_after_make_run(tmp_path: Path, vault: Path) -> None:
    """The README's form for a checkout that was not activated: the program's whole path, nothing on the PATH."""
    claude = _client("claude")
    home = tmp_path / "home"
    home.mkdir()
    env = _env(home)
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if Path(p) != COMPANION.parent)
    _run([claude, "mcp", "add", "vault-companion", "--", str(COMPANION), "mcp", "--vault", str(vault)], env, tmp_path)
    listed = _run([claude, "mcp", "list"], env, tmp_path)
    assert "Connected" in _listed(listed), listed


def _documented_configs() -> dict[str, dict[str, object]]:
    """The client configuration files the agents page shows, by the comment naming each client."""
    page = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    block = page.split("```json\n", 1)[1].split("```", 1)[0]
    configs: dict[str, dict[str, object]] = {}
    name, lines = "", []
    for line in [*block.splitlines(), "// end"]:
        if line.startswith("//"):
            if name and "".join(lines).strip():
                configs[name] = json.loads("".join(lines))
            name, lines = line[2:].split(":", 1)[0].strip(), []
        else:
            lines.append(line)
    return configs


def test_every_documented_client_file_connects(tmp_path: Path, vault: Path) -> None:
    """Claude Desktop's and Cursor's files have the form of Claude Code's `.mcp.json`: each, as the agents page
    shows it (its vault and its placeholder path made real), is loaded by Claude Code, which connects to the server."""
    claude = _client("claude")
    configs = _documented_configs()
    assert set(configs) == {"Claude Code", "Claude Desktop", "Cursor"}, configs
    for client, config in configs.items():
        home = tmp_path / client.replace(" ", "-") / "home"
        project = home.parent / "project"
        (home / ".claude").mkdir(parents=True)
        project.mkdir()
        # A project's servers wait for the user's approval in an interactive session; this setting gives it.
        (home / ".claude" / "settings.json").write_text('{"enableAllProjectMcpServers": true}')
        text = (
            json.dumps(config)
            .replace("/home/me/Vault", str(vault))
            .replace("/path/to/.venv/bin/companion", str(COMPANION))
        )
        (project / ".mcp.json").write_text(text)
        listed = _run([claude, "mcp", "list"], _env(home), project)
        assert "Connected" in _listed(listed), f"{client}: {listed}"


def test_codex_starts_the_server_and_lists_its_tools(tmp_path: Path, vault: Path) -> None:
    codex = _client("codex")
    home = tmp_path / "home"
    home.mkdir()
    # A `companion` first on the PATH that keeps what the server answers, then runs the real one: the command Codex
    # is given is the README's, word for word.
    shim = tmp_path / "shim"
    shim.mkdir()
    answers = tmp_path / "answers.jsonl"
    (shim / "companion").write_text(f'#!/bin/sh\n"{COMPANION}" "$@" | tee -a "{answers}"\n')
    (shim / "companion").chmod(0o755)
    env = _env(home, shim)
    _run([codex, "mcp", "add", "vault-companion", "--", "companion", "mcp", "--vault", str(vault)], env, tmp_path)
    config = (home / ".codex" / "config.toml").read_text()
    assert "[mcp_servers.vault-companion]" in config and 'command = "companion"' in config

    session = subprocess.Popen(
        [codex, "exec", "--skip-git-repo-check", "What is in my vault?"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    tools: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while not tools and time.monotonic() < deadline and session.poll() is None:
            time.sleep(0.5)
            tools = _listed_tools(answers)
    finally:
        _end(session)
    assert {"vault_search", "vault_read", "context", "recall_recent"} <= set(tools), answers.read_text()[:2000]


def _listed_tools(answers: Path) -> list[str]:
    """The tool names in the server's answer to `tools/list`, once it has been written whole."""
    if not answers.exists():
        return []
    for line in answers.read_text().splitlines():
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        result = message.get("result") if isinstance(message, dict) else None
        if isinstance(result, dict) and isinstance(result.get("tools"), list):
            return [tool["name"] for tool in result["tools"]]
    return []
