"""The learned fusion's features of a search's candidates: what the index found of each note for one question
(its cosine, its BM25, the question's words it holds, its title's meaning, its language) and what is known of the
question as a whole, in the form `companion.recall.fusion` reads them."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from companion.embedding.modelbuild import MODEL_IDS
from companion.embedding.providers import Embedder
from companion.recall.background import rare_unknown_share
from companion.recall.fusion import Evidence, Question, features, standout
from companion.recall.language import language_of, question_language
from indexer.derived import TITLE_VECTOR_DTYPE
from indexer.manifest import Manifest
from indexer.records import NoteRecord
from indexer.terms import query_terms

_TITLE_ITEM = np.dtype(TITLE_VECTOR_DTYPE).itemsize  # bytes per number of a stored title vector
_LANGUAGE_VOTERS = 10  # the best word matches whose languages name a question's when its words name none


@lru_cache(maxsize=8_192)
def _title_words(title: str) -> frozenset[str]:
    # Kept by title: every question meets a couple of hundred candidates, and the same notes come back often. A few
    # thousand titles are a few MB; a serving process is held to its memory too.
    return frozenset(query_terms(title))


class CandidateFeatures:
    """Makes the features of a search's candidates from the index (`manifest`), the question's vector, and the
    searcher's word statistics; keeps each note's language by content between searches."""

    def __init__(
        self,
        manifest: Manifest,
        embedder: Callable[[], Embedder],
        vector: Callable[[str], npt.NDArray[np.float32]],
        idf: Callable[[list[str]], dict[str, float]],
        doc_frequencies: Callable[[list[str]], dict[str, int]],
    ) -> None:
        self.manifest = manifest
        self._embedder = embedder
        self._vector = vector
        self._idf = idf
        self._doc_frequencies = doc_frequencies
        self._languages: dict[tuple[str, str], str] = {}  # (path, content hash) -> language, see `languages`

    def of(
        self,
        query: str,
        terms: list[str],
        dense: dict[str, float],
        lexical: dict[str, float],
        every: list[str],
        records: dict[str, NoteRecord],
        dense_span: float,
        embedded: str,
        held: dict[str, set[str]],
        naming: tuple[set[str], set[str]],
    ) -> dict[str, tuple[float, ...]]:
        """The learned fusion's features of every candidate (see `companion.recall.fusion`); `embedded` is the
        question as the meaning side embeds it (`query` may leave out a date it names), `held` which of `terms`
        each candidate holds, `naming` (the names the question gives, the notes they name)."""
        if not records:
            return {}
        # A conversation's title names a session, not the many things said in it: only other notes' titles count.
        titles = self.title_cosines(embedded, [p for p, r in records.items() if r.kind != "conversation"])
        idf = self._idf(terms)
        total = sum(idf.values()) or 1.0
        frequencies = self._doc_frequencies(terms) if terms else {}
        names, named = naming
        words = set(query_terms(query))
        # A question that names a date ("what did we talk about on 2 November") asks what that day holds: the date
        # is the date boost's evidence, and words no note holds say nothing of whether the vault can answer it.
        own = [] if query != embedded else terms
        unknown = sum(idf[t] for t in own if not frequencies.get(t)) / (sum(idf[t] for t in own) or 1.0)
        matched = [v for p, v in lexical.items() if p in records]
        languages = self.languages(records)
        # A few keywords name no language by themselves: the notes holding them do (see `question_language`).
        strongest = sorted((p for p in lexical if p in languages), key=lambda p: -lexical[p])[:_LANGUAGE_VOTERS]
        asked = question_language(query, [(languages[p], lexical[p]) for p in strongest])
        model = self._embedder()
        foreign = asked != "en" and not model.multilingual
        question = Question(
            foreign=foreign,
            best_cosine=max(dense.values(), default=0.0),
            best_bm25=max(matched, default=0.0),
            low_bm25=min(matched, default=0.0),
            dense_span=dense_span,
            unknown_words=unknown,
            rare_unknown=rare_unknown_share(own, [t for t in own if frequencies.get(t)]),
            standout=standout(dense.values(), dense_span),
            # Only the shipped models' cosines are what the shipped weights' bound was chosen on: a server model's
            # spread differently, and the hashing embedder's say nothing of meaning.
            nearest_read=bool(dense) and not foreign and query == embedded and model.model_id in MODEL_IDS,
        )
        every_set = set(every)
        out: dict[str, tuple[float, ...]] = {}
        for path, record in records.items():
            title_words = _title_words(record.title)
            overlap = 2 * len(title_words & words) / (len(title_words) + len(words)) if title_words else 0.0
            evidence = Evidence(
                cosine=dense.get(path),
                bm25=lexical.get(path),
                coverage=sum(idf[t] for t in held.get(path, ())) / total,
                every_word=path in every_set,
                title=record.title.strip().casefold() in names,
                alias=path in named and record.title.strip().casefold() not in names,
                title_overlap=overlap,
                other_language=languages.get(path, asked) != asked,
                title_cosine=titles.get(path, 0.0),
            )
            out[path] = features(evidence, question)
        return out

    def title_cosines(self, question: str, paths: list[str]) -> dict[str, float]:
        """Each note's title's cosine similarity to the question. A note whose title has no vector yet (a note
        written since the last embedding pass, or an index built before titles were embedded) gets the others'
        mean: neither favoured nor held back. When none has one, the feature is 0 for every candidate: the
        ranking is the same, the relevances lower, until the next embedding pass makes them."""
        if self.manifest.get_meta("title_model") != self._embedder().model_id:
            return {}  # made by another model: their cosines to this model's vector mean nothing
        stored = self.manifest.derived.title_vectors(paths)
        if not stored:
            return {}
        vector = self._vector(question)
        kept = [p for p, blob in stored.items() if len(blob) == vector.shape[0] * _TITLE_ITEM]
        if not kept:
            return {}
        matrix = np.frombuffer(b"".join(stored[p] for p in kept), dtype=TITLE_VECTOR_DTYPE).reshape(len(kept), -1)
        sims = matrix.astype(np.float32) @ vector
        out = {p: float(s) for p, s in zip(kept, sims, strict=True)}
        if len(out) < len(paths):
            mean = float(sims.mean())
            out.update({p: mean for p in paths if p not in out})
        return out

    def languages(self, records: dict[str, NoteRecord]) -> dict[str, str]:
        """Each note's language as `language_of` guesses it from the start of its text, kept by path and content
        (a batch meets the same notes again, and a watcher's commits leave most notes as they were)."""
        if len(self._languages) > 200_000:
            self._languages.clear()
        known = self._languages
        missing = {p for p, r in records.items() if (p, r.content_hash) not in known}
        if missing:
            stored = self.manifest.derived.languages(sorted(missing))
            # An index written before languages were kept: guessed here from each note's opening, once.
            guessed = {
                p: language_of(t) for p, t in self.manifest.derived.openings(sorted(missing - set(stored))).items()
            }
            for path, found in {**stored, **guessed}.items():
                known[(path, records[path].content_hash)] = found
        return {p: lang for p, r in records.items() if (lang := known.get((p, r.content_hash))) is not None}
