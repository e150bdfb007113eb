"""The recall engine: hot sessions, warm hybrid recall with decay and explanations, and the temporal tier.

One question gives one `RecalledContext`:
- `sessions`: the hot tier, newest first, per session key under the `RetentionPolicy`;
- `warm`: notes outside the hot tier ranked by relevance (dense + BM25, a wikilink-graph signal and the dates the
  question names) times the spaced-repetition decay, each with the parts of its score;
- `temporal`: recent completed sessions by time, never repeated by the warm tier;
- `results`: every recalled note once, best first, labelled with its tier (what `companion recall` prints).

The engine reads the index through `NoteIndex`, the vault only for session summaries and hot bodies, and never
writes either; access statistics are recorded only when the caller says an item was surfaced (`record`).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from companion.config import RecallConfig
from companion.errors import ConfigError, NoteError
from companion.recall.access import AccessLog
from companion.recall.candidates import Hit, NoteIndex
from companion.recall.dates import DateRange, find_date_range
from companion.recall.decay import AccessStats, Decay, decay
from companion.recall.fusion import FusionModel, default_model, linked_only
from companion.recall.graphsignal import graph_neighbours, graph_signal
from companion.recall.passages import Passages
from companion.recall.recap import latest_first, list_period, period_first, recap_period, topic_of
from companion.recall.results import (
    SUPERSEDED_FACTOR,
    Explanation,
    Located,
    RecalledContext,
    RecallItem,
    Tier,
    log_odds,
    relative_odds,
)
from companion.recall.scope import Scope
from companion.recall.sessionhits import carry_sessions, session_title
from companion.recall.sessionrefs import SessionCache, SessionRef
from companion.recall.superseded import below_replacements
from companion.recall.temporal import TemporalItem, is_pure_recap, recap_boost, recent_items
from companion.retention import RetentionPolicy
from companion.vault.dates import session_datetime
from companion.vault.reader import ObsidianVault
from companion.vault.sessions import SessionSummary, local_moment, partition_hot, window_start

_WORD_OR_NUMBER = re.compile(r"[^\W_]", re.UNICODE)


class Recall:
    """Answers questions from an index and a vault under a policy; read-only except for `record`."""

    def __init__(
        self,
        index: NoteIndex,
        vault: ObsidianVault,
        policy: RetentionPolicy,
        settings: RecallConfig | None = None,
        access: AccessLog | None = None,
        multilingual: bool = False,
    ) -> None:
        self.index = index
        self.multilingual = multilingual
        """Whether the index's embedding model reads every language (it has shipped fusion weights of its own)."""
        self.vault = vault
        self.policy = policy
        self.settings = settings or RecallConfig()
        self.access = access
        self.passages = Passages(vault, index)
        """Reads what a recalled note shows of itself from the vault."""
        self._fusion: tuple[tuple[str, str, int, bool], FusionModel | None] | None = None  # see `fusion`
        self.sessions = SessionCache(vault, index)
        """The sessions of recent days and of periods asked about, kept between questions."""

    @property
    def fusion(self) -> FusionModel | None:
        """The learned fusion model the settings name, or None when they ask for the weighted sum (read again
        when the settings or the weights file change)."""
        path = weights_file(self.settings, self.vault.root)
        try:
            stamp = path.stat().st_mtime_ns if path is not None else 0
        except OSError:
            stamp = -1  # reading it names the problem
        key = (self.settings.fusion, str(path), stamp, self.multilingual)
        if self._fusion is None or self._fusion[0] != key:
            self._fusion = (key, fusion_model(self.settings, self.vault.root, self.multilingual))
        return self._fusion[1]

    @property
    def dense_span(self) -> float:
        """The span the dense side is scaled over: the learned weights' own when they carry one and rank (the
        span they were fitted with), else the `dense_span` setting (the weighted sum's, and the embeddings alone's
        at `dense_weight` 1, where the learned model does not rank)."""
        fusion = self.fusion
        if fusion is not None and fusion.dense_span is not None and self.settings.dense_weight < 1.0:
            return fusion.dense_span
        return self.settings.dense_span

    # -- sessions ------------------------------------------------------------------------------

    def sessions_since(
        self, first_day: dt.date, moment: dt.datetime, scope: Scope | None = None, *, until: dt.date | None = None
    ) -> list[SessionRef]:
        """Sessions from `first_day` up to `moment` (and to the end of `until` when given, so a recap of a day long
        ago reads that day, not every day since), one entry per session; see `SessionCache.since`."""
        return self.sessions.since(first_day, moment, scope, until=until)

    def hot(
        self, as_of: dt.datetime | None = None, scope: Scope | None = None
    ) -> tuple[list[SessionRef], list[SessionRef]]:
        """(hot, pushed out) session refs at `as_of` under the policy, newest first."""
        moment = local_moment(as_of)
        return self._partition(self.sessions_since(window_start(self.policy, moment), moment, scope), moment)

    def _partition(self, refs: Sequence[SessionRef], moment: dt.datetime) -> tuple[list[SessionRef], list[SessionRef]]:
        # The scope already chose the sessions; the limit then applies per session key.
        split = partition_hot([r.summary for r in refs], self.policy, moment)
        by_summary = {r.summary.path: r for r in refs}
        return [by_summary[s.path] for s in split.hot], [by_summary[s.path] for s in split.pushed_out]

    def recall_recent(
        self,
        hours: float | None = None,
        limit: int | None = None,
        *,
        as_of: dt.datetime | None = None,
        scope: Scope | None = None,
        summaries: bool = True,
    ) -> list[TemporalItem]:
        """`recall_recent(hours=48, limit=10)`: completed sessions of the last hours, newest first."""
        hours = self.settings.recent_hours if hours is None else hours
        limit = self.settings.recent_limit if limit is None else limit
        moment = local_moment(as_of)
        refs = self.spoken(self.sessions_since((moment - dt.timedelta(hours=hours)).date(), moment, scope))
        return self._recent(refs, moment, hours, limit, summaries)

    def spoken(self, refs: Sequence[SessionRef]) -> list[SessionRef]:
        """The sessions that are conversations (see `SessionCache.spoken`)."""
        return self.sessions.spoken(refs)

    def _recent(
        self, refs: Sequence[SessionRef], moment: dt.datetime, hours: float, limit: int, summaries: bool
    ) -> list[TemporalItem]:
        return recent_items(
            ((r.summary, r.carrier, r.title) for r in refs),
            moment,
            hours=hours,
            limit=limit,
            timeout_minutes=self.policy.session_timeout_minutes,
            summaries=summaries,
        )

    # -- recall --------------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        k: int | None = None,
        as_of: dt.datetime | None = None,
        scope: Scope | None = None,
        bodies: bool = False,
    ) -> RecalledContext:
        """Recall for one question at `as_of` (now when None), within `scope`.

        Hot sessions built from conversation notes carry their bodies only with `bodies` (context assembly
        needs them; ranking does not, and reading them costs a file read each).
        """
        k = k or self.policy.warm_results
        scope = scope or Scope()
        moment = local_moment(as_of)
        if as_of is not None:
            # Replaying the past: notes dated after the moment did not exist yet.
            scope = scope.narrowed(until=moment.date())
        date_range = find_date_range(query, moment)
        period = recap_period(query, date_range)  # "what did we talk about last week?": its sessions come first
        # "What did we talk about on 2 May?" is a recap of that day, not of the last two: the date decides.
        recent_range = date_range is None or date_range.end >= moment.date() - dt.timedelta(days=1)
        recap = (recap_boost(query) and recent_range) or period is not None
        by_time = recap and is_pure_recap(query)

        # One read of the sessions serves the hot tier, the temporal tier (the recap boost doubles the hours) and
        # the period a recap names.
        hours = self.settings.recent_hours * (2 if recap else 1)
        first_day = min(window_start(self.policy, moment), (moment - dt.timedelta(hours=hours)).date())
        refs = self.sessions_since(first_day, moment, scope)
        # A period inside the window is read with it; one before it is read alone, its own days only.
        period_refs = (
            refs
            if period is None or period.start >= first_day
            else self.sessions_since(period.start, moment, scope, until=period.end)
        )
        hot_refs, pushed_refs = self._partition(refs, moment)
        hot_paths = {p for r in hot_refs for p in r.paths}
        limit = self.settings.recent_limit * (2 if recap else 1)
        temporal: list[TemporalItem] = []
        if (self.settings.temporal_context or recap) and period is None:
            recent = self._recent(self.spoken(refs), moment, hours, limit + len(hot_refs), recap)
            temporal = [t for t in recent if t.path not in hot_paths][:limit]

        scored = self._score(query, k, moment, scope, date_range, len(hot_refs) + (limit if period else len(temporal)))
        floor, listing = self.floor(), None
        if period is not None:
            found = [i.path for i in scored if i.matches(floor)]
            spoken = self.spoken(period_refs)
            listing = list_period(spoken, period, self.vault, limit, topic=topic_of(query, period), matches=found)
            temporal = [t for t in listing.items if t.path not in hot_paths]
        tier_of: dict[str, Tier] = {}
        for ref in hot_refs:
            tier_of.update(dict.fromkeys(ref.paths, "hot"))
        temporal_paths = {t.path for t in temporal}
        tier_of.update(dict.fromkeys(temporal_paths, "temporal"))
        matched = [item if item.path not in tier_of else replace(item, tier=tier_of[item.path]) for item in scored]
        warm = tuple(item for item in matched if item.tier == "warm")[: self.policy.warm_results]

        if listing is not None:
            results = period_first(listing, hot_paths, matched, floor)
        elif by_time:
            # A recap with no topic is about time, not meaning: recent sessions first, newest first, then matches.
            results = latest_first(hot_refs, temporal, matched)
        else:
            results = matched
        hot_sessions = tuple(self._with_body(r.summary) if bodies else r.summary for r in hot_refs)
        return RecalledContext(
            query=query,
            as_of=moment,
            sessions=hot_sessions,
            pushed_out=tuple(r.summary for r in pushed_refs),
            warm=warm,
            temporal=tuple(temporal),
            results=tuple(_distinct(results))[:k],
            recap=recap,
            date_range=date_range,
            notice=getattr(self.index, "dense_unavailable", None) or getattr(self.index, "dense_partial", None),
            floor=floor,
            dense_built=self.dense_built(),
            words_only=getattr(self.index, "dense_unavailable", None) is not None,
            period=period,
            period_sessions=listing.items if listing else (),
            period_more=listing.more if listing else 0,
        )

    def passage(self, item: RecallItem, max_chars: int = 1200) -> str:
        """The text of an item's best chunk (the whole body's start when no chunk matched), read from the vault."""
        return self.passages.passage(item, max_chars)

    def locate(self, item: RecallItem, snippet_chars: int = 160) -> Located:
        """The heading or block an item's best chunk sits at, as a link Obsidian opens, and the passage itself."""
        return self.passages.locate(item, snippet_chars)

    def latest_summary(self, as_of: dt.datetime | None = None) -> tuple[str, str] | None:
        """(path, body) of the newest `type: summary` note up to `as_of`, or None (see `Passages.latest_summary`)."""
        return self.passages.latest_summary(as_of)

    def use_of(self, path: str, when: dt.datetime | None = None) -> tuple[AccessStats, Decay]:
        """A note's access statistics and the decay they give at `when` (now when None): what a list shows of a note
        just opened."""
        stats = self.access.stats([path]).get(path, AccessStats()) if self.access is not None else AccessStats()
        info = self.index.infos([path]).get(path)
        moment = local_moment(when).astimezone()
        confidence = info.confidence if info is not None else None
        return stats, decay(stats, self.policy, moment, confidence, pinned=info is not None and info.pinned)

    def record(self, paths: Iterable[str], when: dt.datetime | None = None) -> None:
        """Count one access of each path (the items were surfaced or opened); no-op without an access log."""
        if self.access is not None:
            self.access.record(paths, when or dt.datetime.now(dt.UTC))

    # -- scoring -------------------------------------------------------------------------------

    def _score(
        self,
        query: str,
        k: int,
        moment: dt.datetime,
        scope: Scope,
        date_range: DateRange | None,
        reserved: int,
    ) -> list[RecallItem]:
        settings = self.settings
        # Room for the hot and temporal items the question also matches, so warm still fills its share; capped,
        # as a busy day can hold hundreds of recent sessions and few of them match.
        share = max(k, self.policy.warm_results)
        want = share + min(reserved, share) + 5
        # A date the question names ("last week") is the date boost's evidence, not words a note must hold.
        words = query.replace(date_range.phrase, " ") if date_range is not None else None
        fusion = self.fusion
        span = self.dense_span

        def search(within: Scope) -> list[Hit]:
            return self.index.search(
                query,
                want,
                scope=within,
                dense_weight=settings.dense_weight,
                candidates=settings.candidates,
                every_word_weight=settings.every_word_weight,
                every_word_query=words,
                lexical_trust=settings.lexical_trust,
                dense_span=span,
                unspaced_dense_weight=settings.unspaced_dense_weight,
                model=fusion,
            )

        hits = {h.path: h for h in search(scope)}
        if date_range is not None and settings.date_weight > 0:
            for hit in search(scope.narrowed(since=date_range.start, until=date_range.end)):
                if hit.path not in hits or hits[hit.path].score < hit.score:
                    hits[hit.path] = hit
        _drop_later_today(hits, moment)
        carry_sessions(hits, self.index, scope)
        if not hits:
            return []
        graph, via = graph_signal(list(hits.values()), settings.graph_weight)
        neighbours = graph_neighbours(self.index, list(hits.values()), scope) if settings.graph_weight > 0 else {}
        for path, (info, parent) in neighbours.items():
            if path not in hits:
                hits[path] = Hit(path, 0.0, 0.0, 0.0, 0.0, 0.0, "", info)
                graph[path] = settings.graph_weight * parent.score
                via[path] = parent.path
        aware = moment.astimezone()
        stats = self.access.stats(list(hits)) if self.access is not None else {}
        dates: dict[str, float] = {}
        if date_range is not None:
            for path, hit in hits.items():
                day = hit.info.day
                if day is not None:
                    dates[path] = settings.date_weight / (1.0 + date_range.distance(day) / 7.0)
        model = self.fusion
        # A note only a link brought in has no evidence of its own, but its boosts count the same way.
        linked = linked_only(next((hit.features for hit in hits.values() if hit.features), None))
        logits = (
            {
                path: log_odds(model.logit(hit.features or linked), graph.get(path, 0.0) + dates.get(path, 0.0))
                for path, hit in hits.items()
            }
            if model is not None and any(hit.features for hit in hits.values())
            else {}
        )
        best = max(logits.values(), default=0.0)
        # The best named note's odds count as the best candidate's; the other named notes keep their own odds
        # against it, so several notes of one title ("Templates" names a plugin and a clipper's page) are ordered
        # by relevance, with the decay breaking near-ties as everywhere else.
        best_named = max((logits[p] for p, h in hits.items() if h.name_rank and p in logits), default=best)
        items: list[RecallItem] = []
        for path, hit in hits.items():
            date_boost = dates.get(path, 0.0)
            access = stats.get(path, AccessStats())
            factor = decay(access, self.policy, aware, hit.info.confidence, pinned=hit.info.pinned)
            base = hit.score + graph.get(path, 0.0) + date_boost
            # A note the question names comes first whatever its relevance (see the sort below).
            own = best + logits[path] - best_named if hit.name_rank and path in logits else logits.get(path)
            raw = relative_odds(own, best) if own is not None else None
            if path in logits:
                # The floor is held to the relevance with its boosts, on the scale they were added on.
                base = 1.0 / (1.0 + math.exp(-min(max(logits[path], -60.0), 60.0)))
            final = factor.apply(base if raw is None else raw)
            if hit.info.superseded_by:
                final *= SUPERSEDED_FACTOR
            items.append(
                RecallItem(
                    path=path,
                    title=session_title(hit),
                    tier="warm",
                    score=final,
                    kind=hit.info.kind,
                    note_type=hit.info.note_type,
                    date=hit.info.date,
                    anchor=hit.anchor,
                    explanation=Explanation(
                        dense=hit.dense,
                        lexical=hit.lexical,
                        dense_norm=hit.dense_norm,
                        lexical_norm=hit.lexical_norm,
                        dense_weight=hit.dense_weight,
                        relevance=hit.score - hit.words,
                        graph=graph.get(path, 0.0),
                        graph_via=via.get(path, ""),
                        date=date_boost,
                        decay=factor,
                        access=access,
                        final=final,
                        words=hit.words,
                        coverage=hit.coverage,
                        raw=raw,
                        boosted=base if raw is not None else None,
                        named=hit.name_rank,
                        fusion=tuple(self.fusion.contributions(hit.features))
                        if self.fusion is not None and hit.features
                        else (),
                        superseded_by=hit.info.superseded_by,
                    ),
                )
            )
        # A note the question names by its title or an alias comes first, whatever its use or age; then the
        # matches, so that a note below the floor never takes a match's place in the first k. Among them, for a
        # question that is only a date ("2026-05-28"), that day's notes: its digits in other notes' text are no
        # evidence of their day.
        floor = self.floor()
        only_date = (
            date_range is not None
            and settings.date_weight > 0
            and words is not None
            and not _WORD_OR_NUMBER.search(words)
        )

        def group(item: RecallItem) -> tuple[int, bool, bool]:
            day = hits[item.path].info.day
            dated = date_range is not None and day is not None and date_range.contains(day)
            return (hits[item.path].name_rank, item.matches(floor), only_date and dated)

        items.sort(key=lambda i: (*(-int(part) for part in group(i)), -i.score, i.path))
        return below_replacements(items, {path: hit.info for path, hit in hits.items()}, group)

    def dense_built(self) -> float:
        """The share of the index's chunks that have their vectors (1.0 for an index that does not say)."""
        built = getattr(self.index, "built", None)
        return float(built()) if callable(built) else 1.0

    def floor(self) -> float:
        """The relevance floor in force: the settings' with the learned fusion, `WEIGHTED_FLOOR` with the weighted
        sum or when the meaning side of the index is unavailable (the model is then not used)."""
        learned = self.fusion is not None and getattr(self.index, "dense_unavailable", None) is None
        return self.settings.relevance_floor if learned else WEIGHTED_FLOOR

    def _with_body(self, summary: SessionSummary) -> SessionSummary:
        if summary.body:
            return summary
        try:
            return replace(summary, body=self.vault.read_note(summary.path).body)
        except NoteError as exc:
            self.vault.problems.append((exc.path, exc.reason))
            return summary


WEIGHTED_FLOOR = 0.1
"""The relevance floor of the weighted sum (its relevance is not a probability)."""


def weights_file(settings: RecallConfig, vault_root: Path) -> Path | None:
    """The weights file the settings name (relative to the vault), or None for the shipped weights."""
    if not settings.fusion_weights:
        return None
    return vault_root / Path(settings.fusion_weights).expanduser()


def fusion_model(settings: RecallConfig, vault_root: Path, multilingual: bool = False) -> FusionModel | None:
    """The learned fusion the settings name (their `fusion_weights` file, else the weights shipped for the embedding
    model's family), or None for the weighted sum; a ConfigError names an unreadable weights file."""
    if settings.fusion != "learned":
        return None
    path = weights_file(settings, vault_root)
    if path is None:
        return default_model(multilingual)
    try:
        return FusionModel.read(path)
    except ValueError as exc:
        raise ConfigError(f"recall.fusion_weights: {exc}") from exc


def _drop_later_today(hits: dict[str, Hit], moment: dt.datetime) -> None:
    """Leave out notes of `moment`'s own day stamped later than it: the index filters by day, a replay by time."""
    today = moment.date().isoformat()
    for path, hit in list(hits.items()):
        date = hit.info.date or ""
        if date[:10] != today or ("T" not in date and '"time"' not in hit.info.fields_json):
            continue
        when = session_datetime(date, str(hit.info.frontmatter.get("time") or ""))
        if when is not None and when > moment:
            del hits[path]


def _distinct(items: Iterable[RecallItem]) -> list[RecallItem]:
    seen: set[str] = set()
    out: list[RecallItem] = []
    for item in items:
        if item.path not in seen:
            seen.add(item.path)
            out.append(item)
    return out
