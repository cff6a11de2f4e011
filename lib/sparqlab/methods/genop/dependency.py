"""Dependency analysis over GenOp occurrences (paper Sect. 4.1): the dependency graph (Def. 11) with signed edges
(Def. 14), strongly connected components (Def. 12), acyclicity (Def. 13), stratification (Def. 15) and
monotonicity w.r.t. the context supply (Sect. 4.3).

A query is classified as ``acyclic`` (no cycle), ``stratified`` (cycles, but a stratification exists: stratum-wise
least fixpoints) or ``non-stratified`` (a cycle through a negative edge: well-founded semantics). An acyclic query
is evaluated in a single pass only where that provably equals its least fixpoint (Theorem 8,
:func:`single_pass_exact`), else by its fixpoint semantics. An acyclic query also has a stratification (reported as ``strata``), which is what
Example 3's MINUS variant shows: ``σ(g1) < σ(g2)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sparqlab.methods.genop.algebra import (
    BINARY,
    Filter,
    GenOp,
    Join,
    Pattern,
    Proj,
    certain_variables,
    genops,
    join_operands,
    occurrences,
    remove,
)


@dataclass(frozen=True)
class Edge:
    """``source → target`` with ``variables = out(source) ∩ input(target)`` and its sign (Def. 14)."""

    source: int
    target: int
    variables: tuple[str, ...]
    negative: bool


@dataclass
class Dependencies:
    """The analysis of one pattern. Occurrences are referred to by their ``GenOp.index``."""

    genops: dict[int, GenOp]
    edges: list[Edge]
    sccs: list[tuple[int, ...]]               # in topological order of the condensation
    strata: dict[int, int] | None             # a minimal stratification σ, or None if none exists
    monotone: bool
    single_pass_exact: bool = False           # a single pass equals the least fixpoint (:func:`single_pass_exact`)
    scc_of: dict[int, int] = field(init=False)  # occurrence -> position of its SCC in ``sccs``

    def __post_init__(self) -> None:
        self.scc_of = {g: k for k, c in enumerate(self.sccs) for g in c}

    @property
    def acyclic(self) -> bool:
        return all(len(c) == 1 for c in self.sccs)

    @property
    def stratified(self) -> bool:
        return self.strata is not None

    @property
    def query_class(self) -> str:
        """``acyclic`` / ``stratified`` / ``non-stratified``."""
        if self.acyclic:
            return "acyclic"
        return "stratified" if self.stratified else "non-stratified"

    @property
    def auto_semantics(self) -> str:
        """The semantics ``auto`` evaluates with: ``single-pass`` for an acyclic query only where it equals the least
        fixpoint (Theorem 8), else ``lfp`` for the other monotone acyclic queries and ``stratified`` for the rest of
        the acyclic ones; ``stratified`` / ``well-founded`` for cyclic queries by their class."""
        if self.acyclic:
            return "single-pass" if self.single_pass_exact else "lfp" if self.monotone else "stratified"
        return "stratified" if self.stratified else "well-founded"

    def order(self) -> list[int]:
        """A topological order of the occurrences (SCC members together, by occurrence index)."""
        return [g for c in self.sccs for g in c]

    def cyclic_scc(self, index: int) -> tuple[int, ...] | None:
        """The SCC of an occurrence when it has more than one member (a cycle), else None."""
        c = self.sccs[self.scc_of[index]]
        return c if len(c) > 1 else None

    def graph_data(self) -> tuple[list[str], list[dict], list[list[str]]]:
        """``(nodes, edges, groups)`` for :func:`sparqlab.plots.dependency_graph`: occurrence names, signed edges
        and the SCCs with more than one member."""
        described = self.describe()
        return list(described["genops"]), described["edges"], [c for c in described["sccs"] if len(c) > 1]

    def describe(self) -> dict:
        """A JSON-able summary (for traces, the CLI and the notebook)."""
        name = {i: g.name for i, g in self.genops.items()}
        return {
            "class": self.query_class,
            "monotone": self.monotone,
            "single_pass_exact": self.single_pass_exact,
            "genops": {name[i]: str(g) for i, g in self.genops.items()},
            "edges": [{"from": name[e.source], "to": name[e.target], "vars": list(e.variables),
                       "sign": "-" if e.negative else "+"} for e in self.edges],
            "sccs": [[name[i] for i in c] for c in self.sccs],
            "strata": None if self.strata is None else {name[i]: s for i, s in self.strata.items()},
        }


def signed_edges(p: Pattern) -> list[Edge]:
    """The edges of Def. 11 with the sign of Def. 14 (occurrences of V_ij in ``P \\ {g_j}``)."""
    gs = genops(p)
    edges = []
    for gj in gs:
        surrounding = None
        for gi in gs:
            shared = tuple(sorted(set(gi.outputs) & gj.inputs))
            if not shared:
                continue
            if surrounding is None:
                surrounding = list(occurrences(remove(p, {gj.index})))
            negative = any(neg for v, neg in surrounding if v in shared)
            edges.append(Edge(gi.index, gj.index, shared, negative))
    return edges


def tarjan_sccs(nodes: list[int], edges: list[Edge]) -> list[tuple[int, ...]]:
    """SCCs (Def. 12) in topological order of the condensation (sources first); members sorted."""
    succ: dict[int, list[int]] = {n: [] for n in nodes}
    for e in edges:
        succ[e.source].append(e.target)
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    found: list[tuple[int, ...]] = []
    counter = 0

    def visit(v: int) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                members.append(w)
                if w == v:
                    break
            found.append(tuple(sorted(members)))

    for n in sorted(nodes):
        if n not in index:
            visit(n)
    found.reverse()  # Tarjan emits sinks first
    return found


def stratify(sccs: list[tuple[int, ...]], edges: list[Edge]) -> dict[int, int] | None:
    """The minimal stratification σ of Def. 15 (σ(target) ≥ σ(source), > across negative edges), or None when
    a negative edge lies inside an SCC."""
    scc_of = {g: k for k, c in enumerate(sccs) for g in c}
    level = [0] * len(sccs)
    for e in edges:
        if e.negative and scc_of[e.source] == scc_of[e.target]:
            return None
    for k in range(len(sccs)):  # topological order: sources were levelled already
        for e in edges:
            if scc_of[e.target] == k and scc_of[e.source] != k:
                level[k] = max(level[k], level[scc_of[e.source]] + (1 if e.negative else 0))
    return {g: level[scc_of[g]] for c in sccs for g in c}


def is_monotone(p: Pattern) -> bool:
    """Sect. 4.3: every GenOp output variable occurs only in positive positions of ``P``."""
    outs = {y for g in genops(p) for y in g.outputs}
    return not any(neg and v in outs for v, neg in occurrences(p))


def single_pass_exact(p: Pattern, order: list[int]) -> bool:
    """Whether one pass ``⟦P⟧^∅`` is the least fixpoint of an acyclic ``P`` (Theorem 8) under the group-local
    context supply: every GenOp's placeholders are bound in every mapping of the operands before it in its own
    group (the group's GenOp-free operands and the GenOps before it in the topological ``order``). Then any
    context a later iterate adds gives rows the group's join with those mappings drops or already has. A GenOp
    whose placeholders come from elsewhere (a UNION sibling, an OPTIONAL's left side, a later operand of an
    enclosing group) gets them only from the fixpoint's supply, so one pass can give fewer rows."""
    rank = {g: n for n, g in enumerate(order)}

    def group(ops: list[Pattern]) -> bool:
        plain = [op for op in ops if not isinstance(op, GenOp)]
        bound = set().union(*(certain_variables(op) for op in plain))
        for g in sorted((op for op in ops if isinstance(op, GenOp)), key=lambda g: rank[g.index]):
            if not g.inputs <= bound:
                return False
            bound |= g.inputs | set(g.outputs)
        return all(exact(op) for op in plain)

    def exact(q: Pattern) -> bool:
        if isinstance(q, Join | GenOp):
            return group(join_operands(q))
        if isinstance(q, Filter | Proj):
            return exact(q.pattern)
        if isinstance(q, BINARY):
            return exact(q.left) and exact(q.right)
        return True

    return exact(p)


def analyse(p: Pattern) -> Dependencies:
    """Dependency graph, SCCs, stratification, monotonicity and single-pass exactness of ``p``."""
    gs = {g.index: g for g in genops(p)}
    edges = signed_edges(p)
    sccs = tarjan_sccs(list(gs), edges)
    acyclic = all(len(c) == 1 for c in sccs)
    exact = acyclic and single_pass_exact(p, [g for c in sccs for g in c])
    return Dependencies(gs, edges, sccs, stratify(sccs, edges), is_monotone(p), exact)
