"""GenOp-free subpatterns evaluated by the store in one SPARQL query (Proposition 1 of the generative-SPARQL paper).

Proposition 1 says that on a GenOp-free pattern the extended semantics ``⟦P⟧`` equals SPARQL's (set semantics), so
such a subpattern need not be evaluated operator by operator in the typed-mapping algebra: :func:`pushdown_query`
renders it as one ``SELECT DISTINCT`` that gives the same set of mappings. Two things restrict where that holds
here, and the renderer refuses (returns ``None``) outside them:

- **Filter atoms.** The algebra's ``=`` is RDF-term equality (or canonical compatibility), not SPARQL's value
  comparison (``"1"^^xsd:integer = "01"^^xsd:integer`` is true in SPARQL, false here). Atoms are therefore
  rendered with ``sameTerm``, whose truth values (error when a variable is unbound) are the algebra's; ``bound``,
  ``!``, ``&&`` and ``||`` have SPARQL's three-valued tables in both. A blank-node constant cannot be written in a
  query and is not pushed.
- **Compatibility.** A join on a variable that a GenOp binds (or that an ``=`` links to one) uses representatives
  ``rep_v`` (Defs 7–9), which may merge distinct RDF terms through a generated one; such variables are
  :func:`generated_variables` and a subpattern that mentions one stays in the algebra. On every other variable
  ``rep_v`` is the identity and compatibility is SPARQL's.

``Diff`` (the paper's strict clause 6, no SPARQL counterpart) and blank-node labels in patterns (their scope is
one BGP in the algebra, one query in SPARQL) are not pushed either.
"""

from __future__ import annotations

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
    genops,
    variables,
)
from sparqlab.methods.genop.terms import TypedTerm

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _equalities(f: Formula):
    if isinstance(f, EqVar):
        yield f.var, f.other
    elif isinstance(f, Not):
        yield from _equalities(f.arg)
    elif isinstance(f, And | Or):
        for a in f.args:
            yield from _equalities(a)


def _formulas(p: Pattern):
    if isinstance(p, Filter):
        yield p.formula
        yield from _formulas(p.pattern)
    elif isinstance(p, Proj):
        yield from _formulas(p.pattern)
    elif isinstance(p, Join | Union | Minus | Diff | Opt):
        if isinstance(p, Diff | Opt):
            yield p.formula
        yield from _formulas(p.left)
        yield from _formulas(p.right)


def generated_variables(p: Pattern) -> frozenset[str]:
    """Variables whose bindings may include generated terms: GenOp outputs, closed under the ``?a = ?b`` atoms
    of the query (an equality makes the compatibility machinery observe both sides' terms together)."""
    tainted = {y for g in genops(p) for y in g.outputs}
    links = [pair for f in _formulas(p) for pair in _equalities(f)]
    changed = True
    while changed:
        changed = False
        for a, b in links:
            if (a in tainted) != (b in tainted):
                tainted |= {a, b}
                changed = True
    return frozenset(tainted)


def in_scope(p: Pattern) -> set[str]:
    """The variables a solution of ``p`` may bind (the ``SELECT`` list of its pushed query)."""
    if isinstance(p, BGP):
        return set(p.variables)
    if isinstance(p, Filter):
        return in_scope(p.pattern)
    if isinstance(p, Proj):
        return set(p.variables)
    if isinstance(p, Minus | Diff):
        return in_scope(p.left)
    if isinstance(p, Join | Union | Opt):
        return in_scope(p.left) | in_scope(p.right)
    if isinstance(p, GenOp):
        return set(p.inputs) | set(p.outputs)
    return set()


def _term(t: TypedTerm) -> str | None:
    if t.kind == "uri":
        return f"<{t.value}>"
    if t.kind != "literal":
        return None  # a blank-node constant has no SPARQL spelling
    text = '"' + "".join(_ESCAPES.get(c, c) for c in t.value) + '"'
    if t.lang:
        return f"{text}@{t.lang}"
    return f"{text}^^<{t.datatype}>" if t.datatype else text


def _formula(f: Formula) -> str | None:
    """``F`` with the algebra's truth values: ``=`` as ``sameTerm`` (RDF-term equality)."""
    if isinstance(f, TrueF):
        return "true"
    if isinstance(f, Bound):
        return f"bound(?{f.var})"
    if isinstance(f, EqVar):
        return f"sameTerm(?{f.var}, ?{f.other})"
    if isinstance(f, EqConst):
        const = _term(f.const)
        return None if const is None else f"sameTerm(?{f.var}, {const})"
    if isinstance(f, Not):
        inner = _formula(f.arg)
        return None if inner is None else f"!({inner})"
    parts = [_formula(a) for a in f.args]
    if any(part is None for part in parts):
        return None
    return "(" + (" && " if isinstance(f, And) else " || ").join(parts) + ")"  # type: ignore[arg-type]


def _group(p: Pattern) -> str | None:
    """``p`` as a SPARQL group ``{ ... }`` with the same solutions, or ``None`` when it cannot be pushed."""
    content = _content(p)
    return None if content is None else f"{{ {content} }}"


def _content(p: Pattern) -> str | None:
    """The elements of a group whose translation (SPARQL 1.1 Sect. 18.2.2) is ``p``. A left operand is inlined
    unless it ends in a FILTER (whose scope would widen to the whole group), a right operand of a Join only when
    it is a BGP (``{ A B OPTIONAL {C} }`` is not ``A ⋈ (B ⟕ C)``); flat groups let the store plan the join."""
    if isinstance(p, Empty):
        return ""
    if isinstance(p, BGP):
        if any(term.startswith("_:") for triple in p.triples for term in triple):
            return None
        return " . ".join(" ".join(t) for t in p.triples) + " ."
    if isinstance(p, Filter):
        inner, formula = _content(p.pattern), _formula(p.formula)
        return None if inner is None or formula is None else f"{inner} FILTER({formula})"
    if isinstance(p, Proj):
        inner = _group(p.pattern)
        if inner is None or not p.variables:
            return None
        return f"{{ SELECT DISTINCT {' '.join('?' + v for v in p.variables)} WHERE {inner} }}"
    if isinstance(p, Join | Union | Minus | Opt):
        left = _group(p.left) if isinstance(p, Union) or isinstance(p.left, Filter) else _content(p.left)
        right = _content(p.right) if isinstance(p, Join) and isinstance(p.right, BGP) else _group(p.right)
        if left is None or right is None:
            return None
        if isinstance(p, Join):
            return f"{left} {right}"
        if isinstance(p, Union):
            return f"{left} UNION {right}"
        if isinstance(p, Minus):
            return f"{left} MINUS {right}"
        if isinstance(p.formula, TrueF):  # LeftJoin(P1, P2, true)
            return f"{left} OPTIONAL {right}"
        formula = _formula(p.formula)  # a FILTER directly in the OPTIONAL group is the LeftJoin's condition
        return None if formula is None else f"{left} OPTIONAL {{ {right} FILTER({formula}) }}"
    return None  # GenOp, Diff


def pushdown_query(p: Pattern, generated: frozenset[str] = frozenset()) -> tuple[str, list[str]] | None:
    """``(SELECT DISTINCT query, its variables)`` evaluating the GenOp-free pattern ``p`` in the store with the
    algebra's answers, or ``None`` when ``p`` has a GenOp, no variable, a variable of ``generated``, or a part
    outside what the store evaluates identically (module docstring)."""
    if isinstance(p, GenOp) or genops(p):
        return None
    names = sorted(in_scope(p))
    if not names or generated & variables(p):
        return None
    body = _group(p.pattern if isinstance(p, Proj) else p)  # a projection is the query's own SELECT
    if body is None:
        return None
    if isinstance(p, Proj):
        names = list(p.variables)
    return f"SELECT DISTINCT {' '.join('?' + v for v in names)} WHERE {body}", names
