"""The companion installed as any Python tool is: a wheel built from this checkout, installed into a new virtual
environment from the package index (pip, and pipx or uv where they are on the machine), then `companion setup`,
`companion demo` and a `recall`, each as a user types them. Nothing of this checkout's environment is reused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from companion.embedding.weights import index_url

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[2]


def _run(command: list[str], env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, (
        f"{command[:3]} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done


@pytest.fixture(scope="module", autouse=True)
def _index_reachable() -> None:
    """These tests install from the package index: on a machine without it they are skipped, and say why."""
    index = index_url()
    try:
        httpx.get(f"{index}/pip/", timeout=20, follow_redirects=True).raise_for_status()
    except httpx.HTTPError as exc:
        pytest.skip(f"the package index at {index} is not reachable ({exc})")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheelhouse")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(ROOT)], dict(os.environ))
    (built,) = out.glob("vault_companion-*.whl")
    return built


def _user_env(home: Path) -> dict[str, str]:
    """A user's environment: a home of its own (so the model cache and the data are new), no variable of ours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPANION_", "VIRTUAL_ENV", "AGENT_"))}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / ".local" / "share"), PYTHONNOUSERSITE="1")
    return env


SPANISH = {
    "Caldera.md": "La caldera hace un ruido extraño cuando arranca; el técnico vendrá el martes por la tarde.\n",
    "Gazpacho.md": "El gazpacho lleva tomates maduros, pepino, pimiento y aceite de oliva; se sirve muy frío.\n",
    "Granada.md": "En Granada visitamos la Alhambra por la mañana y cenamos tapas en el Albaicín.\n",
}


def _use(companion: Path, env: dict[str, str], home: Path) -> None:
    """What a new user does first: recall before setup (told what to run), setup, the demo, a recall."""
    (home / "notes").mkdir(exist_ok=True)
    (home / "notes" / "Boiler.md").write_text("The boiler pressure should read 1.5 bar.\n", encoding="utf-8")
    first = subprocess.run(
        [str(companion), "recall", "boiler pressure", "--vault", str(home / "notes"), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # Before setup, the first run names the one step to take, in JSON for --json.
    assert first.returncode == 3, first.stderr
    assert "run `companion setup`" in json.loads(first.stdout)["error"]
    setup = json.loads(_run([str(companion), "setup", "--json"], env).stdout)
    assert [w["source"] for w in setup["weights"]] == ["downloaded", "downloaded"]  # English and multilingual
    assert Path(setup["models"][0]["path"]).is_relative_to(home)
    demo = _run([str(companion), "demo", "--no-tui"], env)
    assert "recall" in demo.stdout
    vault = home / ".local" / "share" / "vault-companion" / "demo-vault"
    found = json.loads(_run([str(companion), "recall", "kitchen budget", "--vault", str(vault), "--json"], env).stdout)
    assert any("Kitchen" in r["path"] for r in found["results"][:3])
    notes = json.loads(_run([str(companion), "recall", "boiler", "--vault", str(home / "notes"), "--json"], env).stdout)
    assert notes["results"][0]["path"] == "Boiler.md"
    # A vault in Spanish gets the multilingual model: an English question finds a Spanish note.
    for name, text in SPANISH.items():
        (home / "notas" / name).parent.mkdir(parents=True, exist_ok=True)
        (home / "notas" / name).write_text(text, encoding="utf-8")
    where = ["--vault", str(home / "notas"), "--json"]
    index = json.loads(_run([str(companion), "index", *where], env).stdout.splitlines()[-1])
    assert index["model"]["id"] == "multilingual-e5-small"
    found = json.loads(_run([str(companion), "recall", "the boiler makes a strange noise", *where], env).stdout)
    assert found["results"][0]["path"] == "Caldera.md"


def test_pip_installs_a_companion_that_sets_itself_up_and_recalls(wheel: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = _user_env(home)
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], env)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)], env)
    _use(venv / "bin" / "companion", env, home)


def _tool(name: str, tmp_path: Path, env: dict[str, str]) -> str:
    """The installer `name`: the machine's own, else one installed from the package index into a venv of its own
    (so the route is tried on every machine CI runs on)."""
    found = shutil.which(name)
    if found is not None:
        return found
    venv = tmp_path / f"{name}-venv"
    _run([sys.executable, "-m", "venv", str(venv)], env)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", name], env)
    return str(venv / "bin" / name)


@pytest.mark.parametrize("tool", ["uv", "pipx"])
def test_a_tool_installer_gives_a_companion_that_sets_itself_up_and_recalls(
    tool: str, wheel: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = _user_env(home)
    program = _tool(tool, tmp_path, env)
    bin_dir = home / ".local" / "bin"
    env.update(UV_TOOL_BIN_DIR=str(bin_dir), UV_TOOL_DIR=str(home / "uv-tools"), PIPX_HOME=str(home / "pipx"))
    env.update(PIPX_BIN_DIR=str(bin_dir), UV_PYTHON=sys.executable)
    command = [program, "tool", "install", str(wheel)] if tool == "uv" else [program, "install", str(wheel)]
    _run(command, env)
    _use(bin_dir / "companion", env, home)


def test_the_checkouts_own_install_prints_no_warning(tmp_path: Path) -> None:
    # `make install` (and so `make run`) installs the checkout in editable mode: whatever it prints, a user must be
    # able to act on. The dependencies are left out: they are the registry's, not this project's, to word.
    env = _user_env(tmp_path)
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], env)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], env)  # as make does
    done = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "-e", str(ROOT)], env)
    assert "warning" not in (done.stdout + done.stderr).casefold(), done.stderr
