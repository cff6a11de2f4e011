"""Typed terms, typed solution mappings, lexicalisation, similarity and compatibility (paper Sect. 3, Defs 4–9).

Implementation policies (the paper leaves them to the implementation; each is fixed for one evaluation):

- **Typed terms** (Def. 4): :class:`TypedTerm` with ``origin`` ``"rdf"`` (an RDF term as the KG returns it: kind
  ``uri`` / ``literal`` / ``bnode``, value, datatype, language) or ``"gen"`` (a generated term). A generated term
  is identified by its text: parsing the same output string twice reuses the same term (App. A.1, "reuses an
  existing t_s"). Plain literals carry no datatype (``xsd:string`` is dropped), as the KG layer writes them.
- **Canonical lexicalisation** (Def. 5, Remark 1), :class:`Lexicaliser`: ``Canon`` of an IRI is its label
  (the KG profile's label predicate, preferring the profile's label languages in order, then the smallest
  string); without a label, the IRI's last path/fragment segment, percent-decoded. A literal's ``Canon`` is its
  lexical form; a blank node's is ``_:`` + its id. ``Lex`` of a generated term is its text. Labels are fetched
  from the KG in batches (``SELECT ... VALUES``) and cached for the evaluation.
- **String similarity** ``Str≃`` (Def. 6): one of :data:`SIMILARITIES`, all symmetric with values in [0, 1]:
  ``exact`` (1 iff the strings are identical), ``normalised`` (default: 1 iff equal after Unicode NFKC,
  case folding, whitespace collapsing and stripping surrounding punctuation, else 0), ``jaccard`` (token-set
  Jaccard of the normalised strings) and ``ratio`` (difflib's matching ratio of the normalised strings).
- **Thresholds** θ(v) default 1 (Def. 6); a GenOp may set θ for its output variables (see ``syntax``).
- **Representatives** (Def. 7): the classes of the reflexive-transitive closure of ≈_v are computed over the
  *universe of v*: every typed term that has bound ``v`` so far in the evaluation (the finite set Def. 7 relies
  on, as discovered). The total order ⪯ puts RDF terms before generated ones, then orders by (kind, value,
  datatype, language). As Sim is 1 between RDF terms only when they are equal, classes are singletons unless a
  generated term links them; on RDF-only data compatibility is plain equality (Proposition 1).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Awaitable, Callable, Iterable, Iterator
from collections.abc import Mapping as AbcMapping
from dataclasses import dataclass, field
from functools import lru_cache, total_ordering
from typing import Any, Literal
from urllib.parse import unquote

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"


@total_ordering
@dataclass(frozen=True, slots=True)
class TypedTerm:
    """A typed term ``(t, τ)`` (Def. 4), ordered by the total order ⪯ of Def. 7 (RDF terms before generated
    ones, then kind, value, datatype, language)."""

    origin: Literal["rdf", "gen"]
    kind: str  # "uri" | "literal" | "bnode" for rdf; "gen" for generated terms
    value: str
    datatype: str = ""
    lang: str = ""
    order_key: tuple = field(init=False, repr=False, compare=False)
    """The order ⪯ as a tuple (``origin != "rdf"`` first: RDF terms before generated ones), computed once."""

    @classmethod
    def gen(cls, text: str) -> TypedTerm:
        """The generated term whose textual realisation ``Lex`` is ``text``."""
        return cls("gen", "gen", text)

    @classmethod
    def rdf(cls, kind: str, value: str, datatype: str | None = None, lang: str | None = None) -> TypedTerm:
        """An RDF term; ``xsd:string`` / ``rdf:langString`` datatypes are dropped (plain literals). Terms are
        interned (one object per term while it is in the cache), so store rows convert without building a
        dataclass per cell and equal terms compare by identity first."""
        return rdf_term(kind, value, datatype, lang)

    @property
    def is_gen(self) -> bool:
        return self.origin == "gen"

    def __post_init__(self) -> None:
        object.__setattr__(self, "order_key", (self.origin != "rdf", self.kind, self.value, self.datatype, self.lang))

    def __lt__(self, other: TypedTerm) -> bool:
        return self.order_key < other.order_key

    def __str__(self) -> str:
        return self.value


@lru_cache(maxsize=1 << 15)
def rdf_term(kind: str, value: str, datatype: str | None = None, lang: str | None = None) -> TypedTerm:
    """:meth:`TypedTerm.rdf` without the method call (converting store rows cell by cell)."""
    if kind not in ("uri", "literal", "bnode"):
        raise ValueError(f"RDF term kind must be uri, literal or bnode, not {kind!r}")
    if datatype in (XSD_STRING, RDF_LANGSTRING):
        datatype = None
    return TypedTerm("rdf", kind, value, datatype or "", (lang or "").lower())


class Mu(AbcMapping):
    """A typed solution mapping (Def. 4): an immutable, hashable partial function from variable names (without
    ``?``) to :class:`TypedTerm`."""

    __slots__ = ("_data", "_hash")

    def __init__(self, data: AbcMapping[str, TypedTerm] | Iterable[tuple[str, TypedTerm]] = ()):
        self._data = dict(data)
        self._hash = hash(frozenset(self._data.items()))

    def __getitem__(self, var: str) -> TypedTerm:
        return self._data[var]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mu) and self._hash == other._hash and self._data == other._data

    def __repr__(self) -> str:
        inner = ", ".join(f"?{v}↦{t.value!r}({t.origin})" for v, t in sorted(self._data.items()))
        return "{" + inner + "}"

    @property
    def dom(self) -> frozenset[str]:
        return frozenset(self._data)

    def restrict(self, variables: Iterable[str]) -> Mu:
        """``μ|_L``: the restriction to ``variables`` (``μ`` itself when it binds nothing outside them)."""
        if isinstance(variables, frozenset | set) and self._data.keys() <= variables:
            return self
        kept = {v: self._data[v] for v in variables if v in self._data}
        return self if len(kept) == len(self._data) else Mu(kept)

    def sort_key(self) -> tuple:
        """The order of ``sorted(μ.items())`` (variables in order, terms by ⪯) as one flat tuple that a sort
        compares in C: every binding contributes ``(v, *order_key)``, six fields of the same types at the same
        positions, so flat and nested comparison agree (a shorter domain that is a prefix sorts first in both)."""
        data = self._data
        key: tuple = ()
        for v in sorted(data):
            key += (v, *data[v].order_key)
        return key

    def extend(self, other: AbcMapping[str, TypedTerm]) -> Mu:
        """This mapping with ``other``'s bindings added or replaced (no compatibility check)."""
        return Mu({**self._data, **other})


EMPTY = Mu()


# --- string similarity Str≃ (Def. 6) ------------------------------------------------------------------------

_EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")


@lru_cache(maxsize=65536)
def normalise_text(text: str) -> str:
    """NFKC, case folding, whitespace collapsed, surrounding punctuation stripped (cached: the similarities
    normalise the same labels and generated values once per pair)."""
    text = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return _EDGE_PUNCT.sub("", text)


def _exact(a: str, b: str) -> float:
    return 1.0 if a == b else 0.0


def _normalised(a: str, b: str) -> float:
    return 1.0 if normalise_text(a) == normalise_text(b) else 0.0


def _jaccard(a: str, b: str) -> float:
    ta, tb = set(normalise_text(a).split()), set(normalise_text(b).split())
    if not ta and not tb:
        return 1.0
    return len(ta & tb) / len(ta | tb)


def _ratio(a: str, b: str) -> float:
    na, nb = normalise_text(a), normalise_text(b)
    # SequenceMatcher is not symmetric in general; order the pair so Str≃ is.
    na, nb = sorted((na, nb))
    return difflib.SequenceMatcher(None, na, nb, autojunk=False).ratio()


SIMILARITIES: dict[str, Callable[[str, str], float]] = {
    "exact": _exact, "normalised": _normalised, "jaccard": _jaccard, "ratio": _ratio,
}
"""Symmetric string similarities Str≃ : Σ* × Σ* → [0, 1] by name (see the module docstring)."""

_KEYED = {"exact": lambda s: s, "normalised": normalise_text}
"""Similarities that are 1 exactly when a key function agrees (classes at θ = 1 found by hashing)."""


def get_similarity(name: str) -> Callable[[str, str], float]:
    if name not in SIMILARITIES:
        raise ValueError(f"unknown similarity {name!r}; choose one of {', '.join(SIMILARITIES)}")
    return SIMILARITIES[name]


# --- lexicalisation Canon / Lex (Def. 5) --------------------------------------------------------------------

LabelFetcher = Callable[[list[str]], Awaitable[dict[str, list[tuple[str, str]]]]]
"""Async function: IRIs -> {iri: [(label, language), ...]} (the KG's labels; missing IRIs have none)."""


def iri_fallback(iri: str) -> str:
    """The stable rendering of an IRI without a label: its last segment, percent-decoded."""
    tail = re.split(r"[/#]", iri.rstrip("/#"))[-1]
    return unquote(tail) or iri


class Lexicaliser:
    """``Canon`` for RDF terms and ``Lex`` for generated terms (Def. 5) under the label policy above.

    ``fetch_labels`` reads labels from the KG (``None``: IRIs are rendered by :func:`iri_fallback` only);
    ``languages`` is the order of preferred label languages (``""`` = no language tag).
    """

    def __init__(self, fetch_labels: LabelFetcher | None = None, languages: tuple[str, ...] = ("", "en")):
        self.fetch_labels = fetch_labels
        self.languages = tuple(lang.lower() for lang in languages)
        self._labels: dict[str, str] = {}

    def _choose(self, iri: str, labels: list[tuple[str, str]]) -> str:
        if not labels:
            return iri_fallback(iri)
        rank = {lang: i for i, lang in enumerate(self.languages)}
        return min(labels, key=lambda pair: (rank.get(pair[1].lower(), len(rank)), pair[0]))[0]

    async def prefetch(self, terms: Iterable[TypedTerm]) -> None:
        """Fetch the labels of every IRI among ``terms`` not seen yet (one batch)."""
        missing = sorted({t.value for t in terms if t.origin == "rdf" and t.kind == "uri"} - set(self._labels))
        if not missing:
            return
        found = await self.fetch_labels(missing) if self.fetch_labels else {}
        for iri in missing:
            self._labels[iri] = self._choose(iri, found.get(iri, []))

    def canon(self, term: TypedTerm) -> str:
        """``Canon(t)`` of an RDF term, or ``Lex(t)`` of a generated one (call :meth:`prefetch` first for IRIs)."""
        if term.origin == "gen" or term.kind == "literal":
            return term.value
        if term.kind == "bnode":
            return "_:" + term.value
        if term.value not in self._labels:
            raise KeyError(f"label of {term.value} not fetched (Lexicaliser.prefetch first)")
        return self._labels[term.value]


# --- Sim, representatives and compatibility (Defs 6–9) -----------------------------------------------------

class Compatibility:
    """Variable-indexed similarity ≈_v, representatives ``rep_v`` and canonical compatibility (Defs 6–9).

    ``thresholds`` maps variables to θ(v) ∈ (0, 1] (default 1); ``similarity`` names Str≃. Call
    :meth:`observe` (async, it may fetch labels) with the terms that bind a variable before asking for
    representatives of those terms.
    """

    def __init__(self, lexicaliser: Lexicaliser, similarity: str = "normalised",
                 thresholds: AbcMapping[str, float] | None = None):
        self.lex = lexicaliser
        self.similarity_name = similarity
        self.str_sim = get_similarity(similarity)
        self.thresholds = dict(thresholds or {})
        for var, theta in self.thresholds.items():
            if not 0 < theta <= 1:
                raise ValueError(f"threshold of ?{var} must be in (0, 1], got {theta}")
        self._universe: dict[str, set[TypedTerm]] = {}
        self._gen_vars: set[str] = set()
        self._reps: dict[str, dict[TypedTerm, TypedTerm]] = {}

    def theta(self, var: str) -> float:
        return self.thresholds.get(var, 1.0)

    def sim(self, a: TypedTerm, b: TypedTerm) -> float:
        """``Sim`` of Def. 6 (labels of IRIs must have been fetched)."""
        if a.origin == "rdf" and b.origin == "rdf":
            return 1.0 if a == b else 0.0
        return self.str_sim(self.lex.canon(a), self.lex.canon(b))

    async def observe(self, var: str, terms: Iterable[TypedTerm]) -> None:
        """Add ``terms`` to the universe of ``var`` (fetching labels when generated terms are involved)."""
        universe = self._universe.setdefault(var, set())
        new = set(terms) - universe
        if not new:
            return
        universe |= new
        if any(t.is_gen for t in new):
            self._gen_vars.add(var)
        if var in self._gen_vars:
            await self.lex.prefetch(universe)
        self._reps.pop(var, None)

    def _classes(self, var: str) -> dict[TypedTerm, TypedTerm]:
        """term -> representative over the universe of ``var`` (union-find over the ≈_var edges)."""
        universe = sorted(self._universe.get(var, ()))
        parent = {t: t for t in universe}

        def find(t: TypedTerm) -> TypedTerm:
            while parent[t] != t:
                parent[t] = parent[parent[t]]
                t = parent[t]
            return t

        def union(a: TypedTerm, b: TypedTerm) -> None:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)  # the root stays the ⪯-minimal member

        theta = self.theta(var)
        gens = [t for t in universe if t.is_gen]
        if gens and theta == 1.0 and self.similarity_name in _KEYED:
            key = _KEYED[self.similarity_name]
            first: dict[str, TypedTerm] = {}
            gen_keys = {key(t.value) for t in gens}
            for t in universe:
                k = key(self.lex.canon(t))
                if t.is_gen or k in gen_keys:
                    if k in first:
                        union(first[k], t)
                    else:
                        first[k] = t
        else:  # Str≃ is symmetric: each pair once (a generated term against the RDF terms and the later ones)
            rdf_terms = [t for t in universe if not t.is_gen]
            for i, g in enumerate(gens):
                for t in (*rdf_terms, *gens[i + 1:]):
                    if self.sim(g, t) >= theta:
                        union(g, t)
        return {t: find(t) for t in universe}

    def rep(self, var: str, term: TypedTerm) -> TypedTerm:
        """``rep_v(α)`` (Def. 7); a term outside the universe of ``var`` is its own representative."""
        if var not in self._gen_vars:
            return term  # no generated term ever bound var: classes are singletons
        reps = self._reps.get(var)
        if reps is None:
            reps = self._reps[var] = self._classes(var)
        return reps.get(term, term)

    def compat(self, var: str, a: TypedTerm, b: TypedTerm) -> bool:
        """``Compat_v(α, β)`` (Def. 8)."""
        return a == b or self.rep(var, a) == self.rep(var, b)

    def compatible(self, m1: Mu, m2: Mu) -> bool:
        """μ1 ∼ μ2 (Def. 9)."""
        return all(self.compat(v, m1[v], m2[v]) for v in m1.dom & m2.dom)

    def union(self, m1: Mu, m2: Mu) -> Mu:
        """The canonical union μ1 ⊎ μ2 (Def. 9); shared variables get their representative."""
        out = dict(m2)
        out.update(m1)
        for v in m1.dom & m2.dom:
            out[v] = self.rep(v, m1[v])
        return Mu(out)

    async def observe_sets(self, variables: Iterable[str], *sets: Iterable[Mu]) -> None:
        """Observe every binding of ``variables`` in the given mapping sets."""
        for var in variables:
            await self.observe(var, (m[var] for s in sets for m in s if var in m))

    def join_key(self, mu: Mu, shared: tuple[str, ...]) -> tuple[TypedTerm, ...]:
        return tuple(self.rep(v, mu[v]) for v in shared)


def group_by_domain(mappings: Iterable[Mu]) -> dict[frozenset[str], list[Mu]]:
    groups: dict[frozenset[str], list[Mu]] = {}
    for m in mappings:
        groups.setdefault(m.dom, []).append(m)
    return groups


def mapping_to_json(mu: Mu, variables: Iterable[str] | None = None) -> dict[str, Any]:
    """``{var: {"value": ..., "origin": "rdf"|"gen"}}`` (variables without ``?``)."""
    names = list(variables) if variables is not None else sorted(mu)
    return {v: {"value": mu[v].value, "origin": mu[v].origin} for v in names if v in mu}
