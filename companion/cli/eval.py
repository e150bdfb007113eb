"""`companion eval QUESTIONS.jsonl`: measure recall on questions whose evidence notes are known.

Each line: `{"id": str, "query": str, "evidence": [vault paths], "label": str?, "as_of": ISO-8601?,
"where": {field: value}?}`. The companion's ranking (every tier, as `companion recall --batch` returns it) is
scored beside a BM25-only and a dense-only ranking of the same index, within the same scope, in the same run.
Nothing is recorded as accessed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.cli.args import (
    add_vault_arguments,
    json_lines,
    open_workspace,
    sync_first,
)
from companion.cli.output import print_json
from companion.embedding.providers import reads_every_language
from companion.embedding.tokens import TokenCounter
from companion.errors import ConfigError
from companion.recall.access import AccessLog
from companion.recall.assembly import build, used_notes
from companion.recall.engine import Recall
from companion.recall.evaluate import CUTOFFS, PAIRED_METRICS, Judged, Paired, Scores, by_label, paired, score
from companion.recall.scope import Scope, parse_as_of, where_from_mapping
from companion.vault.sessions import local_moment
from companion.words import counted
from companion.workspace import Workspace
from indexer.search import Searcher
from indexer.terms import fts_query

MODES = ("hybrid", "bm25", "dense")
MIN_GROUP = 10
"""The fewest questions a label group needs before `worse_by_label` judges it."""


@dataclass(frozen=True)
class Question:
    """One evaluation question."""

    id: str
    """Its id."""
    query: str
    """The question."""
    evidence: frozenset[str]
    """Vault paths of the notes that hold the answer."""
    label: str
    """Its label, `-` when none."""
    as_of: str | None
    """When it is asked."""
    scope: Scope
    """Its `where`."""


def register(sub: Any) -> None:
    """Add the `eval` subcommand."""
    p = sub.add_parser("eval", help="score recall on questions with known evidence (vs BM25 and dense alone)")
    add_vault_arguments(p)
    p.add_argument("questions", help="JSONL file of questions with their evidence paths")
    p.add_argument("--modes", default=",".join(MODES), help=f"rankings to score (default {','.join(MODES)})")
    p.add_argument("-k", "--k", type=int, default=10, help="results per question (default 10)")
    p.add_argument("--misses", action="store_true", help="list the questions the companion missed at 5")
    p.add_argument("--no-sync", action="store_true", help="use the index as it is")
    p.add_argument(
        "--use",
        metavar="FILE",
        help="first ask FILE's questions and record what an agent would use of their results (the matches its "
        "context includes; on a "
        "scratch copy of the access statistics: nothing persists), then score: how recall drifts with use",
    )
    p.add_argument(
        "--features",
        metavar="OUT.jsonl",
        help="also write each question's candidates with their learned-fusion features and whether each answers "
        "it (what `companion fusion train` reads)",
    )
    p.add_argument(
        "--unanswerable",
        action="store_true",
        help="with --features: the questions belong to another vault, so no note here answers them (their filters "
        "and dates are left out); they teach the fusion what no match looks like",
    )
    p.add_argument(
        "--rankings",
        metavar="OUT.jsonl",
        help="also write each question's ranking (the first mode's) with its evidence, for a later --against",
    )
    p.add_argument(
        "--against",
        metavar="RANKINGS.jsonl",
        help="compare the first mode question by question with rankings an earlier run wrote (--rankings): a change "
        "to recall, or the same questions over another vault; questions are paired by id",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def load_questions(path: str, *, unanswerable: bool = False) -> list[Question]:
    """Read and check a questions file; any bad line is a `ConfigError` naming the file and line. `unanswerable`
    questions may name no evidence (`[]`: questions about things no vault it is asked of holds)."""
    try:
        with open(path, encoding="utf-8") as stream:
            lines = stream.read().splitlines()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the questions ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    out: list[Question] = []
    for number, where, obj in json_lines(lines, path):
        if isinstance(obj, str):
            raise ConfigError(obj)
        if not isinstance(obj.get("query"), str):
            raise ConfigError(f"{where}: expected an object with a `query` string")
        evidence = obj.get("evidence")
        if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
            raise ConfigError(f"{where}: `evidence` must be a list of vault paths")
        if not evidence and not unanswerable:
            raise ConfigError(f"{where}: `evidence` must name at least one vault path (or use --unanswerable)")
        as_of = obj.get("as_of")
        if as_of is not None:
            parse_as_of(str(as_of), f"{where}: as_of")
        out.append(
            Question(
                id=str(obj.get("id", f"line {number}")),
                query=obj["query"],
                evidence=frozenset(evidence),
                label=str(obj.get("label") or "-"),
                as_of=None if as_of is None else str(as_of),
                scope=Scope(where_from_mapping(obj.get("where"), where)),
            )
        )
    if not out:
        raise ConfigError(f"{path}: no questions")
    return out


def run(args: argparse.Namespace) -> int:
    """Rank every question in every mode and print the metrics."""
    if args.k < 1:
        raise ConfigError("--k must be at least 1")
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = sorted(set(modes) - set(MODES))
    if unknown or not modes:
        raise ConfigError(f"--modes: unknown {', '.join(unknown) or 'empty'}; choose from {', '.join(MODES)}")
    if args.unanswerable and not args.features:
        raise ConfigError("--unanswerable only applies with --features")
    questions = load_questions(args.questions, unanswerable=args.unanswerable)
    earlier = read_rankings(args.against) if args.against else {}
    used = load_questions(args.use) if args.use else []
    if args.features:
        return _write_features(args, questions)
    ws = open_workspace(args)
    judged: dict[str, list[Judged]] = {m: [] for m in modes}
    timing: dict[str, float] = dict.fromkeys(modes, 0.0)
    scratch = tempfile.TemporaryDirectory(prefix="companion-eval-") if args.use else None
    scratch_log: AccessLog | None = None
    accesses = 0
    unmatched: list[str] = []  # answerable questions recall said no note matches
    try:
        sync_first(ws, args)
        searcher = ws.searcher()
        searcher.embed_queries([q.query for q in [*used, *questions]])
        if scratch is None:
            engine = ws.recall()
        else:
            scratch_log = _scratch_access(ws, Path(scratch.name))
            engine = Recall(
                ws.searcher(),
                ws.vault,
                ws.config.retention,
                ws.config.recall,
                scratch_log,
                multilingual=reads_every_language(ws.configured_model_id()),
            )
            accesses = _use(engine, used, args.k, ws.config.retention.token_budget)
        for q in questions:
            as_of = parse_as_of(q.as_of)
            scope = q.scope.narrowed(until=local_moment(as_of).date()) if as_of else q.scope
            for mode in modes:
                started = time.perf_counter()
                if mode == "hybrid":
                    context = engine.recall(q.query, k=args.k, as_of=as_of, scope=q.scope)
                    ranked = [i.path for i in context.results]
                    if context.no_good_match:
                        unmatched.append(q.id)
                else:
                    ranked = _baseline(searcher, mode, q.query, args.k, scope)
                timing[mode] += time.perf_counter() - started
                judged[mode].append(Judged(q.id, q.label, tuple(ranked), q.evidence))
    finally:
        if scratch_log is not None:
            scratch_log.close()
        ws.close()
        if scratch is not None:
            scratch.cleanup()
    overall = {m: score(judged[m]) for m in modes}
    labels = {m: by_label(judged[m]) for m in modes}
    # The first mode against each other one, question by question: is a gain real or noise at this many questions?
    comparisons = {m: [paired(judged[modes[0]], judged[m], metric) for metric in PAIRED_METRICS] for m in modes[1:]}
    worse = _worse_by_label(judged, modes)
    if args.rankings:
        write_rankings(args.rankings, judged[modes[0]])
    against = _against(judged[modes[0]], earlier) if args.against else []
    if args.json:
        print_json(
            {
                "questions": len(questions),
                "overall": {m: s.as_dict() for m, s in overall.items()},
                "by_label": {m: {label: s.as_dict() for label, s in labels[m].items()} for m in modes},
                "paired": {m: {p.metric: p.as_dict() for p in ps} for m, ps in comparisons.items()},
                "ms_per_question": {m: round(1000 * timing[m] / len(questions), 2) for m in modes},
                "misses": [j.id for j in judged[modes[0]] if not j.hit_at(5)],
                "no_good_match": unmatched if "hybrid" in modes else None,
                "worse_by_label": worse,
                "use": {"questions": len(used), "accesses": accesses} if args.use else None,
                "against": {p.metric: p.as_dict() for p in against} if args.against else None,
            }
        )
        return 0
    if args.use:
        recorded = counted(accesses, "access", "accesses")
        print(f"after {counted(len(used), 'question')} of {args.use} with {recorded} recorded")
    _table("overall", overall)
    for label in labels[modes[0]]:
        _table(label, {m: labels[m][label] for m in modes if label in labels[m]})
    for mode, ps in comparisons.items():
        _paired_table(modes[0], mode, ps)
    if against:
        _paired_table(modes[0], args.against, against)
    if len(modes) > 1:
        named = [f"{w['label']} ({w['metric']} {w['diff']:+.3f} against {w['against']})" for w in worse]
        print(
            f"label groups where {modes[0]} is worse than another ranking by a real difference: "
            + ("; ".join(named) or "none")
        )
    if "hybrid" in modes:
        print(
            f"said to have no good match (every question here has an answer): {len(unmatched)}"
            + (f" ({', '.join(unmatched)})" if unmatched else "")
        )
    print("ms per question: " + ", ".join(f"{m} {1000 * timing[m] / len(questions):.1f}" for m in modes))
    if args.misses:
        for j in judged[modes[0]]:
            if not j.hit_at(5):
                print(f"missed {j.id} [{j.label}]: got {', '.join(j.ranked[:3]) or 'nothing'}")
    return 0


def _scratch_access(ws: Workspace, folder: Path) -> AccessLog:
    """A copy of the vault's access statistics in `folder`, for questions whose accesses must not persist."""
    copy = folder / "access.sqlite"
    if ws.paths.access.exists():
        # SQLite's own backup: a consistent copy even while another process writes the file.
        with (
            contextlib.closing(sqlite3.connect(ws.paths.access)) as source,
            contextlib.closing(sqlite3.connect(copy)) as target,
        ):
            source.backup(target)
    return AccessLog(copy)


def _use(engine: Recall, used: list[Question], k: int, budget: int) -> int:
    """Ask `used`'s questions as an agent in use would and record what it used: the notes the context assembled
    for each under `budget` includes (matches above the relevance floor, as many as fit), as the agent API
    records them; returns how many accesses were recorded."""
    recorded = 0
    counter = TokenCounter()
    for q in used:
        as_of = parse_as_of(q.as_of)
        if as_of is not None:  # a replay of the past records nothing, as `companion recall --as-of` does not
            continue
        context = engine.recall(q.query, k=k, scope=q.scope, bodies=True)
        paths = used_notes(build(engine, context, budget, counter))
        engine.record(paths)
        recorded += len(paths)
    return recorded


def _worse_by_label(judged: dict[str, list[Judged]], modes: list[str]) -> list[dict[str, Any]]:
    """Label groups (of `MIN_GROUP` questions or more) where the first ranking is worse than another on a metric
    by a real (paired) difference."""
    out: list[dict[str, Any]] = []
    first = judged[modes[0]]
    for label in sorted({j.label for j in first}):
        picked = [i for i, j in enumerate(first) if j.label == label]
        if len(picked) < MIN_GROUP:
            continue  # a bootstrap of a handful of questions calls any difference real
        for other in modes[1:]:
            for metric in PAIRED_METRICS:
                p = paired([first[i] for i in picked], [judged[other][i] for i in picked], metric)
                if p.significant and p.diff < 0:
                    out.append({"label": label, "against": other, "metric": metric, "diff": round(p.diff, 4)})
    return out


def _write_features(args: argparse.Namespace, questions: list[Question]) -> int:
    """Write every question's candidates with their features (see `--features`); nothing is scored."""
    ws = open_workspace(args)
    lines: list[str] = []
    try:
        sync_first(ws, args)
        searcher = ws.searcher()
        engine = ws.recall()
        searcher.embed_queries([q.query for q in questions])
        for q in questions:
            searcher.capture = []
            if args.unanswerable:
                engine.recall(q.query, k=args.k, scope=Scope())
            else:
                engine.recall(q.query, k=args.k, as_of=parse_as_of(q.as_of), scope=q.scope)
            # The question's own search is the first; a date it names adds a second, narrower one.
            found = searcher.capture[0][1] if searcher.capture else {}
            answers = set() if args.unanswerable else q.evidence
            line = {
                "id": q.id,
                "label": "unanswerable" if args.unanswerable else q.label,
                "dense_span": engine.dense_span,
                "candidates": [
                    {"path": path, "features": [round(x, 6) for x in vector], "answer": path in answers}
                    for path, vector in found.items()
                ],
            }
            lines.append(json.dumps(line, ensure_ascii=False) + "\n")
    finally:
        ws.close()
    written = len(lines)
    out = Path(args.features)
    temp = out.with_name(out.name + ".part")
    try:
        temp.write_text("".join(lines), encoding="utf-8")
        temp.replace(out)
    except OSError as exc:
        raise ConfigError(f"{args.features}: cannot write the features ({exc.strerror or exc})") from exc
    if args.json:
        print_json({"questions": written, "features": args.features})
    else:
        print(f"features of {counted(written, 'question')} written to {args.features}")
    return 0


def _baseline(searcher: Searcher, mode: str, query: str, k: int, scope: Scope) -> list[str]:
    if mode == "bm25":
        match = fts_query(query)
        return [p for p, _ in searcher.manifest.lexical(match, k, scope)] if match else []
    hits = searcher.search(query, k * 3, scope=scope, dense_weight=1.0)
    return [h.path for h in hits if h.dense > 0][:k]


def _table(title: str, scores: dict[str, Scores]) -> None:
    first = next(iter(scores.values()))
    print(f"\n{title} ({counted(first.questions, 'question')})")
    head = "".join(f"{'recall@' + str(k):>11}" for k in CUTOFFS) + f"{'all@5':>9}{'MRR':>8}"
    print(f"  {'':8}{head}")
    for mode, s in scores.items():
        cells = "".join(f"{s.recall[k]:>11.3f}" for k in CUTOFFS) + f"{s.all_at_5:>9.3f}{s.mrr:>8.3f}"
        print(f"  {mode:<8}{cells}")


def _paired_table(first: str, other: str, comparisons: list[Paired]) -> None:
    print(f"\n{first} vs {other}, question by question (95% bootstrap interval of the mean difference)")
    for p in comparisons:
        verdict = "a real difference" if p.significant else "within noise"
        print(
            f"  {p.metric:<6}{p.diff:>+8.3f}  [{p.low:+.3f}, {p.high:+.3f}]"
            f"  better on {p.wins}, worse on {p.losses}: {verdict}"
        )


def write_rankings(path: str, judged: list[Judged]) -> None:
    """Write each question's ranking and evidence, one JSON object a line (what `--against` reads)."""
    lines = [
        json.dumps({"id": j.id, "label": j.label, "ranked": list(j.ranked), "evidence": sorted(j.evidence)})
        for j in judged
    ]
    try:
        Path(path).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--rankings {path}: cannot be written ({exc.strerror or exc})") from exc


def read_rankings(path: str) -> dict[str, Judged]:
    """The rankings an earlier run wrote, by question id; a ConfigError names the file and line of a bad one."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--against {path}: cannot be read ({exc})") from exc
    out: dict[str, Judged] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            judged = Judged(
                str(row["id"]),
                str(row.get("label") or "-"),
                tuple(str(p) for p in row["ranked"]),
                frozenset(str(p) for p in row["evidence"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"--against {path}, line {number}: not a ranking `--rankings` writes ({exc})") from exc
        out[judged.id] = judged
    return out


def _against(now: list[Judged], earlier: dict[str, Judged]) -> list[Paired]:
    both = [j for j in now if j.id in earlier]
    if not both:
        raise ConfigError("--against: none of these questions is in that file (questions are paired by id)")
    return [paired(both, [earlier[j.id] for j in both], metric) for metric in PAIRED_METRICS]
