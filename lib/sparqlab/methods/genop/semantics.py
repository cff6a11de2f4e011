"""Evaluation of generative queries over typed solution mappings (paper Sects 3, 4 and 6).

**One step** ``⟦P⟧^S`` (Sect. 3 clauses, Def. 10). BGPs go to the KG (``SELECT DISTINCT`` through
``KnowledgeGraph.query`` or a method context's ``ctx.query``); every other operator works on sets of
:class:`~sparqlab.methods.genop.terms.Mu` with the compatibility of Defs 8–9. Context supply, the one place where the
paper's text admits several readings, is fixed as follows (the reading under which Examples 4/5 and Proposition 6
hold):

- A GenOp occurrence draws its contexts from its *group*: the operands of the left-deep chain of Joins it belongs
  to (a SPARQL group), i.e. its surrounding pattern within that group (Def. 2). The group's non-generative
  operands are joined first; its GenOps then fire in the topological order of the dependency graph, each on the
  join of everything before it (App. B.1 staging), and their rows are joined in.
- The right operand of Opt / Minus / Diff additionally receives the left operand's mappings as supply (the Join
  branch of Opt sees P1), so ``OPTIONAL { GENOP(... ?x ...) }`` can use ``?x`` bound outside.
- The fixpoint supply ``S`` (the previous iterate of the consequence operator Φ_P, Def. 16) is offered to every
  GenOp on top of its local contexts; a single pass uses ``S = ∅``.
- Contexts enter a GenOp restricted to its placeholders (``μ|X``, Prop. 7); a GenOp without placeholders runs
  once on ``{∅}`` (base mode, Prop. 3). A GenOp's rows are ``μ|X ⊎ ν`` and the surrounding Join reattaches the
  rest of each context.
- ``Diff_F`` keeps μ1 only when ``F`` is ⊥ for every compatible μ2 (the paper's clause 6: an error ε removes
  μ1). ``Opt_F`` is ``Filter_F(P1 Join P2) ∪ P1 Diff'_F P2`` where ``Diff'`` keeps μ1 when ``F`` is not ⊤
  (SPARQL's LeftJoin, which treats an error as false; the paper's clause 7 omits F on the Join part and uses its
  strict ``Diff_F``, which would break Proposition 1 — the equivalence with SPARQL on GenOp-free queries). ``=`` in filters is RDF-term equality or compatibility (the paper's atom), not SPARQL's value
  comparison.

**Cycles** (Sect. 6.4, App. E.2–E.3): under every semantics the occurrences of a cyclic SCC C are replaced by the
macro-operator ``GenSCC_C``: every outer binding η (a context restricted to ``X_C``) is handed to
:meth:`Evaluation.eval_scc` (Algorithm 1), and each occurrence of C evaluates to ``{η ⊎ ρ | ρ ∈ R_C(η)}``;
EvalSCC runs once per (C, η) in an evaluation (the macro-operator's value for that outer binding), so the
fixpoint semantics iterate over the condensed, acyclic pattern (App. E.3: "independent of whether Sem is lfp,
strat, or wfs"). An SCC with a negative edge inside it (a cycle through negation, what makes a query
non-stratified) is left to the alternating fixpoint of ``well-founded`` (and to ``lfp``'s chain), whose
undefined truth value condensing would erase. ``condense=False`` (ours before) condenses under ``single-pass``
and ``stratified`` only: every other GenOp is evaluated by Def. 10 on its contexts, so a self-supporting cycle
yields nothing under ``lfp`` / ``well-founded`` (Example 1's lfp is then empty).

**Semantics** (``semantics`` option; ``auto`` picks by the query class):

- ``single-pass`` (auto for an acyclic query whose every GenOp finds its placeholders bound by the operands
  before it in its own group, :attr:`~sparqlab.methods.genop.dependency.Dependencies.single_pass_exact`):
  ``⟦P⟧^∅``. There it provably equals the least fixpoint (Theorem 8): a later iterate's supply can only add
  contexts whose GenOp rows the group's join removes again.
- ``lfp`` (auto for the other acyclic, monotone queries): the Kleene chain ``S_0 = ∅, S_{n+1} = Φ_P(S_n)`` until
  it is stable (Def. 17, Thm 1); needed when a GenOp takes its placeholders from elsewhere (a UNION sibling, an
  OPTIONAL's left side, a later operand of the enclosing group), where a single pass gives less. An acyclic query
  that is not monotone gets ``stratified`` (its strata exist, Def. 15).
- ``stratified`` (auto for cyclic stratified): ``S_i = lfp(S ↦ Φ_{P≤i}(S ∪ S_{i-1}))`` per stratum (Def. 19),
  higher strata disabled by the pruning of Def. 2.
- ``well-founded`` (auto for non-stratified): the alternating fixpoint of Def. 21 over
  ``Cand(P) = Γ(∅)`` with ``Γ(J) = lfp(Φ^J_P)``; in ``Φ^J`` the right operands of Minus / Diff (and the Diff
  branch of Opt) are evaluated with supply ``J`` (Def. 20). Rows are true (``rows``) or undefined
  (``undefined``).

The iteration is over complete mappings of the pattern under the top projection; the projection is applied last.
"""

from __future__ import annotations

import functools
import itertools
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from tqdm.auto import tqdm

from sparqlab.core.event_loops import run_sync
from sparqlab.kg.results import QueryResult, Term
from sparqlab.methods.genop.algebra import (
    BGP,
    And,
    Bound,
    Diff,
    Empty,
    EqConst,
    EqVar,
    Filter,
    Formula,
    GenOp,
    Join,
    Minus,
    Not,
    Opt,
    Or,
    Pattern,
    Proj,
    TrueF,
    Union,
    join_operands,
    remove,
)
from sparqlab.methods.genop.dependency import Dependencies, analyse
from sparqlab.methods.genop.oracle import SENTINEL, Oracle
from sparqlab.methods.genop.pushdown import generated_variables, pushdown_query
from sparqlab.methods.genop.syntax import GenQuery, parse_genop_query
from sparqlab.methods.genop.terms import (
    EMPTY,
    Compatibility,
    Lexicaliser,
    Mu,
    TypedTerm,
    group_by_domain,
    mapping_to_json,
    rdf_term,
)
from sparqlab.platform.config import MethodConfig

Semantics = Literal["auto", "single-pass", "lfp", "stratified", "well-founded"]
SEMANTICS: tuple[str, ...] = get_args(Semantics)

QueryFn = Callable[[str], Awaitable[QueryResult]]
"""``await query(sparql)`` -> QueryResult (raises a KGError on failure)."""


class GenOpEvaluationError(RuntimeError):
    """Evaluation could not follow the semantics (a BGP result cut by the row cap, a fixpoint that does not
    stabilise within ``max_iterations``)."""


@dataclass(frozen=True)
class EvalSettings(MethodConfig):
    """Execution parameters of an evaluation (paper Sect. 6); nested in
    :class:`~sparqlab.methods.genop.method.GenOpConfig` as its ``evaluation`` field (``-o evaluation.k=3``).

    - ``semantics``: ``auto`` (by the query class: the fixpoint semantics, and a single pass only for an acyclic
      query where it provably coincides with them, Theorem 8), ``single-pass``, ``lfp``, ``stratified`` or
      ``well-founded``.
    - ``k``: proposal bound K (tuples per Propose call, Alg. 1).
    - ``b``: domain cap B (values per generated variable of an SCC, Alg. 1).
    - ``t``: repairs T per failing candidate (Alg. 1).
    - ``r``: validation repetitions R (Alg. 1).
    - ``similarity``: Str≃ (``exact``, ``normalised``, ``jaccard``, ``ratio``; Def. 6,
      :mod:`sparqlab.methods.genop.terms`).
    - ``label_languages``: preferred label languages for ``Canon``.
    - ``max_iterations``: bound on every Kleene chain (an error beyond it).
    - ``condense``: replace cyclic SCCs by ``GenSCC`` macro-operators under every semantics (Sect. 6.4; ``False``:
      under single-pass and stratified only, ours before).
    - ``pushdown``: evaluate maximal GenOp-free subpatterns in the store as one query each where Proposition 1
      makes that exact (:mod:`sparqlab.methods.genop.pushdown`; ``False``: operator by operator).
    """

    semantics: Semantics = "auto"
    k: int = 5
    b: int = 10
    t: int = 1
    r: int = 1
    similarity: Literal["exact", "normalised", "jaccard", "ratio"] = "normalised"
    label_languages: tuple[str, ...] = ("", "en")
    max_iterations: int = 50
    condense: bool = True
    pushdown: bool = True

    def __post_init__(self) -> None:
        if self.semantics not in SEMANTICS:
            raise ValueError(f"unknown semantics {self.semantics!r}; choose one of {', '.join(SEMANTICS)}")
        for name in ("k", "b", "r"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name.upper()} must be at least 1")
        if self.t < 0 or self.max_iterations < 1:
            raise ValueError("T must be >= 0 and max_iterations >= 1")


@dataclass
class GenResult:
    """The answer of one generative query: projected ``rows`` (true), ``undefined`` rows (well-founded only),
    the query class, the semantics used, model-call counts and an event trace for inspection."""

    query: GenQuery
    dependencies: Dependencies
    semantics: str
    rows: list[Mu]
    undefined: list[Mu]
    model_calls: int
    oracle_stats: dict[str, Any]
    iterations: list[int]
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def query_class(self) -> str:
        return self.dependencies.query_class

    def to_json(self) -> dict[str, Any]:
        """``{"class", "model_calls", "rows": [{VAR: {"value", "origin"}}]}`` (+ ``undefined`` when the query is
        non-stratified)."""
        out: dict[str, Any] = {"class": self.query_class, "model_calls": self.model_calls,
                               "rows": [mapping_to_json(m, self.query.projection) for m in self.rows]}
        if self.semantics == "well-founded":
            out["undefined"] = [mapping_to_json(m, self.query.projection) for m in self.undefined]
        return out

    def to_query_result(self) -> QueryResult:
        """The true rows as a KG :class:`QueryResult` (generated values become plain literals)."""
        def term(t: TypedTerm) -> Term:
            if t.origin == "gen":
                return Term("literal", t.value)
            return Term(t.kind, t.value, t.datatype or None, t.lang or None)  # type: ignore[arg-type]

        return QueryResult("select", vars=list(self.query.projection),
                           rows=[{v: term(m[v]) for v in self.query.projection if v in m} for m in self.rows])


def sort_rows(rows: Iterable[Mu]) -> list[Mu]:
    return sorted(rows, key=Mu.sort_key)


def _values(mu: Mu, variables: Iterable[str]) -> dict[str, str]:
    """``{var: value}`` for an event (generated values of an SCC; their origin is always ``gen``)."""
    return {v: mu[v].value for v in variables if v in mu}


class Evaluation:
    """The evaluation of one query: KG access, oracle, compatibility state, memo tables and the event trace.

    ``query_kg`` runs BGP and label queries; ``label_predicate`` is the KG's label IRI (rdfs:label by default).
    """

    def __init__(self, query: GenQuery, query_kg: QueryFn, oracle: Oracle, settings: EvalSettings | None = None,
                 label_predicate: str = "http://www.w3.org/2000/01/rdf-schema#label", progress: bool = False):
        self.query = query
        self.progress = progress  # a tqdm bar over candidate validation (display only, not a setting)
        self.query_kg = query_kg
        self.oracle = oracle
        self.settings = settings or EvalSettings()
        self.label_predicate = label_predicate
        self.lex = Lexicaliser(self._fetch_labels, self.settings.label_languages)
        self.compat = Compatibility(self.lex, self.settings.similarity, query.thresholds)
        self.deps = analyse(query.pattern)
        self.position = {g: i for i, g in enumerate(self.deps.order())}
        self.events: list[dict[str, Any]] = []
        self._bgp: dict[BGP, set[Mu]] = {}
        self._pushed: dict[Pattern, set[Mu] | None] = {}
        self._generated = generated_variables(query.pattern)
        self._scc: dict[tuple[tuple[int, ...], Mu], list[Mu]] = {}
        self.condense = True
        self.split_negative_cycles = False
        self.iterations: list[int] = []

    # --- KG access -------------------------------------------------------------------------------------------

    async def _fetch_labels(self, iris: list[str]) -> dict[str, list[tuple[str, str]]]:
        found: dict[str, list[tuple[str, str]]] = defaultdict(list)
        safe = [i for i in iris if not any(c in i for c in '<>"{}|^`\\ \n\t')]
        for start in range(0, len(safe), 200):
            values = " ".join(f"<{i}>" for i in safe[start:start + 200])
            result = await self.query_kg(
                f"SELECT ?s ?l WHERE {{ VALUES ?s {{ {values} }} ?s <{self.label_predicate}> ?l }}")
            for row in result.rows:
                if "s" in row and "l" in row:
                    found[row["s"].value].append((row["l"].value, row["l"].lang or ""))
        return found

    async def eval_bgp(self, p: BGP) -> set[Mu]:
        """``⟦BGP⟧_G`` by the KG (memoised for the evaluation)."""
        if p in self._bgp:
            return self._bgp[p]
        body = " . ".join(" ".join(t) for t in p.triples)
        names = sorted(p.variables)
        if names:
            rows = await self._select(f"SELECT DISTINCT {' '.join('?' + v for v in names)} WHERE {{ {body} }}",
                                      f"BGP {{ {body} }}")
        else:
            result = await self.query_kg(f"ASK {{ {body} }}")
            rows = {EMPTY} if result.boolean else set()
        self._bgp[p] = rows
        return rows

    async def _select(self, sparql: str, what: str) -> set[Mu]:
        result = await self.query_kg(sparql)
        if result.truncated:
            raise GenOpEvaluationError(f"the KG cut the result of {what} at {len(result.rows)} rows; "
                                       "raise the KG's max_rows to evaluate this query exactly")
        return {Mu({v: rdf_term(t.type, t.value, t.datatype, t.lang) for v, t in row.items()}) for row in result.rows}

    async def eval_pushed(self, p: Pattern) -> set[Mu] | None:
        """``⟦p⟧`` of a GenOp-free ``p`` by the store in one query (Proposition 1; memoised, since it does not
        depend on the supply), or ``None`` when ``p`` must be evaluated in the algebra (:mod:`.pushdown`)."""
        if p not in self._pushed:
            pushed = pushdown_query(p, self._generated)
            self._pushed[p] = None if pushed is None else await self._select(pushed[0], "a GenOp-free subpattern")
        return self._pushed[p]

    # --- set operations over typed mappings ------------------------------------------------------------------

    async def _prepare(self, left: set[Mu], right: set[Mu]) -> None:
        shared = set().union(*(m.dom for m in left)) & set().union(*(m.dom for m in right))
        await self.compat.observe_sets(shared, left, right)

    def _matches(self, left: set[Mu], right: set[Mu]) -> Iterable[tuple[Mu, list[Mu], bool]]:
        """For each μ1: the compatible μ2 and whether any compatible μ2 shares a variable with it."""
        right_groups = group_by_domain(right)
        for d1, ls in group_by_domain(left).items():
            indexes = []
            for d2, rs in right_groups.items():
                shared = tuple(sorted(d1 & d2))
                index: dict[tuple, list[Mu]] = defaultdict(list)
                for m in rs:
                    index[self.compat.join_key(m, shared)].append(m)
                indexes.append((shared, index))
            for m1 in ls:
                found, overlapping = [], False
                for shared, index in indexes:
                    hits = index.get(self.compat.join_key(m1, shared), [])
                    found.extend(hits)
                    overlapping = overlapping or (bool(hits) and bool(shared))
                yield m1, found, overlapping

    async def join(self, left: set[Mu], right: set[Mu]) -> set[Mu]:
        """``Join``: ``{μ1 ⊎ μ2 | μ1 ∼ μ2}``."""
        if not left or not right:
            return set()
        await self._prepare(left, right)
        return {self.compat.union(m1, m2) for m1, hits, _ in self._matches(left, right) for m2 in hits}

    async def minus(self, left: set[Mu], right: set[Mu]) -> set[Mu]:
        """``Minus``: μ1 survives unless some compatible μ2 shares a variable with it."""
        if not left or not right:
            return set(left)
        await self._prepare(left, right)
        return {m1 for m1, _, overlapping in self._matches(left, right) if not overlapping}

    async def diff(self, left: set[Mu], right: set[Mu], formula: Formula, error_keeps: bool = False) -> set[Mu]:
        """``Diff_F`` (clause 6): μ1 survives iff F is ⊥ on μ1 ⊎ μ2 for every compatible μ2; ``error_keeps``: an
        error ε keeps μ1 too (SPARQL's LeftJoin, used by ``Opt``; module docstring)."""
        if not left or not right:
            return set(left)
        await self._prepare(left, right)
        pairs = [(m1, [self.compat.union(m1, m2) for m2 in hits]) for m1, hits, _ in self._matches(left, right)]
        await self._observe_formula(formula, [u for _, us in pairs for u in us])
        survives = (lambda t: t is not True) if error_keeps else (lambda t: t is False)
        return {m1 for m1, unions in pairs if all(survives(self.truth(formula, u)) for u in unions)}

    async def _observe_formula(self, f: Formula, mappings: list[Mu]) -> None:
        if isinstance(f, EqConst):
            await self.compat.observe(f.var, [f.const, *(m[f.var] for m in mappings if f.var in m)])
        elif isinstance(f, EqVar):
            await self.compat.observe(f.var, [m[v] for m in mappings for v in (f.var, f.other) if v in m])
        elif isinstance(f, Not):
            await self._observe_formula(f.arg, mappings)
        elif isinstance(f, And | Or):
            for a in f.args:
                await self._observe_formula(a, mappings)

    def truth(self, f: Formula, mu: Mu) -> bool | None:
        """``F^μ`` ∈ {True, False, None (= error ε)} (Sect. 3 "Filter")."""
        if isinstance(f, TrueF):
            return True
        if isinstance(f, Bound):
            return f.var in mu
        if isinstance(f, EqConst):
            if f.var not in mu:
                return None
            return mu[f.var] == f.const or self.compat.compat(f.var, mu[f.var], f.const)
        if isinstance(f, EqVar):
            if f.var not in mu or f.other not in mu:
                return None
            return mu[f.var] == mu[f.other] or self.compat.compat(f.var, mu[f.var], mu[f.other])
        if isinstance(f, Not):
            value = self.truth(f.arg, mu)
            return None if value is None else not value
        values = [self.truth(a, mu) for a in f.args]  # And / Or with SPARQL's error handling
        if isinstance(f, And):
            return False if False in values else None if None in values else True
        return True if True in values else None if None in values else False

    # --- GenOps -------------------------------------------------------------------------------------------------

    async def render(self, g: GenOp, theta: Mu) -> str:
        """``π^[θ]``: placeholders bound in θ lexicalised, unbound ones as the sentinel."""
        await self.lex.prefetch(theta.values())
        return g.instantiate({x: self.lex.canon(theta[x]) if x in theta else SENTINEL.format(var=x)
                              for x in g.inputs})

    async def genop_rows(self, g: GenOp, contexts: Iterable[Mu]) -> set[Mu]:
        """``⟦g⟧^{S|g}`` (Def. 10), or the rows of the macro-operator ``GenSCC_C`` when g is on a cycle."""
        scc = self._condensed(g.index)
        if scc is not None:
            members = [self.deps.genops[i] for i in scc]
            y_c = {y for m in members for y in m.outputs}
            x_c = {x for m in members for x in m.inputs} - y_c
            etas = {c.restrict(x_c) for c in contexts if x_c <= c.dom}
            rows: set[Mu] = set()
            for eta in sorted(etas, key=Mu.sort_key):
                rows |= {eta.extend(rho) for rho in await self.eval_scc(scc, eta)}
            return rows
        thetas = {EMPTY} if not g.inputs else {c.restrict(g.inputs) for c in contexts if g.inputs <= c.dom}
        rows = set()
        for theta in sorted(thetas, key=Mu.sort_key):
            prompt = await self.render(g, theta)
            tuples = await self.oracle.propose(g.index, g.model, prompt, g.outputs, self.settings.k)
            self.events.append({"event": "propose", "genop": g.name, "prompt": prompt,
                                "outputs": [list(t) for t in tuples]})
            rows |= {theta.extend({y: TypedTerm.gen(v) for y, v in zip(g.outputs, t, strict=True)})
                     for t in tuples}
        return rows

    def _condensed(self, index: int) -> tuple[int, ...] | None:
        """The cyclic SCC replaced by ``GenSCC`` that GenOp ``index`` belongs to, or ``None`` (module docstring)."""
        scc = self.deps.cyclic_scc(index) if self.condense else None
        if scc is None or not self.split_negative_cycles:
            return scc
        inside = set(scc)
        through_negation = any(e.negative and e.source in inside and e.target in inside for e in self.deps.edges)
        return None if through_negation else scc

    async def eval_scc(self, scc: tuple[int, ...], eta: Mu) -> list[Mu]:
        """``EvalSCC(G, P, C, η, K, B, T, R)`` (Algorithm 1): the ``Y_C``-projections of the candidates of
        ``Cand_C(η)`` that pass self-support validation (Def. 23), after up to T repairs each."""
        key = (scc, eta)
        if key in self._scc:
            return self._scc[key]
        s = self.settings
        members = [self.deps.genops[i] for i in scc]
        y_c = sorted({y for m in members for y in m.outputs})
        names = ", ".join(m.name for m in members)
        self.events.append({"event": "scc", "scc": names, "eta": _values(eta, sorted(eta)), "Y_C": y_c,
                            "X_C": sorted({x for m in members for x in m.inputs} - set(y_c))})

        # Candidate enumeration (lines 1-13): propose with the discovered values, sentinels where none exist yet.
        domain: dict[str, list[TypedTerm]] = {v: [] for v in y_c}
        proposed: set[tuple[int, tuple]] = set()
        saturated = False
        while not saturated and any(len(domain[v]) < s.b for v in y_c):
            saturated = True
            for g in members:
                inner = sorted(g.inputs & set(y_c))
                for combo in itertools.product(*(domain[v] or [None] for v in inner)):
                    if (g.index, combo) in proposed:
                        continue
                    proposed.add((g.index, combo))
                    theta = eta.restrict(g.inputs).extend({v: t for v, t in zip(inner, combo, strict=True) if t})
                    prompt = await self.render(g, theta)
                    tuples = await self.oracle.propose(g.index, g.model, prompt, g.outputs, s.k)
                    self.events.append({"event": "propose", "genop": g.name, "prompt": prompt,
                                        "outputs": [list(t) for t in tuples]})
                    for values in tuples:
                        for y, value in zip(g.outputs, values, strict=True):
                            term = TypedTerm.gen(value)
                            if term not in domain[y] and len(domain[y]) < s.b:
                                domain[y].append(term)
                                saturated = False
        self.events.append({"event": "domains", "scc": names,
                            "domains": {v: [t.value for t in ts] for v, ts in domain.items()}})

        # Candidate construction (line 15) and validation with repairs (lines 16-25).
        candidates = [eta.extend(dict(zip(y_c, combo, strict=True)))
                      for combo in itertools.product(*(domain[v] for v in y_c))]
        accepted: list[Mu] = []
        tried: set[Mu] = set()
        for mu in tqdm(candidates, desc=f"EvalSCC {{{names}}}", disable=not self.progress, leave=False):
            tried.add(mu)
            failing = await self.self_support(members, mu)
            self.events.append({"event": "candidate", "scc": names, "candidate": _values(mu, y_c),
                                "accepted": failing is None, "failed": failing.name if failing else None})
            if failing is None:
                accepted.append(mu.restrict(y_c))
                continue
            repairs = 0
            theta = mu.restrict(failing.inputs)
            prompt = await self.render(failing, theta)
            for values in await self.oracle.propose(failing.index, failing.model, prompt, failing.outputs, s.k):
                if repairs >= s.t:
                    break
                repaired = mu.extend({y: TypedTerm.gen(v) for y, v in zip(failing.outputs, values, strict=True)})
                if repaired in tried:
                    continue
                repairs += 1
                tried.add(repaired)
                ok = await self.self_support(members, repaired) is None
                self.events.append({"event": "repair", "scc": names,
                                    "candidate": _values(repaired, y_c), "accepted": ok})
                if ok:
                    accepted.append(repaired.restrict(y_c))
                    break
        result = sort_rows(set(accepted))
        self._scc[key] = result
        return result

    async def self_support(self, members: list[GenOp], mu: Mu) -> GenOp | None:
        """``SS_C(μ)`` (Def. 23) by Validate on fully instantiated prompts; the first failing GenOp, or None."""
        for g in members:
            if not (g.inputs <= mu.dom and set(g.outputs) <= mu.dom):
                return g
            prompt = await self.render(g, mu.restrict(g.inputs))
            candidate = tuple(mu[y].value for y in g.outputs)
            ok = await self.oracle.validate(g.index, g.model, prompt, g.outputs, candidate, self.settings.r)
            self.events.append({"event": "validate", "genop": g.name, "prompt": prompt,
                                "candidate": list(candidate), "accepted": ok})
            if not ok:
                return g
        return None

    # --- the one-step evaluation ⟦P⟧^S (with the negative supply J of Def. 20) ---------------------------------

    async def eval(self, p: Pattern, supply: set[Mu], negative: set[Mu] | None = None) -> set[Mu]:
        """``⟦p⟧^S``; with ``negative`` given, negative subpatterns are evaluated with that supply (``Φ^J``)."""
        if isinstance(p, Empty):
            return {EMPTY}
        if isinstance(p, BGP):
            return set(await self.eval_bgp(p))
        if isinstance(p, GenOp):
            return await self.genop_rows(p, supply)
        if self.settings.pushdown and (pushed := await self.eval_pushed(p)) is not None:
            return pushed
        if isinstance(p, Join):
            return await self._group(join_operands(p), supply, negative)
        if isinstance(p, Filter):
            rows = await self.eval(p.pattern, supply, negative)
            await self._observe_formula(p.formula, list(rows))
            return {m for m in rows if self.truth(p.formula, m) is True}
        if isinstance(p, Proj):
            return {m.restrict(p.variables) for m in await self.eval(p.pattern, supply, negative)}
        if isinstance(p, Union):
            return await self.eval(p.left, supply, negative) | await self.eval(p.right, supply, negative)
        left = await self.eval(p.left, supply, negative)
        right = await self.eval(p.right, supply | left, negative)
        if negative is None:
            negative_right = right
        else:  # Φ^J: the subtracted side sees only J (and the left side as evaluated under J)
            negative_left = await self.eval(p.left, negative, negative)
            negative_right = await self.eval(p.right, negative | negative_left, negative)
        if isinstance(p, Minus):
            return await self.minus(left, negative_right)
        if isinstance(p, Diff):
            return await self.diff(left, negative_right, p.formula)
        if isinstance(p, Opt):
            joined = await self.join(left, right)
            await self._observe_formula(p.formula, list(joined))
            kept = {m for m in joined if self.truth(p.formula, m) is True}
            return kept | await self.diff(left, negative_right, p.formula, error_keeps=True)
        raise TypeError(f"not a pattern: {p!r}")

    async def _group(self, ops: list[Pattern], supply: set[Mu], negative: set[Mu] | None) -> set[Mu]:
        gens = [op for op in ops if isinstance(op, GenOp)]
        plain = [op for op in ops if not isinstance(op, GenOp)]
        if self.settings.pushdown and gens and len(plain) > 1:  # the group's GenOp-free operands as one query
            chain = functools.reduce(Join, plain)
            if await self.eval_pushed(chain) is not None:
                plain = [chain]
        current = {EMPTY}
        for op in plain:
            current = await self.join(current, await self.eval(op, supply, negative))
        for g in sorted(gens, key=lambda g: self.position[g.index]):
            current = await self.join(current, await self.genop_rows(g, current | supply))
        return current

    # --- fixpoints --------------------------------------------------------------------------------------------

    async def lfp(self, step: Callable[[set[Mu]], Awaitable[set[Mu]]], label: str) -> set[Mu]:
        """The Kleene chain ``S_0 = ∅, S_{n+1} = step(S_n)`` until stable (Def. 17); sizes go to the trace."""
        current: set[Mu] = set()
        for n in range(1, self.settings.max_iterations + 1):
            nxt = await step(current)
            self.events.append({"event": "iteration", "fixpoint": label, "n": n, "size": len(nxt),
                                "monotone_step": current <= nxt})
            self.iterations.append(len(nxt))
            if nxt == current:
                return current
            current = nxt
        raise GenOpEvaluationError(f"the fixpoint {label} did not stabilise within {self.settings.max_iterations} "
                                   "iterations (a non-monotone pattern? try semantics='well-founded')")

    async def run(self) -> GenResult:
        """Evaluate the query under the configured semantics."""
        self.iterations = []
        pattern = self.query.pattern
        body = pattern.pattern if isinstance(pattern, Proj) else pattern
        if self.settings.pushdown and not self.deps.genops and isinstance(pattern, Proj):
            body = pattern  # no GenOp: the projection goes to the store with the rest (Proposition 1)
        semantics = self.settings.semantics
        if semantics == "auto":
            semantics = self.deps.auto_semantics
        self.condense = self.settings.condense or semantics in ("single-pass", "stratified")
        self.split_negative_cycles = semantics in ("lfp", "well-founded")
        if semantics == "stratified" and not self.deps.stratified:
            raise ValueError("the query is non-stratified (a cycle through a negative edge); use well-founded")
        undefined: set[Mu] = set()
        if semantics == "single-pass":
            result = await self.eval(body, set())
            self.iterations.append(len(result))
        elif semantics == "lfp":
            result = await self.lfp(lambda s: self.eval(body, s), "lfp")
        elif semantics == "stratified":
            strata = self.deps.strata or {}
            result = set()
            for i in range(max(strata.values(), default=0) + 1):
                stratum = remove(body, {g for g, level in strata.items() if level > i})
                lower = result
                result = await self.lfp(lambda s, p=stratum, lo=lower: self.eval(p, s | lo), f"stratum {i}")
        else:
            result, undefined = await self.well_founded(body)
        project = frozenset(self.query.projection)
        if body is not pattern:  # else the rows bind the projected variables only already
            result = {m.restrict(project) for m in result}
        rows = sort_rows(result)
        undefined_rows = sort_rows({m.restrict(project) for m in undefined} - result)
        return GenResult(self.query, self.deps, semantics, rows, undefined_rows, self.oracle.model_calls,
                         self.oracle.stats(), self.iterations, self.events)

    async def well_founded(self, body: Pattern) -> tuple[set[Mu], set[Mu]]:
        """The alternating fixpoint of Def. 21 with ``Γ(J) = lfp(S ↦ Φ^J_P(S))``; returns (true, undefined)."""
        async def gamma(j: set[Mu]) -> set[Mu]:
            return await self.lfp(lambda s: self.eval(body, s, j), "Γ")

        cand = await gamma(set())
        true, false = await alternating_fixpoint(gamma, cand, self.settings.max_iterations, self.events)
        return true, cand - true - false


async def alternating_fixpoint(gamma: Callable[[set], Awaitable[set]], cand: set, max_iterations: int = 50,
                               events: list | None = None) -> tuple[set, set]:
    """Def. 21 over the finite candidate set ``cand``: ``I⁺_{n+1} = Γ(Cand \\ I⁻_n)``,
    ``I⁻_{n+1} = Cand \\ Γ(I⁺_{n+1})`` from ``(∅, ∅)`` until stable; returns ``(I⁺, I⁻)`` (true, false)."""
    true: set = set()
    false: set = set()
    for n in range(1, max_iterations + 1):
        new_true = (await gamma(cand - false)) & cand
        new_false = cand - await gamma(new_true)
        if events is not None:
            events.append({"event": "alternation", "n": n, "true": len(new_true), "false": len(new_false),
                           "undefined": len(cand - new_true - new_false)})
        if (new_true, new_false) == (true, false):
            return true, false
        true, false = new_true, new_false
    raise GenOpEvaluationError("the alternating fixpoint did not stabilise")


async def evaluate(query: GenQuery, query_kg: QueryFn, oracle: Oracle, settings: EvalSettings | None = None,
                   label_predicate: str = "http://www.w3.org/2000/01/rdf-schema#label",
                   progress: bool = False) -> GenResult:
    """Evaluate a parsed generative query (see the module docstring for the semantics); ``progress``: a bar over
    candidate validation."""
    return await Evaluation(query, query_kg, oracle, settings, label_predicate, progress).run()


def run_genop(text: str, kg, oracle: Oracle, settings: EvalSettings | None = None) -> GenResult:
    """Parse ``text`` with the KG profile's prefixes and evaluate it on ``kg`` (blocking; works in Jupyter).

    From synchronous code the evaluation runs on the thread's kept event loop (``run_sync(reuse_loop=True)``): a
    GenOp-free query is one store query, and a fresh ``asyncio.run`` loop per call cost more than the store."""
    query = parse_genop_query(text, kg.profile.prefixes)
    return run_sync(evaluate(query, kg_query_fn(kg), oracle, settings, kg.profile.label_predicate), reuse_loop=True)


def kg_query_fn(kg) -> QueryFn:
    """``query_kg`` over a :class:`~sparqlab.kg.base.KnowledgeGraph` (its guard, cache, timeout and row cap)."""
    async def query(sparql: str) -> QueryResult:
        return kg.query(sparql)

    return query
