"""The values recall produces: items with their tier and the parts of their score, and the whole context."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Literal

from companion.recall.dates import DateRange
from companion.recall.decay import AccessStats, Decay
from companion.recall.temporal import TemporalItem
from companion.vault.sessions import SessionSummary
from companion.words import counted

BOOST_LOG_ODDS = 4.0
"""What one unit of the graph or date boost adds to a learned relevance's log-odds."""
SUPERSEDED_FACTOR = 0.25
"""What a superseded note's final score is multiplied by: a newer note says otherwise, so it answers only when
nothing else does."""

Tier = Literal["hot", "warm", "temporal"]


@dataclass(frozen=True)
class Explanation:
    """Why an item has its score: `final = raw * decay`, where `raw` is `relevance + words + graph + date` with the
    weighted sum, and with the learned fusion the odds of the relevance (with the graph and date boosts) against the
    best candidate's, to the sixth."""

    dense: float
    """Best chunk's cosine similarity to the question."""
    lexical: float
    """BM25 score of the whole note."""
    dense_norm: float
    """`dense` scaled to [0, 1] against the best candidate's (over the span `Recall.dense_span` says)."""
    lexical_norm: float
    """`lexical` scaled to [0, 1] over the candidates."""
    dense_weight: float
    """Share of the dense side in `relevance` for this question (lower when a note holds its words)."""
    relevance: float
    """`dense_weight * dense_norm + (1 - dense_weight) * lexical_norm`."""
    graph: float
    """What wikilinks to or from strong candidates added."""
    graph_via: str
    """The candidate that link came from (empty when none)."""
    date: float
    """What the date named in the question added."""
    decay: Decay
    """The spaced-repetition multiplier and its parts."""
    access: AccessStats
    """The access statistics the decay was computed from."""
    final: float
    """The score the item is ranked by."""
    words: float = 0.0
    """What holding every word of the question added (the `every_word_weight` setting), else 0."""
    coverage: float = 0.0
    """How much of the question (its words weighted by idf) the best BM25 note holds: what set `dense_weight`."""
    boosted: float | None = None
    """With the learned fusion, the relevance with the graph and date boosts (added on its log-odds), as a
    probability: what the relevance floor is held to. None with the weighted sum."""
    named: int = 0
    """How strongly the question names the note by its title or an alias (0 when it does not): a named note is a
    match, first, whatever its score."""
    raw: float | None = None
    """The score the decay multiplies: with the learned fusion, the odds of `relevance` with the boosts against the
    best candidate's, to the sixth (`relative_odds`); None with the weighted sum (`base`)."""
    fusion: tuple[tuple[str, float], ...] = ()
    """With the learned fusion, each feature's share of the log-odds behind `relevance`, largest first (empty with
    the weighted sum)."""
    superseded_by: str = ""
    """The note that replaces this one (its `superseded_by` link), or empty: its score is scaled down by
    `SUPERSEDED_FACTOR` and it is listed below that note."""

    @property
    def base(self) -> float:
        """What the relevance floor is held to: `boosted` with the learned fusion, else the score before the decay
        (`relevance + words + graph + date`)."""
        if self.boosted is not None:
            return self.boosted
        return self.relevance + self.words + self.graph + self.date

    def lines(self) -> list[str]:
        """The explanation in words, one part per line."""
        head = ["named: the question is this note's title or alias, so it comes first"] if self.named else []
        return head + self._parts()

    def _on_log_odds(self, boost: float) -> str:
        """What a boost adds to the learned relevance's log-odds (`BOOST_LOG_ODDS` per unit); nothing to say of the
        weighted sum, where it is added as it is."""
        return f", {BOOST_LOG_ODDS * boost:+.2f} on the log-odds" if self.boosted is not None else ""

    def _parts(self) -> list[str]:
        if self.fusion:
            parts = ", ".join(f"{name} {value:+.2f}" for name, value in self.fusion[:6])
            # A note outside a side's candidates has no score there, which is not a score of zero.
            missing = any(name == "dense_missing" for name, _ in self.fusion)
            dense = "dense: no passage among the nearest" if missing else f"dense {self.dense:.3f}"
            dense += "" if missing else f" (scaled {self.dense_norm:.2f})"
            words = f"bm25 {self.lexical:.2f} (scaled {self.lexical_norm:.2f})" if self.lexical else "bm25: not among"
            words += "" if self.lexical else " the word matches"
            out = [
                f"{dense}, {words}: relevance {self.relevance:.3f} (learned fusion)",
                f"what moved it: {parts}",
            ]
        else:
            out = [
                f"dense {self.dense:.3f} (scaled {self.dense_norm:.2f}) x {self.dense_weight:.2f}"
                f" + bm25 {self.lexical:.2f} (scaled {self.lexical_norm:.2f}) x {1 - self.dense_weight:.2f}"
                f" = relevance {self.relevance:.3f}",
                f"weights: the best BM25 note holds {self.coverage:.0%} of the question's words (by idf),"
                f" so the dense share is {self.dense_weight:.2f}",
            ]
        if self.words:
            out.append(f"words +{self.words:.3f} (holds every word of the question)")
        if self.graph:
            out.append(f"graph +{self.graph:.3f} (linked with {self.graph_via}{self._on_log_odds(self.graph)})")
        if self.date:
            out.append(f"date +{self.date:.3f} (dated in the range the question names{self._on_log_odds(self.date)})")
        if self.boosted is not None and (self.graph or self.date):
            out.append(f"relevance with the boosts {self.boosted:.3f} (what the list shows and the floor is held to)")
        d = self.decay
        if d.pinned:
            out.append(f"decay {d.value:.3f}: pinned, so the ceiling applies (the curve alone gives {d.curve:.3f})")
        elif d.days_since_access is None:
            out.append(f"decay {d.value:.3f}: never accessed ({d.curve:.2f} + confidence lift {d.lift:.2f})")
        else:
            out.append(
                f"decay {d.value:.3f}: 0.5^({d.days_since_access:.1f} d / half-life) = {d.curve:.3f}"
                f" + resistance {d.resistance:.3f} ({counted(self.access.access_count, 'access', 'accesses')}), clamped"
            )
        if self.superseded_by:
            out.append(
                f"superseded by {self.superseded_by}: x {SUPERSEDED_FACTOR} and listed below it, as a newer note "
                "replaces what this one says"
            )
        superseded = f" x {SUPERSEDED_FACTOR} (superseded)" if self.superseded_by else ""
        if self.raw is not None:
            out.append(
                f"final {self.final:.4g} = (odds / best odds)^6 {self.raw:.4g} x decay {d.value:.3f}{superseded}"
            )
        else:
            out.append(f"final {self.final:.4f}")
        return out


@dataclass(frozen=True)
class RecallItem:
    """One recalled note."""

    path: str
    """Vault-relative POSIX path."""
    title: str
    """File name without `.md`."""
    tier: Tier
    """Which tier holds it."""
    score: float
    """The final score (0 for hot and temporal items that did not match the question)."""
    kind: str
    """Note kind."""
    note_type: str | None
    """Frontmatter `type`."""
    date: str | None
    """Frontmatter `date`."""
    anchor: str
    """The best chunk's anchor, empty when none matched."""
    explanation: Explanation | None
    """The parts of `score`, None for items that were not scored."""

    def matches(self, floor: float) -> bool:
        """Whether the item is a match: its score before the decay reaches `floor` (an item listed by time, not
        scored, always is)."""
        e = self.explanation
        return e is None or e.named > 0 or e.base >= floor

    @property
    def relevance(self) -> float | None:
        """How likely the note answers the question, with its boosts: what the relevance floor in force is held to
        (a probability with the learned fusion); None for a note listed by time, not scored."""
        return None if self.explanation is None else self.explanation.base


@dataclass(frozen=True)
class RecalledContext:
    """Everything recalled for one question, tier by tier, as typed values."""

    query: str
    """The question."""
    as_of: dt.datetime
    """The moment recall was made for (naive local time)."""
    sessions: tuple[SessionSummary, ...]
    """The hot tier, newest first."""
    pushed_out: tuple[SessionSummary, ...]
    """Sessions of the hot window that the policy's limit left out (recalled as temporal or warm instead)."""
    warm: tuple[RecallItem, ...]
    """Warm items, best first, at most `policy.warm_results`."""
    temporal: tuple[TemporalItem, ...]
    """The always-on tier of recent sessions, newest first (empty when the toggle is off)."""
    results: tuple[RecallItem, ...]
    """Every recalled note once, best first, with its tier."""
    recap: bool
    """True when the question asks for a recap: the temporal tier is boosted, with summaries; a recap
    with no topic also lists recent sessions first, by time."""
    date_range: DateRange | None
    """The dates the question names, when it names any."""
    notice: str | None = None
    """Something the reader must know about these results (the meaning side of the index was unavailable)."""
    floor: float = 0.0
    """The relevance floor: an item whose score before the decay is below it is not a match."""
    dense_built: float = 1.0
    """The share of the index's chunks that have their vectors (below 1 while a build embeds; see `notice`)."""
    words_only: bool = False
    """The results were ranked by their words alone (the meaning side unavailable or still being built for them)."""
    period: DateRange | None = None
    """The period whose sessions a recap lists first ("what did we talk about last week?"), else None."""
    period_sessions: tuple[TemporalItem, ...] = ()
    """Those sessions as listed (hot ones too), each with its one-line exchange as `summary`."""
    period_more: int = 0
    """Sessions of that period past the listing's bound, not listed."""

    @property
    def full_notice(self) -> str | None:
        """`notice`, or while the meaning side is being built how much of it is (None when there is nothing to
        know)."""
        if self.notice or self.dense_built >= 1.0:
            return self.notice
        return (
            f"the meaning side of the index is {int(100 * self.dense_built)}% built: the newest notes have theirs, "
            "the others are found by their words"
        )

    @property
    def short_notice(self) -> str:
        """`notice` in a few words, for a pane's edge (empty when there is nothing to know)."""
        built = f"meaning {int(100 * self.dense_built)}% built"
        if self.words_only:
            return f"from words only: {built}" if self.dense_built < 1.0 else "from words only: meaning unavailable"
        return built if self.dense_built < 1.0 else ""

    @property
    def matched(self) -> tuple[RecallItem, ...]:
        """The results that are matches, best first (see `RecallItem.matches`)."""
        return tuple(i for i in self.results if i.matches(self.floor))

    @property
    def no_good_match(self) -> bool:
        """True when the question found notes but none reaches the floor: show the closest ones as such."""
        return bool(self.results) and not self.matched

    def shown(self, k: int, closest: int = 3) -> tuple[RecallItem, ...]:
        """What to show a person or an agent: up to `k` matches, or when there is none, the `closest` best
        non-matches (to be labelled as such)."""
        matched = self.matched
        return matched[:k] if matched else self.results[: min(k, closest)]


@dataclass(frozen=True)
class Located:
    """Where in its note a recalled item matched, as a user or Obsidian can follow it."""

    link: str
    """A wikilink Obsidian opens at the place: `[[Title#Heading]]`, `[[Title#^block]]`, or `[[Title]]`."""
    heading: str
    """The heading the passage sits under (empty when none)."""
    snippet: str
    """The matching passage, on one line, shortened."""


ODDS_POWER = 6.0
"""The power the learned fusion's odds against the best candidate's are raised to in the final score (see
`relative_odds`)."""


def final_text(item: RecallItem) -> str:
    """The final score as a list shows it, on a scale a person can read beside the relevance: with the learned fusion
    its `ODDS_POWER`-th root (the odds against the first result's, times the decay's root), since the score itself
    puts all but the first below 0.001; the weighted sum's as it is. `-` for a note listed by time and not scored.
    The order is the score's either way; `explain` gives the score itself."""
    e = item.explanation
    if e is None:
        return "-"
    if e.raw is None:
        return score_text(item.score)
    return f"{item.score ** (1.0 / ODDS_POWER):.3f}"


def score_text(score: float) -> str:
    """A final score for a person: three decimals, `<0.001` below them (relative odds to the sixth fall that far)."""
    return f"{score:.3f}" if score >= 0.001 else "<0.001"


def relevance_text(item: RecallItem) -> str:
    """What a list shows beside a note: its relevance with its boosts (what the relevance floor in force is held to:
    a probability with the learned fusion), three decimals, `-` for a note listed by time and not scored.

    The final score ranks, but it is relative to the first result and to the sixth power, so all but the first
    print as `<0.001`; the relevance says how good each match is on its own, on one scale for every question."""
    return "-" if item.relevance is None else f"{item.relevance:.3f}"


def log_odds(logit: float, boost: float) -> float:
    """A learned relevance's log-odds with the graph and date boosts added (`BOOST_LOG_ODDS` per unit)."""
    return logit + BOOST_LOG_ODDS * boost


def relative_odds(log_odds: float, best: float) -> float:
    """The score the decay multiplies under the learned fusion: the odds that the note answers the question (with
    its boosts) against the best candidate's, to the power `ODDS_POWER`; 1 for the best, in (0, 1] for the rest.

    Probabilities crowd near 1 for good candidates (0.996 and 0.957 differ by 4%, their odds tenfold), so a
    multiplier on the probability would let the decay (0.55 for a note never used, 1.0 for one used today) outrank
    a clearly better answer; on the odds to the sixth it shifts the log-odds by at most 0.1 between a note used
    today and one never used (0.23 against a stale note at the floor of 0.25): it decides between notes of all but
    equal relevance, and use never buries the right answer.
    Measured on the help vault's questions, one half asked after the other had been used: on squared odds (a
    shift of up to 0.3) two answers the title's meaning had just lifted to fourth fell back to sixth behind notes
    other questions had used; to the sixth neither half lost an answer from its top 5, where a multiplier on the
    probability cost MRR 0.13. Dividing by the best candidate's odds changes no ranking.
    """
    return math.exp(max(ODDS_POWER * (log_odds - best), -60.0))
