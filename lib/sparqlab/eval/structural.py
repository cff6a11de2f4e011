"""Execution-free metrics of DeSQ (section 3.5 and appendix A): structural exact match of final queries,
fragment-level EM under key- and position-based alignment, URI-level EM per field, and corpus BLEU.

**Structural EM** (the paper's triple-order-invariant EM on normalised variable names): two queries match when one
becomes the other by reordering the triple patterns (and the FILTERs) inside a group and renaming variables
consistently — whatever order the variables first appear in. Anything else counts: a constant, a property, which
variables a pattern shares, a filter, the projection (and its order), a modifier. Both queries are brought to a
canonical text: variables are coloured by how they occur (colour refinement over the query's triple patterns,
filters and clauses, as in graph canonisation), ties are broken by trying each tied variable first and keeping
the smallest text, and each group's triple patterns and filters are printed sorted. Prefixed names are expanded,
keywords upper-cased and literals re-quoted, so spelling differences that do not change the query do not count.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from sparqlab.eval.sparql_tree import (
    Bind,
    Filter,
    GraphOf,
    Group,
    Include,
    InlineValues,
    Minus,
    Optional,
    Query,
    Service,
    SparqlParseError,
    SubSelect,
    Term,
    TermPrinter,
    Triple,
    UnionOf,
    default_term,
    element_text,
    head_text,
    modifier_texts,
    parse_query,
    query_text,
)

MAX_BRANCHES = 5000
"""Tie-breaking leaves explored per query before settling for the smallest text found so far (only highly
symmetric queries, e.g. many interchangeable patterns, get near it)."""

_Unit = tuple[str, Callable[[TermPrinter], str], frozenset[Term]]


def _units(query: Query, scope: str = "") -> Iterator[tuple[str, Callable[[TermPrinter], str]]]:
    """The query's smallest pieces that mention variables, each with its place in the query (``scope``)."""
    head = dataclasses.replace(query, named=[])
    yield scope + "head", lambda show: head_text(head, show)
    for number, (name, named) in enumerate(query.named):
        yield from _units(named, f"{scope}with{number}:{name}/")
    yield from _group_units(query.where, scope + "where/")
    for number in range(len(modifier_texts(query))):
        yield scope + f"mod{number}", lambda show, n=number: modifier_texts(query, show)[n]


def _group_units(group: Group, scope: str) -> Iterator[tuple[str, Callable[[TermPrinter], str]]]:
    place = 0
    for element in group.elements:
        if isinstance(element, Triple | Filter):
            kind = "triple" if isinstance(element, Triple) else "filter"
            yield scope + kind, lambda show, e=element: element_text(e, show, True)
            continue
        place += 1
        inner = f"{scope}{type(element).__name__}{place}/"
        if isinstance(element, Bind | InlineValues | Include):
            yield inner, lambda show, e=element: element_text(e, show, True)
        elif isinstance(element, Group):
            yield from _group_units(element, inner)
        elif isinstance(element, Optional | Minus):
            yield from _group_units(element.group, inner)
        elif isinstance(element, UnionOf):
            for branch, part in enumerate(element.groups):
                yield from _group_units(part, f"{inner}{branch}/")
        elif isinstance(element, GraphOf | Service):
            name = element.name if isinstance(element, GraphOf) else element.endpoint
            yield inner + "name", lambda show, t=name: show(t)
            yield from _group_units(element.group, inner)
        elif isinstance(element, SubSelect):
            yield from _units(element.query, inner)


def _variables_of(render: Callable[[TermPrinter], str]) -> frozenset[Term]:
    found: set[Term] = set()
    render(lambda t: found.add(t) or "" if t.is_variable else "")
    return frozenset(found)


def _refine(units: list[_Unit], colour: dict[Term, int]) -> dict[Term, int]:
    """Colour refinement: a variable's new colour is its old one plus the multiset of its contexts, each
    context being a piece of the query printed with this variable as ``#`` and the others by colour."""
    while True:
        contexts: dict[Term, list[str]] = {v: [] for v in colour}
        for scope, render, variables in units:
            for variable in variables:
                contexts[variable].append(scope + ":" + render(
                    lambda t, v=variable, c=colour: "#" if t == v else (f"?{c[t]}" if t.is_variable else default_term(t))))
        keys = {v: (colour[v], tuple(sorted(contexts[v]))) for v in colour}
        ranks = {key: rank for rank, key in enumerate(sorted(set(keys.values())))}
        refined = {v: ranks[keys[v]] for v in colour}
        if len(set(refined.values())) == len(set(colour.values())):
            return refined
        colour = refined


def canonical_form(query: str | Query) -> str:
    """The canonical text of a query under structural EM (equal texts ⇔ structurally equal queries).

    Raises :class:`~sparqlab.eval.sparql_tree.SparqlParseError` when ``query`` is text that does not parse.
    """
    tree = parse_query(query) if isinstance(query, str) else query
    units = [(scope, render, _variables_of(render)) for scope, render in _units(tree)]
    variables = set().union(*(unit[2] for unit in units)) if units else set()
    start = {v: 0 if v.kind == "var" else 1 for v in variables}
    best: list[str] = []
    branches = [0]

    def text(colour: dict[Term, int]) -> str:
        def show(term: Term) -> str:
            if term.kind == "var":
                return f"?v{colour[term]}"
            return f"_:b{colour[term]}" if term.kind == "bnode" else default_term(term)

        return query_text(tree, show, ordered=True)

    def search(colour: dict[Term, int]) -> None:
        if branches[0] >= MAX_BRANCHES:
            return
        colour = _refine(units, colour)
        sizes = Counter(colour.values())
        tied = [c for c in sorted(sizes) if sizes[c] > 1]
        if not tied:
            branches[0] += 1
            candidate = text(colour)
            if not best or candidate < best[0]:
                best[:] = [candidate]
            return
        for chosen in sorted((v for v in colour if colour[v] == tied[0]), key=lambda v: (v.kind, v.value)):
            search({v: 2 * c + (0 if v == chosen or c != tied[0] else 1) for v, c in colour.items()})

    search(start)
    return best[0]


def structural_em(predicted: str | None, gold: str) -> int:
    """1 when ``predicted`` matches ``gold`` under structural EM, else 0 (also when ``predicted`` is missing or
    does not parse). A gold query that does not parse raises, since nothing can be scored against it."""
    gold_form = canonical_form(gold)
    if not predicted:
        return 0
    try:
        return int(canonical_form(predicted) == gold_form)
    except SparqlParseError:
        return 0


# ------------------------------------------------------------------------------------------ fragment level

_OPERATORS = re.compile(r"\s*(<=|>=|!=|&&|\|\||[=<>+*/,-])\s*")
_OPEN = re.compile(r"([(\[{])\s*")
_CLOSE = re.compile(r"\s*([)\]}])")


def normalise_fragment(text: str) -> str:
    """The paper's fragment normalisation (appendix A): lower case, one space around operators, no space inside
    brackets, whitespace collapsed. Inside IRIs (``<...>``) only the case changes: their ``<``, ``>``, ``/`` and
``-`` are not operators."""
    parts = re.split(r"(<[^<>\s]*>)", " ".join(str(text).split()).lower())
    out = []
    for number, part in enumerate(parts):
        if number % 2:
            out.append(part)
            continue
        part = _OPERATORS.sub(lambda m: f" {m.group(1)} ", part)
        part = _CLOSE.sub(r"\1", _OPEN.sub(r"\1", part))
        out.append(part)
    return " ".join("".join(out).split())


def fragment_em(predicted: Sequence[tuple[str, str]], gold: Sequence[tuple[str, str]],
                alignment: str = "key") -> tuple[int, int]:
    """Matched and total gold fragments of one example (appendix A): ``(key, fragment)`` pairs, where the key is
    the atomic constraint. ``alignment="key"`` pairs a gold fragment with the predicted fragment of the same
    (normalised) key; ``"position"`` with the predicted fragment at the same index. Totals sum over a test set."""
    if alignment not in ("key", "position"):
        raise ValueError(f"alignment must be 'key' or 'position', got {alignment!r}")
    if alignment == "position":
        matched = sum(1 for (_, p), (_, g) in zip(predicted, gold, strict=False)
                      if normalise_fragment(p) == normalise_fragment(g))
        return matched, len(gold)
    by_key: dict[str, list[str]] = {}
    for key, fragment in predicted:
        by_key.setdefault(normalise_fragment(key), []).append(normalise_fragment(fragment))
    matched = 0
    for key, fragment in gold:
        candidates = by_key.get(normalise_fragment(key), [])
        if normalise_fragment(fragment) in candidates:
            candidates.remove(normalise_fragment(fragment))
            matched += 1
    return matched, len(gold)


def uri_em(predicted: Sequence[Mapping[str, Any]], gold: Sequence[Mapping[str, Any]],
           fields: Sequence[str] = ("id", "label", "description")) -> dict[str, tuple[int, int]]:
    """Per field, matched and total gold URI slots of one example (section 3.5): a gold slot is aligned with the
    predicted slot of the same placeholder; values compared after :func:`normalise_fragment`."""
    slots = {str(entry.get("placeholder")): entry for entry in predicted}
    result = {}
    for name in fields:
        matched = 0
        for entry in gold:
            guess = slots.get(str(entry.get("placeholder")), {}).get(name)
            matched += int(guess is not None and normalise_fragment(guess) == normalise_fragment(entry.get(name, "")))
        result[name] = (matched, len(gold))
    return result


def corpus_bleu(predictions: Sequence[str], references: Sequence[str], max_n: int = 4) -> float:
    """Corpus-level BLEU (Papineni et al. 2002: clipped n-gram precisions up to ``max_n`` pooled over the corpus,
    geometric mean, brevity penalty) over whitespace tokens of the normalised texts, in [0, 1]."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    matched, total = [0] * max_n, [0] * max_n
    hypothesis_length = reference_length = 0
    for prediction, reference in zip(predictions, references, strict=True):
        hyp, ref = normalise_fragment(prediction).split(), normalise_fragment(reference).split()
        hypothesis_length, reference_length = hypothesis_length + len(hyp), reference_length + len(ref)
        for n in range(1, max_n + 1):
            grams = Counter(tuple(hyp[i:i + n]) for i in range(len(hyp) - n + 1))
            ref_grams = Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1))
            matched[n - 1] += sum(min(count, ref_grams[gram]) for gram, count in grams.items())
            total[n - 1] += max(len(hyp) - n + 1, 0)
    if hypothesis_length == 0 or min(matched) == 0:
        return 0.0
    log_precision = sum(math.log(m / t) for m, t in zip(matched, total, strict=True)) / max_n
    brevity = 1.0 if hypothesis_length > reference_length else math.exp(1 - reference_length / hypothesis_length)
    return brevity * math.exp(log_precision)


__all__ = ["canonical_form", "corpus_bleu", "fragment_em", "normalise_fragment", "structural_em", "uri_em"]
