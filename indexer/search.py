"""Hybrid search over the index: dense chunk vectors and BM25 over whole notes, fused per note."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from companion.config import RecallConfig
from companion.embedding.providers import Embedder
from companion.errors import ModelError, StoreError
from companion.recall.candidates import Fused, Hit, NoteInfo, fuse, lexical_dense_weight
from companion.recall.fusion import FusionModel, name_rank, own_language_names
from companion.recall.scope import Scope
from companion.vault.dates import note_day
from companion.words import unspaced_share
from indexer.features import CandidateFeatures
from indexer.manifest import Manifest
from indexer.owner import SharedStore
from indexer.question_vectors import QuestionVectors
from indexer.records import NoteRecord
from indexer.store import VectorStore
from indexer.terms import fts_query, query_terms

DENSE_WEIGHT = RecallConfig.dense_weight
"""Share of the dense side in the fused score (the rest is BM25); the config's default."""
EVERY_WORD_WEIGHT = RecallConfig.every_word_weight
"""What holding every word of the query adds; the config's default."""
LEXICAL_TRUST = RecallConfig.lexical_trust
"""How far a note holding the query's words moves the share toward BM25; the config's default."""
DENSE_SPAN = RecallConfig.dense_span
"""Cosine similarity below the best candidate's that scales to 0; the config's default."""
UNSPACED_DENSE_WEIGHT = RecallConfig.unspaced_dense_weight
"""The cap on the dense share for questions in unspaced scripts; the config's default."""

_EXACT_LIMIT = 1500  # a scope with at most this many chunks is searched exactly, from their stored vectors
_MAX_FETCH = 5000  # most chunks asked of the store in one query
_PRUNE_FROM = 5000  # notes from which terms common to many notes are left out of the lexical query
_COMMON_SHARE = 0.1  # "common": held by more than this share of the notes
_MOST_TERMS = 5  # in a large vault, the lexical query keeps at most this many of its rarest words
_VECTOR_SCOPES = 4  # narrow scopes whose chunk vectors are kept (at most `_EXACT_LIMIT` vectors each, ~2.3 MB)


def _name_key(text: str) -> str:
    """A question as a note name: trailing question marks, quotes and spaces aside, case folded."""
    return text.strip().strip("?!.\"'“”«»「」 ").casefold()


def info_from_record(record: NoteRecord) -> NoteInfo:
    """A manifest record as the recall engine's `NoteInfo`."""
    return NoteInfo(
        path=record.path,
        title=record.title,
        kind=record.kind,
        note_type=record.note_type,
        date=record.date,
        fields_json=record.fields_json,
        links_json=record.links_json,
    )


class Searcher:
    """Answers queries from a manifest and a vector store; opens the model and store on first query.

    Implements `companion.recall.candidates.NoteIndex`.
    """

    def __init__(
        self,
        manifest: Manifest,
        embedder_factory: Callable[[], Embedder],
        store_factory: Callable[[], VectorStore | SharedStore],
    ) -> None:
        self.manifest = manifest
        self.dense_unavailable: str | None = None
        """Why the last search answered from words only (the process holding the store did not answer, or the best
        word matches still wait for their vectors), or None."""
        self.dense_partial: str | None = None
        """What the last search could not find while the meaning side is being built, when it answered by meaning
        alone (no note held its words), or None."""
        self._questions = QuestionVectors(embedder_factory)
        self._store_factory = store_factory
        self._store: VectorStore | SharedStore | None = None
        self._shape: tuple[tuple[int, int], int, str | None] | None = None  # (generation, notes, newest day)
        self._built: tuple[tuple[int, int], float] | None = None  # (generation, share of chunks embedded)
        self._scopes: dict[tuple[Scope, tuple[int, int]], tuple[set[str], list[str] | None]] = {}
        self._vector_scopes: dict[tuple[Scope, tuple[int, int]], tuple[list[str], npt.NDArray[np.float32]]] = {}
        self._df: tuple[tuple[int, int], dict[str, int]] = ((-1, -1), {})
        self._candidates = CandidateFeatures(
            manifest, self._questions.embedder, self._questions.vector, self._idf, self._doc_frequencies
        )
        self.capture: list[tuple[str, dict[str, tuple[float, ...]]]] | None = None
        """When a list, every search appends (query, features of each candidate): what fusion training reads."""

    def generation(self) -> tuple[int, int]:
        """Changes whenever the index changes."""
        return self.manifest.generation()

    def embed_queries(self, queries: Sequence[str]) -> None:
        """Embed many queries in batches ahead of time (batch recall); later searches reuse the vectors."""
        self._questions.embed_many(queries)

    def _multilingual(self) -> bool:
        """Whether the model reads every language: then a question in German is no foreign one, and its meaning
        side is not held back."""
        return self._questions.embedder().multilingual

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        scope: Scope | None = None,
        dense_weight: float = DENSE_WEIGHT,
        candidates: int = 50,
        every_word_weight: float = EVERY_WORD_WEIGHT,
        every_word_query: str | None = None,
        lexical_trust: float = LEXICAL_TRUST,
        dense_span: float = DENSE_SPAN,
        unspaced_dense_weight: float = UNSPACED_DENSE_WEIGHT,
        model: FusionModel | None = None,
    ) -> list[Hit]:
        """The `k` best notes for `query` within `scope`, best first.

        The dense share adapts to the query: the more of its words (weighted by idf) the best BM25 note holds, the
        more BM25 counts (`lexical_dense_weight`); `dense_weight` is the share when no note holds them.

        A note holding every word of a query of two words or more gets `every_word_weight` on top of its fused
        relevance (not in a dense-only ranking, `dense_weight` 1): the words a user typed on purpose find the note
        that has them all, which a sum of normalised scores can bury under near paraphrases. `every_word_query`
        names those words when they are not the whole query (recall leaves out a date the question names).

        With `model`, the learned fusion ranks instead (the weighted knobs above are then not read; the dense share
        is still reported), a note the question names by its title or an alias first; not when the meaning side is
        unavailable, as the model was fitted with it.
        """
        scope = self._simplified(scope)
        dense: dict[str, float] = {}
        anchors: dict[str, str] = {}
        self.dense_unavailable = self.dense_partial = None
        terms = self._lexical_terms(query)
        match = fts_query(terms)
        lexical = dict(self.manifest.lexical(match, candidates, scope)) if match else {}
        dropped = self.manifest.reembedding() if dense_weight > 0 else None
        if dropped is not None:
            # The vectors of the model before are gone and the notes are being read again for the new one.
            self.dense_unavailable = (
                f"the embedding model changed (the index was embedded with {dropped}): results from words only "
                "while every note is read again, then the meaning side fills in as `companion index` embeds them"
            )
            dense_weight = 0.0
        if dense_weight > 0 and self.built() < 1.0:
            # A note still without vectors would lose to every embedded one for want of a meaning score: while the
            # best word matches wait for theirs, every note is ranked by its words alone (and the model is not
            # even asked).
            best = sorted(lexical, key=lambda p: -lexical[p])[: max(k, 10)]
            if self.manifest.queue.unembedded_of(best):
                self.dense_unavailable = (
                    f"the meaning side of the index is {int(100 * self.built())}% built: results from words only "
                    "until these notes are embedded (`companion index` finishes it)"
                )
                dense_weight = 0.0
            elif not lexical:
                self.dense_partial = (
                    f"the meaning side of the index is {int(100 * self.built())}% built and no note holds these "
                    "words: notes not yet embedded cannot be found by their meaning (`companion index` finishes it)"
                )
        rows: list[tuple[str, float]] = []
        if query.strip() and dense_weight > 0:
            try:
                rows = self._dense(query, scope, candidates * 3, candidates)
            except ModelError as exc:  # the store was embedded with another model than the one configured
                self.dense_unavailable = (
                    f"the meaning side of the index is unavailable ({str(exc).rstrip('.')}): results from words only"
                )
                dense_weight = 0.0
            except StoreError as exc:  # the owner does not answer, or the store is damaged
                # Never silently: the answer is from words alone, and the caller says why.
                self.dense_unavailable = (
                    f"the meaning side of the index is unavailable ({str(exc).rstrip('.')}): results from words only; "
                    "`companion doctor` checks the index and names the repair"
                )
                dense_weight = 0.0
            for chunk_id, similarity in rows:
                path, _, anchor = chunk_id.rpartition("#")
                if similarity > dense.get(path, -1.0):
                    dense[path] = similarity
                    anchors[path] = anchor
        # Fusion is trained on (and captures) searches with the meaning side present.
        learning = self.dense_unavailable is None and (
            (model is not None and dense_weight < 1.0) or self.capture is not None
        )
        if self.dense_unavailable is not None:
            model = None  # trained with the meaning side present: words alone fall back to the weighted sum
        every: list[str] = []
        if (every_word_weight > 0 or learning) and dense_weight < 1.0 and lexical:
            wanted = terms if every_word_query is None else self._lexical_terms(every_word_query)
            every = self._holding_every_word(wanted, candidates, scope)
        # A question that is a note's exact title or alias names that note, in any language: it holds every word of
        # the question in the strongest way, whatever the stemmer or the embeddings make of them. The whole
        # question, and the question without the date it names: "2023-09-12" names that day's daily note,
        # "Kitchen renovation in March" the note titled "Kitchen renovation". Looked up once for both uses.
        naming = (every_word_weight > 0 or learning) and dense_weight < 1.0 and 0 < len(query) <= 200
        names = list(dict.fromkeys(n for n in (_name_key(query), _name_key(every_word_query or "")) if n))
        asked = names if naming or learning else []
        named_notes = list(dict.fromkeys(p for n in asked for p in self.manifest.named(n)))
        if naming and named_notes:
            in_scope = self._paths_in_scope(named_notes, scope) if scope is not None else set(named_notes)
            every += [p for p in named_notes if p in in_scope and p not in every]
        # Which of the question's words each candidate holds: asked once, for the coverage and the features alike
        # (one full-text query per word, the costliest part of a search with the learned fusion).
        held = (
            self.manifest.holding(terms, list({*dense, *lexical, *every}), self._doc_frequencies(terms))
            if learning and terms
            else None
        )
        coverage = 0.0
        if lexical and lexical_trust > 0 and 0.0 < dense_weight < 1.0:
            coverage = self._coverage(terms, max(lexical, key=lambda p: lexical[p]), held)
            dense_weight = lexical_dense_weight(dense_weight, lexical_trust, coverage)
        if lexical and 0 < dense_weight < 1.0 and unspaced_share(query) > 0.5 and not self._multilingual():
            dense_weight = min(dense_weight, unspaced_dense_weight)
        hits: list[Hit] = []
        ranked = fuse(
            dense,
            lexical,
            dense_weight,
            dense_span=dense_span,
            every_word=every,
            every_word_weight=every_word_weight,
        )
        learned: dict[str, tuple[float, ...]] = {}
        if learning:
            records = self.manifest.notes_by_path([f.key for f in ranked])
            learned = self._candidates.of(
                every_word_query or query,
                terms,
                dense,
                lexical,
                every,
                records,
                dense_span,
                query,
                held or {},
                (set(names), set(named_notes)),
            )
            if self.capture is not None:
                self.capture.append((query, dict(learned)))
        named: dict[str, int] = {}
        in_order: Iterable[Fused] = ranked
        if model is not None and learned and dense_weight < 1.0:  # dense_weight 1: the embeddings alone
            relevance = {f.key: model.relevance(learned[f.key]) for f in ranked if f.key in learned}
            named = own_language_names({p: name_rank(v) for p, v in learned.items() if name_rank(v)})
            # An exact title or alias names the note: first, whatever the rest of the evidence says.
            order = sorted(
                (f for f in ranked if f.key in relevance),
                key=lambda f: (-named.get(f.key, 0), -round(relevance[f.key], 9), f.key),
            )
            # Only the few taken below become new values: a search has a couple of hundred candidates.
            in_order = (replace(f, score=relevance[f.key], words=0.0) for f in order)
        else:
            records = self.manifest.notes_by_path([f.key for f in ranked[: k * 2]])
            if len(records) < min(k, len(ranked)):
                records = self.manifest.notes_by_path([f.key for f in ranked])
        for fused in in_order:
            record = records.get(fused.key)
            if record is None:  # written to the store, not yet committed to the manifest
                continue
            hits.append(
                Hit(
                    path=fused.key,
                    score=fused.score,
                    dense=fused.dense,
                    lexical=fused.lexical,
                    dense_norm=fused.dense_norm,
                    lexical_norm=fused.lexical_norm,
                    anchor=anchors.get(fused.key, ""),
                    info=info_from_record(record),
                    words=fused.words,
                    dense_weight=dense_weight,
                    coverage=coverage,
                    features=learned.get(fused.key, ()),
                    name_rank=named.get(fused.key, 0),
                )
            )
            if len(hits) >= k:
                break
        return hits

    def _dense(self, query: str, scope: Scope | None, want: int, notes_wanted: int) -> list[tuple[str, float]]:
        """Nearest chunks within the scope, as (chunk id, cosine similarity), best first.

        Chroma's filtered queries cost 30-200 ms at 10k notes even when the filter keeps everything (as a replay's
        `as_of` usually does), so the store is asked without a filter and the scope is checked against the
        manifest. When too few chunks survive, a scope holding few chunks is searched exactly (their stored
        vectors, one dot product), and a larger one by asking the store for proportionally more.
        """
        if self._store is None:
            # Opened on the first question with words: an empty one (the app's first screen) never waits for it.
            self._store = self._store_factory()
        vector = self._questions.vector(query)
        if scope is None:
            return self._store.nearest(vector, want)
        # A date range or a field filter is usually narrow: learn its size first (cached) and search it exactly.
        # A replay's `until` alone keeps most notes: try the plain query first.
        narrow = scope.since is not None or bool(scope.where) or bool(scope.path_glob)
        allowed, ids = self._allowed(scope) if narrow else (None, None)
        if allowed is None or ids is None:
            rows = self._store.nearest(vector, want)
            kept = self._in_scope(rows, scope)
            if len(rows) < want or len({i.rpartition("#")[0] for i, _ in kept}) >= notes_wanted // 2:
                return kept  # the store holds no more, or enough survived
            if allowed is None:
                allowed, ids = self._allowed(scope)
        if not allowed:
            return []
        if ids is not None and len(ids) <= _EXACT_LIMIT:
            names, matrix = self._scope_vectors(scope, ids)
            if not names:
                return []
            sims = matrix @ vector
            order = np.argsort(-sims)[:want]
            return [(names[i], float(sims[i])) for i in order]
        notes = max(self._index_shape()[0], 1)
        more = min(int(want * notes / len(allowed)) + want, _MAX_FETCH)
        return [row for row in self._store.nearest(vector, more) if row[0].rpartition("#")[0] in allowed][:want]

    def _scope_vectors(self, scope: Scope, ids: list[str]) -> tuple[list[str], npt.NDArray[np.float32]]:
        """The stored vectors of a narrow scope's chunks (`ids`), as (chunk ids, one row each), kept for the last few
        scopes while the index is unchanged: an agent's questions within one chat or one week ask the same scope
        again and again, and reading a few hundred vectors from the store costs more than the search itself."""
        key = (scope, self.manifest.generation())
        found = self._vector_scopes.pop(key, None)
        if found is None:
            stored = self._store.embeddings(ids) if self._store is not None else {}
            names = list(stored)
            matrix = np.stack([stored[n] for n in names]) if names else np.zeros((0, 0), dtype=np.float32)
            found = (names, matrix)
            while len(self._vector_scopes) >= _VECTOR_SCOPES:
                self._vector_scopes.pop(next(iter(self._vector_scopes)))  # the least recently asked
        self._vector_scopes[key] = found
        return found

    def built(self) -> float:
        """The share of the index's chunks that have their vectors (1.0 when every one has; read again only when
        the index changed)."""
        generation = self.manifest.generation()
        if self._built is None or self._built[0] != generation:
            left = self.manifest.queue.unembedded_totals()[0]
            chunks = self.manifest.counts()[1] if left else 0
            self._built = (generation, 1.0 - left / chunks if chunks else 1.0)
        return self._built[1]

    def _index_shape(self) -> tuple[int, str | None]:
        """(notes, newest day) of the index, re-read only when the index changed."""
        generation = self.manifest.generation()
        if self._shape is None or self._shape[0] != generation:
            self._shape = (generation, self.manifest.note_count(), self.manifest.newest_day())
        return self._shape[1], self._shape[2]

    def _simplified(self, scope: Scope | None) -> Scope | None:
        """The scope without an `until` that no note is dated after (a replay's `as_of` after the last
        session), which would only make both searches slower; None when nothing is left."""
        if scope is None or scope.empty:
            return None
        newest = self._index_shape()[1]
        if scope.until is not None and newest is not None and scope.until.isoformat() >= newest:
            scope = Scope(scope.where, scope.since, None, scope.path_glob)
        return None if scope.empty else scope

    def _doc_frequencies(self, terms: list[str]) -> dict[str, int]:
        """Document frequencies, remembered while the index is unchanged (a question's second, date-scoped
        search and a batch's repeated words ask again)."""
        generation = self.manifest.generation()
        if self._df[0] != generation or len(self._df[1]) > 50_000:
            self._df = (generation, {})
        known = self._df[1]
        missing = [t for t in terms if t not in known]
        if missing:
            found = self.manifest.doc_frequencies(missing)
            known.update({t: found.get(t, 0) for t in missing})
        return {t: known[t] for t in terms}

    def languages(self, records: dict[str, NoteRecord]) -> dict[str, str]:
        """Each note's language as `language_of` guesses it from the start of its text (see
        `CandidateFeatures.languages`)."""
        return self._candidates.languages(records)

    def _coverage(self, terms: list[str], path: str, held: dict[str, set[str]] | None = None) -> float:
        """The share of the query's terms, weighted by their BM25 idf, that the note at `path` holds (`held`: which
        terms each candidate holds, when known already)."""
        if not terms:
            return 0.0
        idf = self._idf(terms)
        holds = (self.manifest.holding(terms, [path]) if held is None else held).get(path, set())
        return sum(idf[t] for t in holds) / (sum(idf.values()) or 1.0)

    def _idf(self, terms: list[str]) -> dict[str, float]:
        """Each term's BM25 idf in this index (empty without terms)."""
        if not terms:
            return {}
        notes = max(self._index_shape()[0], 1)
        df = self._doc_frequencies(terms)
        return {t: math.log(1.0 + (notes - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in terms}

    def _holding_every_word(self, terms: list[str], limit: int, scope: Scope | None) -> list[str]:
        """Notes holding every one of `terms` (the query's words as the lexical side keeps them), when there are
        two or more."""
        if len(terms) < 2:
            return []
        return [p for p, _ in self.manifest.lexical(" AND ".join(f'"{t}"' for t in terms), limit, scope)]

    def _lexical_terms(self, query: str) -> list[str]:
        """The query's terms, without those in more than a tenth of a large vault's notes.

        Such terms weigh little in BM25 (idf under ~2.2, against ~9 for a rare word at 10k notes), yet SQLite
        scores every note holding them: in a 10k-note vault a question naming a date ("2025", "12") spends
        two thirds of its lexical time on them. When only such words are left, there is no lexical side at all.
        Small vaults keep every term.
        """
        terms = query_terms(query)
        notes = self._index_shape()[0]
        if notes < _PRUNE_FROM or len(terms) < 2:
            return terms
        df = self._doc_frequencies(terms)
        kept = [t for t in terms if df.get(t, 0) <= notes * _COMMON_SHARE]
        if len(kept) > _MOST_TERMS:
            # Past a few rare words, each further word costs a full posting list and moves the top ten little.
            rarest = set(sorted(kept, key=lambda t: df.get(t, 0))[:_MOST_TERMS])
            kept = [t for t in kept if t in rarest]
        if not kept and self.built() < 1.0:
            # While the meaning side is being built it cannot stand in for the words: the rarest ones stay.
            return sorted(terms, key=lambda t: df.get(t, 0))[:_MOST_TERMS]
        # Only common words left ("2025", "03" of a date): BM25 would rank by noise, at the highest cost.
        return kept

    def _allowed(self, scope: Scope) -> tuple[set[str], list[str] | None]:
        """The notes a scope lets through and, for a few notes, their chunk ids (None for many); kept while the
        index is unchanged, as a batch asks the same `where` many times and a frontmatter filter reads every
        note's fields."""
        key = (scope, self.manifest.generation())
        found = self._scopes.get(key)
        if found is None:
            allowed = self.manifest.paths_in_scope(scope)
            found = (allowed, self.manifest.chunk_ids_of(allowed) if len(allowed) <= _EXACT_LIMIT else None)
            if len(self._scopes) >= 32:
                self._scopes.clear()
            self._scopes[key] = found
        return found

    def _in_scope(self, rows: list[tuple[str, float]], scope: Scope) -> list[tuple[str, float]]:
        ok = self._paths_in_scope([i.rpartition("#")[0] for i, _ in rows], scope)
        return [row for row in rows if row[0].rpartition("#")[0] in ok]

    def _paths_in_scope(self, paths: Sequence[str], scope: Scope) -> set[str]:
        """Which of these notes the scope lets through, checked against the manifest."""
        records = self.manifest.notes_by_path(paths)
        return {
            path
            for path, r in records.items()
            if scope.matches(path, r.kind, r.note_type, note_day(r.date), r.frontmatter)
        }

    def infos(self, paths: Sequence[str]) -> dict[str, NoteInfo]:
        """What the manifest knows of these notes."""
        return {p: info_from_record(r) for p, r in self.manifest.notes_by_path(paths).items()}

    def dated(self, first_day: dt.date, last_day: dt.date) -> list[NoteInfo]:
        """Conversation notes dated within `[first_day, last_day]`."""
        return [info_from_record(r) for r in self.manifest.dated(first_day.isoformat(), last_day.isoformat())]

    def chatter(self) -> frozenset[str]:
        """The session summaries left out as boilerplate (both sides of their exchange), by path."""
        return frozenset(self.manifest.stats_of_chatter())

    def titled(self, titles: Iterable[str]) -> dict[str, list[str]]:
        """Lower-cased note title to the paths of the notes with that file name."""
        return self.manifest.titled(titles)

    def chunk_lines(self, path: str, anchor: str) -> tuple[int, int] | None:
        """0-based (first line, line after the last) of a chunk's content in its file, or None."""
        record = self.manifest.chunk(f"{path}#{anchor}")
        return None if record is None else (record.start_line, record.end_line)

    def latest_of_type(self, note_type: str, until: dt.date | None = None) -> NoteInfo | None:
        """The newest note of a frontmatter `type` dated on or before `until`, or None."""
        record = self.manifest.latest_of_type(note_type, until.isoformat() if until else None)
        return None if record is None else info_from_record(record)
