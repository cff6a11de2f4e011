"""Execution-free metrics of DeSQ (section 3.5 and appendix A): exact match of final queries, fragment-level EM
under key- and position-based alignment, URI-level EM per field, and corpus BLEU.

**Query EM** (:func:`query_em`, the paper's "triple-order-invariant Exact Match ... operating on normalized variable
names"): both queries' variables are renamed in order of first appearance (``?v0, ?v1 ...``, as DeSQ's own
fragments number them), then the texts are compared with the triple patterns (and the FILTERs) of each group in
sorted order. A renaming that does not follow first appearance is a mismatch, as in the paper.

**Structural EM** (:func:`structural_em`, a stronger equivalence kept as its own metric): two queries match when one
becomes the other by reordering the triple patterns (and the FILTERs) inside a group and renaming variables
consistently — whatever order the variables first appear in. Anything else counts: a constant, a property, which
variables a pattern shares, a filter, the projection (and its order), a modifier. Both queries are brought to a
canonical text. Naming the variables canonically is graph canonisation, so it is left to a solver made for it
(bliss, through igraph's ``canonical_permutation``): the query becomes a vertex-coloured graph (a vertex per
variable, per piece of the query that mentions variables, and per variable occurrence in it), whose colours carry
everything that is not a variable name — the piece's text with its variables masked and its place in the query
(the scope), and the occurrence's position in the piece. Two queries are structurally equal exactly when their
graphs are isomorphic, so the solver's canonical order of the variable vertices names the variables the same way
in both; each group's triple patterns and filters are then printed sorted. Prefixed names are expanded, keywords
upper-cased and literals re-quoted, so spelling differences that do not change the query do not count (in both
metrics).

Queries with a connected part of their graph larger than :data:`MAX_VERTICES` are not canonised (:class:`StructureLimitError`): a
predicted one scores "not matched" with a :class:`StructureLimitWarning`, counted in :data:`over_limit`.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from functools import partial
from typing import Any

from sparqlab.kg.profiles import known_prefixes
from sparqlab.sparql.tree import (
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
    iter_terms,
    modifier_texts,
    parse_query,
    query_text,
)

MAX_VERTICES = 2_000
"""Largest connected part of a query's graph handed to the canonisation solver (a triple pattern with two
variables adds 3 vertices; the largest graph among 3,000 sampled benchmark gold queries has 94). Graph
canonisation has no known polynomial bound, and bliss's time grows with the square of a part whose pieces are all
interchangeable (one variable in hundreds of like patterns: ~2 s at this limit on a loaded 2-core machine, see
benchmarks/structural_em_bench.py): the limit keeps a hostile predicted query from stalling a run's scoring."""

over_limit: Counter[str] = Counter()
"""Predicted queries scored "not matched" because they exceeded :data:`MAX_VERTICES` (key ``"predicted"``)."""


class StructureLimitError(ValueError):
    """A query too large to canonise within :data:`MAX_VERTICES`."""


class StructureLimitWarning(UserWarning):
    """A predicted query scored "not matched" because it is over :data:`MAX_VERTICES`."""


_MASK = "\x00"  # stands for a variable in a piece's colour text; no SPARQL token prints as a NUL


def _units(query: Query, scope: str = "") -> Iterator[tuple[str, Callable[[TermPrinter], str]]]:
    """The query's smallest pieces that mention variables, each with its place in the query (``scope``): the
    pieces a structurally equal query may reorder (triple patterns, filters of one group) share a scope."""
    head = dataclasses.replace(query, named=[])
    yield scope + "head", lambda show: head_text(head, show)
    for number, (name, named) in enumerate(query.named):
        yield from _units(named, f"{scope}with{number}:{name}/")
    yield from _group_units(query.where, scope + "where/")
    for number in range(len(modifier_texts(query))):
        yield scope + f"mod{number}", partial(_modifier_text, query, number)


def _modifier_text(query: Query, number: int, show: TermPrinter) -> str:
    return modifier_texts(query, show)[number]


def _shown(term: Term, show: TermPrinter) -> str:
    return show(term)


def _group_units(group: Group, scope: str) -> Iterator[tuple[str, Callable[[TermPrinter], str]]]:
    place = 0
    for element in group.elements:
        if isinstance(element, Triple | Filter):
            kind = "triple" if isinstance(element, Triple) else "filter"
            yield scope + kind, partial(element_text, element, ordered=True)
            continue
        place += 1
        inner = f"{scope}{type(element).__name__}{place}/"
        if isinstance(element, Bind | InlineValues | Include):
            yield inner, partial(element_text, element, ordered=True)
        elif isinstance(element, Group):
            yield from _group_units(element, inner)
        elif isinstance(element, Optional | Minus):
            yield from _group_units(element.group, inner)
        elif isinstance(element, UnionOf):
            for branch, part in enumerate(element.groups):
                yield from _group_units(part, f"{inner}{branch}/")
        elif isinstance(element, GraphOf | Service):
            name = element.name if isinstance(element, GraphOf) else element.endpoint
            yield inner + "name", partial(_shown, name)
            yield from _group_units(element.group, inner)
        elif isinstance(element, SubSelect):
            yield from _units(element.query, inner)


def query_graph(tree: Query) -> tuple[list[str], list[tuple[int, int]], list[Term]]:
    """The query as a vertex-coloured graph: ``(colours, edges, variables)``, where vertex ``i < len(variables)``
    is ``variables[i]``. Each piece of :func:`_units` that mentions a variable is a vertex coloured by its scope
    and its text with every variable masked; its ``k``-th variable occurrence is a vertex coloured by that text and
    ``k``, joined to the piece and to the variable. A colour-preserving isomorphism between two such graphs is
    exactly a variable renaming plus a reordering of same-scope pieces, i.e. structural equality."""
    index: dict[Term, int] = {}
    variables: list[Term] = []
    pieces: list[tuple[str, list[Term]]] = []
    for scope, render in _units(tree):
        occurrences: list[Term] = []

        def show(term: Term, seen: list[Term] = occurrences) -> str:
            if term.is_variable:
                seen.append(term)
                return _MASK
            return default_term(term)

        text = render(show)
        if not occurrences:
            continue
        pieces.append((f"{scope}:{text}", occurrences))
        for term in occurrences:
            if term not in index:
                index[term] = len(variables)
                variables.append(term)
    colours = [f"variable:{term.kind}" for term in variables]
    edges: list[tuple[int, int]] = []
    for template, occurrences in pieces:
        piece = len(colours)
        colours.append(template)
        for position, term in enumerate(occurrences):
            edges += [(piece, len(colours)), (len(colours), index[term])]
            colours.append(f"{template}\x01{position}")
    return colours, edges, variables


def _canonical_order(colours: list[int], edges: list[tuple[int, int]]) -> list[int]:
    """The vertices in a canonical order of the coloured graph: isomorphic graphs give orders that an isomorphism
    maps onto each other. Each connected component is canonised on its own and the components are sorted by their
    canonical graphs (the canonical form of a disjoint union): the solver's time grows with the square of a
    component's size when its parts are interchangeable, and a query's symmetric parts are mostly separate
    components (the same pattern on fresh variables, repeated).

    Raises :class:`StructureLimitError` when a component has more than :data:`MAX_VERTICES` vertices."""
    import igraph

    graph = igraph.Graph(n=len(colours), edges=edges)
    keyed = []
    for component in graph.connected_components():
        members = sorted(component)
        if len(members) > MAX_VERTICES:
            raise StructureLimitError(f"a connected part of the query's graph has {len(members):,} vertices, "
                                      f"more than the limit of {MAX_VERTICES:,} for structural EM")
        part = graph.induced_subgraph(members) if len(members) > 1 else None
        # induced_subgraph numbers the (sorted) members in order; igraph 1.0's canonical_permutation gives, at place j, the
        # vertex that goes to place j of the canonical graph (the order permute_vertices takes)
        places = part.canonical_permutation(color=[colours[v] for v in members]) if part else [0]
        order = [members[v] for v in places]
        where = {vertex: place for place, vertex in enumerate(order)}
        shape = sorted(tuple(sorted((where[members[a]], where[members[b]]))) for a, b in part.get_edgelist()) \
            if part else []
        keyed.append(((len(order), [colours[v] for v in order], shape), order))
    keyed.sort(key=lambda item: item[0])
    return [vertex for _, order in keyed for vertex in order]


def canonical_form(query: str | Query) -> str:
    """The canonical text of a query under structural EM (equal texts ⇔ structurally equal queries).

    Raises :class:`~sparqlab.sparql.tree.SparqlParseError` when ``query`` is text that does not parse, and
    :class:`StructureLimitError` when a connected part of its graph has more than :data:`MAX_VERTICES` vertices.
    """
    tree = parse_query(query, known_prefixes()) if isinstance(query, str) else query
    colours, edges, variables = query_graph(tree)
    rank = {colour: number for number, colour in enumerate(sorted(set(colours)))}
    order = [vertex for vertex in _canonical_order([rank[c] for c in colours], edges) if vertex < len(variables)]
    return _numbered_text(tree, {variables[vertex]: number for number, vertex in enumerate(order)})


def _numbered_text(tree: Query, number: Mapping[Term, int]) -> str:
    """The query's text with each variable (blank node) written as ``?v<n>`` (``_:b<n>``) by ``number`` and each
    group's triple patterns and filters sorted: what both EMs compare."""
    def show(term: Term) -> str:
        if term.kind == "var":
            return f"?v{number[term]}"
        return f"_:b{number[term]}" if term.kind == "bnode" else default_term(term)

    return query_text(tree, show, ordered=True)


def structural_em(predicted: str | None, gold: str) -> int:
    """1 when ``predicted`` matches ``gold`` under structural EM, else 0 (also when ``predicted`` is missing, does
    not parse, or is over :data:`MAX_VERTICES`: the last warns and is counted in :data:`over_limit`). A gold query
    that does not parse or is over the limit raises, since nothing can be scored against it."""
    gold_form = canonical_form(gold)
    if not predicted:
        return 0
    try:
        return int(canonical_form(predicted) == gold_form)
    except SparqlParseError:
        return 0
    except StructureLimitError as error:
        over_limit["predicted"] += 1
        warnings.warn(f"scored as not matched: {error}", StructureLimitWarning, stacklevel=2)
        return 0


def first_appearance_form(query: str | Query) -> str:
    """The text :func:`query_em` compares: variables (and blank nodes) named in order of first appearance, each
    group's triple patterns and filters sorted. Raises :class:`~sparqlab.sparql.tree.SparqlParseError` for
    text that does not parse."""
    tree = parse_query(query, known_prefixes()) if isinstance(query, str) else query
    number: dict[Term, int] = {}
    for term in iter_terms(tree):
        if term.is_variable and term not in number:
            number[term] = len(number)
    return _numbered_text(tree, number)


def query_em(predicted: str | None, gold: str) -> int:
    """1 when ``predicted`` equals ``gold`` under DeSQ's EM (section 3.5: triple order free, variables normalised by
    first appearance), else 0 (also when ``predicted`` is missing or does not parse). A gold query that does not
    parse raises."""
    gold_form = first_appearance_form(gold)
    if not predicted:
        return 0
    try:
        return int(first_appearance_form(predicted) == gold_form)
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
           fields: Sequence[str] = ("id", "label", "description"),
           unknown: Collection[str] = ()) -> dict[str, tuple[int, int]]:
    """Per field, matched and total gold URI slots of one example (section 3.5): a gold slot is aligned with the
    predicted slot of the same placeholder; values compared after :func:`normalise_fragment`. ``unknown``: the
    placeholders of gold slots whose label and description no source knows — scored for their id only (an
    unknown label is no gold to compare with)."""
    slots = {str(entry.get("placeholder")): entry for entry in predicted}
    result = {}
    for name in fields:
        matched = total = 0
        for entry in gold:
            if name != "id" and str(entry.get("placeholder")) in unknown:
                continue
            guess = slots.get(str(entry.get("placeholder")), {}).get(name)
            total += 1
            matched += int(guess is not None and normalise_fragment(guess) == normalise_fragment(entry.get(name, "")))
        result[name] = (matched, total)
    return result


def corpus_bleu(predictions: Sequence[str], references: Sequence[str]) -> float:
    """Corpus-level BLEU (section 3.5) by sacreBLEU with its standard settings (4-grams, the ``13a`` tokeniser,
    exponential smoothing, case kept), one reference per prediction; in [0, 1] (sacreBLEU's score / 100)."""
    import sacrebleu

    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    return sacrebleu.corpus_bleu(list(predictions), [list(references)]).score / 100


__all__ = ["MAX_VERTICES", "StructureLimitError", "StructureLimitWarning", "canonical_form", "corpus_bleu",
           "first_appearance_form", "fragment_em", "normalise_fragment", "over_limit", "query_em", "query_graph",
           "structural_em", "uri_em"]
