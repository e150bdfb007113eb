"""`companion fusion show | train`: the learned fusion's weights, and fitting them anew from evaluation sets.

`companion eval QUESTIONS --features OUT.jsonl` writes what training reads: each question's candidates with their
features and whether each answers it. Each file is one evaluation set (its name is the file's stem), and each set
weighs the same in the fit. Questions kept for judging the result must never be among the files trained on.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path
from typing import Any

from companion.atomic import write_atomic
from companion.cli.output import print_json
from companion.errors import ConfigError
from companion.recall.fusion import FEATURES, QUESTION_FEATURES, FusionModel, default_model
from companion.recall.fusion_fit import Judged, calibrate, fit, ranking_scores


def register(sub: Any) -> None:
    """Add the `fusion` subcommand."""
    p = sub.add_parser("fusion", help="show the learned fusion's weights, or fit them anew from evaluation sets")
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    show = verbs.add_parser("show", help="the weights recall uses (the shipped ones, or --weights FILE)")
    show.add_argument("--weights", metavar="FILE", help="a weights file to show instead of the shipped one")
    show.add_argument(
        "--multilingual", action="store_true", help="the weights shipped for the multilingual embedding model"
    )
    show.add_argument("--json", action="store_true", help="print one JSON object")
    show.set_defaults(run=run_show)
    train = verbs.add_parser(
        "train", help="fit the weights from `companion eval --features` files (one file per evaluation set)"
    )
    train.add_argument("features", nargs="+", metavar="FEATURES.jsonl", help="files written by eval --features")
    train.add_argument(
        "--out",
        metavar="FILE",
        required=True,
        help="where to write the weights (point the config's recall.fusion_weights at it to use them)",
    )
    train.add_argument(
        "--keep-ranking",
        metavar="FILE",
        help="keep these weights (a weights file, `shipped`, or `shipped-multilingual`) for the features that order a "
        "question's notes and fit only those that say whether any is a match (the question's words no note holds, "
        "how far the nearest note stands out when they are unknown, how far the vault's nearest chunk lies)",
    )
    train.add_argument(
        "--fit",
        action="append",
        metavar="FEATURE",
        choices=QUESTION_FEATURES,
        help="with --keep-ranking: fit only this one of the question's own features, keeping the others' weights "
        "too (repeat it for more; a new feature can then be fitted without moving what the others learned)",
    )
    train.add_argument(
        "--dense-span",
        type=float,
        metavar="SPAN",
        help="the dense span the features were written with (else the one `eval --features` recorded in them), kept "
        "with the weights: they then scale the dense side so whatever the recall.dense_span setting says",
    )
    train.add_argument("--json", action="store_true", help="print one JSON object")
    train.set_defaults(run=run_train)


def run_show(args: argparse.Namespace) -> int:
    """Print the weights, largest first."""
    if args.weights and args.multilingual:
        raise ConfigError("--multilingual shows the shipped weights; with --weights FILE, the file's are shown")
    model = _read(Path(args.weights)) if args.weights else default_model(args.multilingual)
    if args.json:
        print_json(model.to_json())
        return 0
    print(f"learned fusion, fitted on {', '.join(model.trained_on) or 'nothing'}")
    for name, weight in sorted(zip(model.names, model.weights, strict=True), key=lambda p: -abs(p[1])):
        print(f"  {name:<16}{weight:+8.3f}")
    print(f"  {'bias':<16}{model.bias:+8.3f}")
    if model.dense_span is not None:
        print(f"  dense side scaled over a span of {model.dense_span:g} (instead of recall.dense_span)")
    return 0


def run_train(args: argparse.Namespace) -> int:
    """Fit, write atomically, and say how often each set's best candidate is an answer."""
    if args.fit and not args.keep_ranking:
        raise ConfigError("--fit chooses among the question's own features: it needs --keep-ranking")
    questions = [q for name in args.features for q in load_features(Path(name))]
    span = _dense_span(args)
    try:
        if args.keep_ranking:
            shipped = {"shipped": False, "shipped-multilingual": True}
            if args.keep_ranking in shipped:
                kept = default_model(shipped[args.keep_ranking])
            else:
                kept = _read(Path(args.keep_ranking))
            model = calibrate(kept, questions, only=args.fit or QUESTION_FEATURES)
        else:
            model = fit(questions, dense_span=span)
    except ValueError as exc:
        raise ConfigError(f"nothing to learn from: {exc}") from exc
    out = Path(args.out)
    _write_atomically(out, json.dumps(model.to_json(), indent=2) + "\n")
    first = ranking_scores(model, questions)
    if args.json:
        print_json({"weights": model.to_json(), "first_is_an_answer": first, "out": str(out)})
        return 0
    print(f"fitted on {len(questions)} questions; weights written to {out}")
    for source, share in sorted(first.items()):
        print(f"  {source}: an answer first for {share:.3f} of its answerable questions")
    return 0


def _dense_span(args: argparse.Namespace) -> float | None:
    """The span the features' dense side was scaled over: `--dense-span`, else the one the files record (files
    written before spans were recorded record none); a ConfigError when they disagree or it is out of range."""
    recorded = {span for name in args.features for span in recorded_spans(Path(name))}
    if args.dense_span is not None:
        if args.keep_ranking:
            raise ConfigError("--dense-span fits the ranking weights: with --keep-ranking the kept weights' span stays")
        if not 0.0 < args.dense_span <= 2.0:
            raise ConfigError(f"--dense-span {args.dense_span:g}: a span is above 0 and at most 2")
        if recorded - {args.dense_span}:
            raise ConfigError(
                f"--dense-span {args.dense_span:g}, but the features were written with "
                f"{', '.join(f'{s:g}' for s in sorted(recorded))}: write them again, or drop --dense-span"
            )
        return float(args.dense_span)
    if len(recorded) > 1:
        raise ConfigError(
            f"the features were written with different dense spans ({', '.join(f'{s:g}' for s in sorted(recorded))}): "
            "write them again with one"
        )
    return recorded.pop() if recorded and not args.keep_ranking else None


def recorded_spans(path: Path) -> set[float]:
    """The dense spans an `eval --features` file says its features were scaled over (none in older files)."""
    spans: set[float] = set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the features ({exc})") from exc
    for line in lines:
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            span = json.loads(line).get("dense_span")
            if span is not None:
                spans.add(float(span))
    return spans


def load_features(path: Path) -> list[Judged]:
    """Read one `eval --features` file as training questions named after the file; a ConfigError names a bad
    line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the features ({exc})") from exc
    out: list[Judged] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            candidates = data["candidates"]
            vectors = tuple(tuple(float(x) for x in c["features"]) for c in candidates)
            answers = tuple(bool(c["answer"]) for c in candidates)
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{path}:{number}: not a line of `companion eval --features` ({exc})") from exc
        if any(len(v) != len(FEATURES) for v in vectors):
            raise ConfigError(f"{path}:{number}: the features are not this version's; write them again")
        out.append(Judged(path.stem, vectors, answers, data.get("label") != "unanswerable"))
    if not out:
        raise ConfigError(f"{path}: no questions")
    return out


def _read(path: Path) -> FusionModel:
    try:
        return FusionModel.read(path)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


def _write_atomically(path: Path, text: str) -> None:
    try:
        write_atomic(path.resolve(), text.encode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the weights ({exc.strerror or exc})") from exc
