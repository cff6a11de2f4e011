"""Near-duplicates between a pool a method learns from and the questions it is scored on.

A method that shows few-shot examples, remembers templates (GGC's ``standin-knn``), builds worked examples
(DeSQ) or trains on a split reads a *pool* of questions. The runner's exact check
(:func:`sparqlab.runs.prepared.check_examples`) refuses shared ids and texts; this module finds what it cannot: a
paraphrase of a scored question, or the same query behind different words. CK26 is the motivating case: its
questions are CK25's, paraphrased, in the same order, with the same reference queries.

Per scored question, the most similar pool question by text (cosine of the shipped all-MiniLM-L6-v2 embeddings,
:func:`sparqlab.llm.embeddings.embed`, cached per text set) among the pool questions a word TF-IDF ranks first
and that share words with it (:data:`LEXICAL_FLOOR`: a large training pool is never embedded whole, and a pool
from another domain not at all) and by query (:func:`query_similarity` of the
normalised reference queries: comments, prefix declarations and variable names do not matter; IRIs, literals and
the structure do). A pair is a near-duplicate when the text similarity reaches ``text_threshold`` or the query
similarity reaches ``query_threshold``. :func:`leakage_report` is what ``sparqlab leakage`` prints and what the
runner records in ``metrics.json`` (``leakage``) for every pool a method read.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from sparqlab.data.question import Question

TEXT_THRESHOLD = 0.8
"""MiniLM cosine from which two questions count as the same question reworded (CK26's paraphrases of CK25 reach
it on most questions; differently worded questions about other things stay below)."""

QUERY_THRESHOLD = 0.95
"""Normalised-query similarity from which two gold queries count as the same query."""

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|<[^>\s]*>|\?\w+|\$\w+|[\w:.-]+|[^\s\w]')


def query_tokens(sparql: str | None) -> list[str]:
    """The query's tokens without comments and PREFIX/BASE declarations, keywords upper-cased, variables renamed
    ``?v1, ?v2, ...`` in order of appearance."""
    if not sparql:
        return []
    text = re.sub(r"#[^\n]*", " ", sparql)
    text = re.sub(r"(?i)\b(PREFIX\s+[\w-]*:\s*<[^>]*>|BASE\s+<[^>]*>)", " ", text)
    names: dict[str, str] = {}
    tokens = []
    for token in _TOKEN.findall(text):
        if token[0] in "?$":
            token = names.setdefault(token[1:], f"?v{len(names) + 1}")
        elif token.isalpha():
            token = token.upper()
        tokens.append(token)
    return tokens


def query_similarity(a: str | None, b: str | None) -> float:
    """1.0 for the same normalised query (:func:`query_tokens`), else the similarity of the two token sequences
    (difflib's ratio); 0.0 when either is missing."""
    left, right = query_tokens(a), query_tokens(b)
    if not left or not right:
        return 0.0
    return 1.0 if left == right else difflib.SequenceMatcher(None, left, right, autojunk=False).ratio()


def _embeddings(texts: list[str]) -> np.ndarray:
    """MiniLM vectors of ``texts``, cached on disk by the texts' hash (a pool is embedded once per machine)."""
    from sparqlab.core.paths import cache_dir
    from sparqlab.llm.embeddings import MODEL_NAME, embed

    digest = hashlib.sha256("\n".join([MODEL_NAME, *texts]).encode("utf-8")).hexdigest()[:24]
    path = cache_dir() / "leakage" / f"{digest}.npy"
    if path.exists():
        return np.load(path, allow_pickle=False)
    vectors = embed(texts) if texts else np.zeros((0, 384), dtype=np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}-{threading.get_ident()}.partial.npy")  # writers never share one
    np.save(partial, vectors, allow_pickle=False)
    partial.replace(path)
    return vectors


@dataclass(frozen=True)
class LeakagePair:
    """A scored question, its most similar pool question (by text) and the best query match in the pool."""

    test_id: str
    pool_id: str
    text_similarity: float | None
    query_pool_id: str
    query_similarity: float
    near_duplicate: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


CANDIDATES = 5
"""Pool questions per scored question whose MiniLM similarity is computed (the TF-IDF top ones)."""

LEXICAL_FLOOR = 0.2
"""TF-IDF cosine (English stop words left out) a pool question needs to be a candidate: below it the two share
(almost) no content words, and MiniLM is not asked (its similarity is reported as ``None``)."""


def _candidates(pool: Sequence[Question], test: Sequence[Question], k: int) -> tuple[list[list[int]], list[int]]:
    """Per test question, the indices of the (at most ``k``) pool questions closest by word TF-IDF cosine with
    at least :data:`LEXICAL_FLOOR`, and the closest one whatever its score."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(lowercase=True, ngram_range=(1, 2), sublinear_tf=True, stop_words="english")
    matrix = vectorizer.fit_transform([q.text for q in pool] + [q.text for q in test])
    scores = (matrix[len(pool):] @ matrix[:len(pool)].T).toarray()
    order = [np.argsort(-row, kind="stable")[:min(k, len(pool))] for row in scores]
    return ([[int(i) for i in ranked if row[i] >= LEXICAL_FLOOR] for ranked, row in zip(order, scores, strict=True)],
            [int(ranked[0]) for ranked in order])


def _closest_by_tokens(test_tokens: list[list[str]], pool_tokens: list[list[str]]) -> list[int | None]:
    """Per test query, the pool query sharing the largest share of distinct tokens (Jaccard; the first on a tie),
    or ``None`` for a missing query or no shared token. One sparse product instead of a Python loop over pairs
    (1,000 x 10,000 questions: 0.3 s instead of 10 s)."""
    from scipy.sparse import csr_matrix

    vocabulary: dict[str, int] = {}

    def incidence(token_lists: list[list[str]]) -> csr_matrix:
        rows, columns = [], []
        for row, tokens in enumerate(token_lists):
            for column in {vocabulary.setdefault(token, len(vocabulary)) for token in tokens}:
                rows.append(row)
                columns.append(column)
        return csr_matrix((np.ones(len(rows)), (rows, columns)), shape=(len(token_lists), len(vocabulary) or 1))

    pool_matrix = incidence(pool_tokens)
    test_matrix = incidence(test_tokens)
    pool_matrix.resize(pool_matrix.shape[0], test_matrix.shape[1])
    sizes_pool = np.asarray(pool_matrix.sum(axis=1)).reshape(1, -1)
    best: list[int | None] = []
    for first in range(0, len(test_tokens), 256):  # 256 test rows at a time: memory bounded for any pool size
        chunk = test_matrix[first:first + 256]
        shared = (chunk @ pool_matrix.T).toarray()
        union = np.asarray(chunk.sum(axis=1)).reshape(-1, 1) + sizes_pool - shared
        scores = np.divide(shared, union, out=np.zeros_like(shared), where=union > 0)
        columns = scores.argmax(axis=1)
        best += [int(column) if scores[row, column] > 0 else None for row, column in enumerate(columns)]
    return best


def find_pairs(pool: Sequence[Question], test: Sequence[Question], *, text_threshold: float = TEXT_THRESHOLD,
               query_threshold: float = QUERY_THRESHOLD, candidates: int = CANDIDATES) -> list[LeakagePair]:
    """One :class:`LeakagePair` per test question (none for an empty pool), in test order."""
    if not pool or not test:
        return []
    shortlist, closest = _candidates(pool, test, candidates)
    pool_tokens = [query_tokens(q.gold_sparql) for q in pool]
    by_tokens: dict[tuple[str, ...], int] = {}
    for index, tokens in enumerate(pool_tokens):
        by_tokens.setdefault(tuple(tokens), index)
    test_tokens = [query_tokens(q.gold_sparql) for q in test]
    overlaps = _closest_by_tokens(test_tokens, pool_tokens)
    for row, tokens in enumerate(test_tokens):  # a pool question with the same query is a text candidate too
        if tokens and tuple(tokens) in by_tokens and by_tokens[tuple(tokens)] not in shortlist[row]:
            shortlist[row].append(by_tokens[tuple(tokens)])
    chosen = sorted({i for row in shortlist for i in row})
    column = {index: position for position, index in enumerate(chosen)}
    rows = [r for r in range(len(test)) if shortlist[r]]
    similarity = (_embeddings([test[r].text for r in rows]) @ _embeddings([pool[i].text for i in chosen]).T
                  if chosen else np.zeros((0, 0)))
    line = {r: position for position, r in enumerate(rows)}
    pairs = []
    for row, question in enumerate(test):
        if shortlist[row]:
            best_text = max(shortlist[row], key=lambda i: (similarity[line[row], column[i]], -i))
            text_score = float(similarity[line[row], column[best_text]])
        else:
            best_text, text_score = closest[row], None
        tokens = test_tokens[row]
        if tokens and tuple(tokens) in by_tokens:  # the same query: no need to compare the rest
            best_query, query_score = by_tokens[tuple(tokens)], 1.0
        else:  # the closest query by shared tokens, or the text match's, whichever is more similar
            best_query, query_score = best_text, query_similarity(question.gold_sparql, pool[best_text].gold_sparql)
            overlap = overlaps[row]
            if overlap is not None and overlap != best_text:
                score = query_similarity(question.gold_sparql, pool[overlap].gold_sparql)
                if score > query_score:
                    best_query, query_score = overlap, score
        near = (text_score is not None and text_score >= text_threshold) or query_score >= query_threshold
        pairs.append(LeakagePair(question.id, pool[best_text].id, None if text_score is None else round(text_score, 4),
                                 pool[best_query].id, round(query_score, 4), near))
    return pairs


def leakage_report(pool: Sequence[Question], test: Sequence[Question], *, text_threshold: float = TEXT_THRESHOLD,
                   query_threshold: float = QUERY_THRESHOLD, keep_pairs: int | None = 20) -> dict[str, Any]:
    """The overlap of ``pool`` with ``test``: sizes, how many test questions have a near-duplicate in the pool
    (``near_duplicates``, ``share``), the thresholds, and the near-duplicate pairs (the first ``keep_pairs``,
    ``None``: all)."""
    pairs = find_pairs(pool, test, text_threshold=text_threshold, query_threshold=query_threshold)
    near = [p for p in pairs if p.near_duplicate]
    return {"n_pool": len(pool), "n_test": len(test), "near_duplicates": len(near),
            "share": round(len(near) / len(test), 4) if test else 0.0,
            "same_query": sum(p.query_similarity == 1.0 for p in pairs),
            "text_threshold": text_threshold, "query_threshold": query_threshold,
            "pairs": [p.to_json() for p in (near if keep_pairs is None else near[:keep_pairs])]}


def pool_reports(pools: Mapping[str, Sequence[Question]], test: Sequence[Question]) -> dict[str, Any]:
    """:func:`leakage_report` of every pool a run read (``{"dataset:split": questions}``), by pool name."""
    return {name: leakage_report(questions, test) for name, questions in pools.items()}
