"""Concrete syntax of generative SPARQL and its translation into the algebra of :mod:`sparqlab.methods.genop.algebra`.

Grammar: a SPARQL 1.1 ``SELECT`` query whose WHERE clause may contain, wherever a group graph pattern may stand,

.. code-block:: text

    GenOpPattern ::= 'GENOP' '(' Template 'AS' Outputs ( ',' Model )? ( ',' Theta )? ')' '.'?
    Template     ::= a string literal ("...", '...', or triple-quoted; it may span lines); placeholders are
                     ?name or $name
    Outputs      ::= Var+  |  '(' Var ( ',' Var )* ')'
    Model        ::= a string literal, or bare text up to the next ',' or ')'   (the model specifier M)
    Theta        ::= 'THETA' '(' Var '=' Number ( ',' Var '=' Number )* ')'  (θ(v) ∈ (0, 1] for output vars)

e.g. ``GENOP("Suggest a topic related to ?x and ?z" AS ?y, "gpt-oss-120b")``. The template's whitespace runs
are collapsed to one space (so a template written over several lines gives the one-line prompt of the paper).
Keywords are case-insensitive. θ is query-wide (Def. 6: a function of the variable); two GenOps giving one
variable different thresholds is an error.

Each GenOp is replaced by a one-triple group ``{ <urn:sparqlab:genop:N> ... }`` and the query is parsed and
translated by rdflib's SPARQL parser and algebra; the rdflib algebra is then mapped onto the paper's operators:
``BGP``, ``Join``, ``LeftJoin → Opt_F``, ``Union``, ``Minus``, ``Filter``, ``Project → Proj``; ``DISTINCT`` is
implicit (set semantics). Other SPARQL features (BIND, VALUES, aggregates, ORDER BY, LIMIT, property paths,
GRAPH, sub-queries, filter functions other than ``bound``, ``=``, ``!=``, ``&&``, ``||``, ``!``) are outside the
fragment and rejected with an error naming them. The KG profile's prefixes are predefined.

Group structure matters for GenOps (Example 4): a GenOp takes its contexts from the other members of its own
group, so ``{ P1 { P2 GENOP(...) } }`` differs from ``{ P1 P2 GENOP(...) }``. rdflib joins a group's members
left-deep, so a nested group written *first* in its parent merges with the parent's members; write a nested group
after a triple when its scope must stay apart.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache

from sparqlab.methods.genop.algebra import (
    BGP,
    And,
    Bound,
    Empty,
    EqConst,
    EqVar,
    Filter,
    Formula,
    GenOp,
    GenOpSyntaxError,
    Join,
    Minus,
    Not,
    Opt,
    Or,
    Pattern,
    Proj,
    TrueF,
    Union,
    check_well_formed,
    genops,
    variables,
)
from sparqlab.methods.genop.terms import TypedTerm

PLACEHOLDER_IRI = "urn:sparqlab:genop:"


@dataclass(frozen=True)
class GenQuery:
    """A parsed, well-formed generative query: the algebra ``pattern`` (``Proj`` at the top), the projected
    ``projection`` (in SELECT order), the query-wide thresholds θ and the source text."""

    text: str
    pattern: Pattern
    projection: tuple[str, ...]
    thresholds: dict[str, float]

    @property
    def genops(self) -> list[GenOp]:
        return genops(self.pattern)


# --- GENOP extraction -----------------------------------------------------------------------------------------

_GENOP = re.compile(r"GENOP\s*\(", re.IGNORECASE)
_VAR = re.compile(r"\s*[?$]([A-Za-z_][A-Za-z0-9_]*)")
_NUMBER = re.compile(r"\s*([0-9]*\.?[0-9]+)")


def _skip_string(text: str, i: int) -> int:
    """Index just after the string literal starting at ``i``."""
    quote = text[i]
    long_quote = text[i:i + 3] == quote * 3
    end_mark = quote * 3 if long_quote else quote
    j = i + len(end_mark)
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text.startswith(end_mark, j):
            return j + len(end_mark)
        j += 1
    raise GenOpSyntaxError(f"unterminated string literal starting at character {i}")


def _read_string(text: str, i: int) -> tuple[str, int]:
    end = _skip_string(text, i)
    quote_len = 3 if text[i:i + 3] == text[i] * 3 else 1
    raw = text[i + quote_len:end - quote_len]
    value = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), raw)
    return value, end


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _parse_call(text: str, start: int, index: int, thetas: dict[str, float]) -> tuple[GenOp, int]:
    """Parse one ``GENOP(...)`` whose ``(`` ends at ``start``; returns the occurrence and the end index."""
    where = f"GENOP #{index + 1}"
    i = _skip_ws(text, start)
    if i >= len(text) or text[i] not in "\"'":
        raise GenOpSyntaxError(f"{where}: expected the prompt template as a string literal")
    template, i = _read_string(text, i)
    template = " ".join(template.split())
    m = re.compile(r"\s*AS\b", re.IGNORECASE).match(text, i)
    if not m:
        raise GenOpSyntaxError(f"{where}: expected AS ?var after the template")
    i = m.end()
    outputs: list[str] = []
    i = _skip_ws(text, i)
    parenthesised = text.startswith("(", i)
    if parenthesised:
        i += 1
    while True:
        vm = _VAR.match(text, i)
        if not vm:
            break
        outputs.append(vm.group(1))
        i = vm.end()
        j = _skip_ws(text, i)
        if parenthesised and text.startswith(",", j):
            i = j + 1
    if parenthesised:
        i = _skip_ws(text, i)
        if not text.startswith(")", i):
            raise GenOpSyntaxError(f"{where}: expected ) after the output variables")
        i += 1
    if not outputs:
        raise GenOpSyntaxError(f"{where}: expected at least one output variable after AS")
    if len(set(outputs)) != len(outputs):
        raise GenOpSyntaxError(f"{where}: an output variable is listed twice")
    model = ""
    while True:
        i = _skip_ws(text, i)
        if text.startswith(")", i):
            i += 1
            break
        if not text.startswith(",", i):
            raise GenOpSyntaxError(f"{where}: expected ',' or ')' at character {i}")
        i = _skip_ws(text, i + 1)
        tm = re.compile(r"THETA\s*\(", re.IGNORECASE).match(text, i)
        if tm:
            i = _parse_theta(text, tm.end(), outputs, thetas, where)
        elif i < len(text) and text[i] in "\"'":
            model, i = _read_string(text, i)
        else:
            end = i
            while end < len(text) and text[end] not in ",)":
                end += 1
            model = text[i:end].strip()
            i = end
    return GenOp(index=index, template=template, outputs=tuple(outputs), model=model.strip()), i


def _parse_theta(text: str, i: int, outputs: list[str], thetas: dict[str, float], where: str) -> int:
    while True:
        vm = _VAR.match(text, i)
        if not vm:
            raise GenOpSyntaxError(f"{where}: THETA expects ?var = number pairs")
        var = vm.group(1)
        i = _skip_ws(text, vm.end())
        if not text.startswith("=", i):
            raise GenOpSyntaxError(f"{where}: THETA expects ?{var} = number")
        nm = _NUMBER.match(text, i + 1)
        if not nm:
            raise GenOpSyntaxError(f"{where}: THETA expects a number for ?{var}")
        value = float(nm.group(1))
        if var not in outputs:
            raise GenOpSyntaxError(f"{where}: THETA names ?{var}, which is not an output of this GenOp")
        if not 0 < value <= 1:
            raise GenOpSyntaxError(f"{where}: θ(?{var}) = {value} is outside (0, 1]")
        if var in thetas and thetas[var] != value:
            raise GenOpSyntaxError(f"{where}: ?{var} already has threshold {thetas[var]} (θ is per variable)")
        thetas[var] = value
        i = _skip_ws(text, nm.end())
        if text.startswith(",", i):
            i += 1
            continue
        if text.startswith(")", i):
            return i + 1
        raise GenOpSyntaxError(f"{where}: expected ',' or ')' in THETA")


def extract_genops(text: str) -> tuple[str, list[GenOp], dict[str, float]]:
    """Replace every ``GENOP(...)`` outside strings, IRIs and comments by a placeholder group; returns the plain
    SPARQL text, the occurrences and the thresholds."""
    out: list[str] = []
    found: list[GenOp] = []
    thetas: dict[str, float] = {}
    i = last = 0
    while i < len(text):
        ch = text[i]
        if ch in "\"'":
            i = _skip_string(text, i)
            continue
        if ch == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if ch == "<":
            m = re.compile(r"<[^<>\"{}|^`\\\s]*>").match(text, i)
            if m:
                i = m.end()
                continue
        m = _GENOP.match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_:?$")):
            g, end = _parse_call(text, m.end(), len(found), thetas)
            found.append(g)
            iri = f"<{PLACEHOLDER_IRI}{g.index}>"
            out.append(text[last:i])
            out.append(f"{{ {iri} {iri} {iri} }}")
            i = last = end
            continue
        i += 1
    out.append(text[last:])
    return "".join(out), found, thetas


# --- rdflib algebra -> paper algebra ---------------------------------------------------------------------------

def _term(node) -> TypedTerm:
    from rdflib import BNode, Literal, URIRef

    if isinstance(node, URIRef):
        return TypedTerm.rdf("uri", str(node))
    if isinstance(node, Literal):
        return TypedTerm.rdf("literal", str(node), str(node.datatype) if node.datatype else None, node.language)
    if isinstance(node, BNode):
        return TypedTerm.rdf("bnode", str(node))
    raise GenOpSyntaxError(f"unsupported constant {node!r} in a FILTER")


def _formula(expr) -> Formula:
    from rdflib import Variable
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(expr, CompValue):
        name = expr.name
        if name == "TrueFilter":
            return TrueF()
        if name == "Builtin_BOUND":
            return Bound(str(expr.arg))
        if name == "UnaryNot":
            return Not(_formula(expr.expr))
        if name in ("ConditionalAndExpression", "ConditionalOrExpression"):
            args = (_formula(expr.expr), *(_formula(o) for o in expr.other or []))
            return And(args) if name == "ConditionalAndExpression" else Or(args)
        if name == "RelationalExpression" and expr.op in ("=", "!="):
            left, right = expr.expr, expr.other
            if isinstance(left, Variable) and isinstance(right, Variable):
                atom: Formula = EqVar(str(left), str(right))
            elif isinstance(left, Variable):
                atom = EqConst(str(left), _term(right))
            elif isinstance(right, Variable):
                atom = EqConst(str(right), _term(left))
            else:
                raise GenOpSyntaxError("a FILTER comparison needs at least one variable")
            return atom if expr.op == "=" else Not(atom)
        raise GenOpSyntaxError(f"FILTER {name} is outside the GenOp fragment (bound, =, !=, &&, ||, ! only)")
    if isinstance(expr, Variable):
        raise GenOpSyntaxError(f"FILTER(?{expr}) tests a value's truth, which is outside the GenOp fragment")
    raise GenOpSyntaxError(f"FILTER {expr!r} is outside the GenOp fragment")


def _bgp(triples, by_index: dict[int, GenOp]) -> Pattern:
    from rdflib import URIRef, Variable

    plain, gens = [], []
    for s, p, o in triples:
        if isinstance(s, URIRef) and str(s).startswith(PLACEHOLDER_IRI):
            gens.append(by_index[int(str(s)[len(PLACEHOLDER_IRI):])])
        else:
            plain.append((s, p, o))
    parts: list[Pattern] = []
    if plain:
        rendered = tuple((s.n3(), p.n3(), o.n3()) for s, p, o in plain)
        names = frozenset(str(t) for triple in plain for t in triple if isinstance(t, Variable))
        parts.append(BGP(rendered, names))
    parts.extend(gens)
    if not parts:
        return Empty()
    out = parts[0]
    for part in parts[1:]:
        out = Join(out, part)
    return out


def _convert(node, by_index: dict[int, GenOp]) -> Pattern:
    name = getattr(node, "name", type(node).__name__)
    if name in ("Distinct", "Reduced"):
        return _convert(node.p, by_index)
    if name == "Project":
        return Proj(tuple(str(v) for v in node.PV), _convert(node.p, by_index))
    if name == "BGP":
        return _bgp(node.triples, by_index)
    if name == "Filter":
        return Filter(_formula(node.expr), _convert(node.p, by_index))
    if name == "Join":
        return Join(_convert(node.p1, by_index), _convert(node.p2, by_index))
    if name == "LeftJoin":
        return Opt(_convert(node.p1, by_index), _convert(node.p2, by_index), _formula(node.expr))
    if name == "Union":
        return Union(_convert(node.p1, by_index), _convert(node.p2, by_index))
    if name == "Minus":
        return Minus(_convert(node.p1, by_index), _convert(node.p2, by_index))
    readable = {"Extend": "BIND", "ToMultiSet": "VALUES or a sub-query", "Slice": "LIMIT/OFFSET",
                "OrderBy": "ORDER BY", "Group": "GROUP BY / aggregates", "AggregateJoin": "aggregates",
                "Graph": "GRAPH", "values": "VALUES"}
    raise GenOpSyntaxError(f"{readable.get(name, name)} is outside the GenOp fragment of SPARQL")


def parse_genop_query(text: str, prefixes: Mapping[str, str] | None = None) -> GenQuery:
    """Parse a generative SELECT query (grammar above) into a well-formed :class:`GenQuery`.

    ``prefixes`` are predefined namespace prefixes (e.g. the KG profile's). Raises :class:`GenOpSyntaxError`.
    Parses are cached by (text, prefixes): rdflib's parser takes 4–26 ms a query here, many times the store's
    evaluation of a GenOp-free one, and a notebook evaluates one text under several settings. The result is
    immutable apart from ``thresholds``, which each caller gets a copy of.
    """
    query = _parse_cached(text, tuple(sorted((prefixes or {}).items())))
    return replace(query, thresholds=dict(query.thresholds))


@lru_cache(maxsize=256)
def _parse_cached(text: str, prefixes: tuple[tuple[str, str], ...]) -> GenQuery:
    from pyparsing import ParseException
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    if not text or not text.strip():
        raise GenOpSyntaxError("empty query")
    sparql, found, thetas = extract_genops(text)
    try:
        parsed = parseQuery(sparql)
        algebra = translateQuery(parsed, initNs=dict(prefixes)).algebra
    except ParseException as error:
        raise GenOpSyntaxError(f"SPARQL syntax error: {error}") from None
    except Exception as error:  # rdflib raises plain Exceptions for unknown prefixes and the like
        raise GenOpSyntaxError(f"cannot translate the query: {error}") from None
    if algebra.name != "SelectQuery":
        raise GenOpSyntaxError(f"only SELECT queries are generative queries, not {algebra.name}")
    pattern = _convert(algebra.p, {g.index: g for g in found})
    used = {g.index for g in genops(pattern)}
    if used != {g.index for g in found}:
        raise GenOpSyntaxError("a GENOP was lost in translation (GENOP may only stand where a group pattern may)")
    if re.search(r"\bSELECT\s+(?:DISTINCT\s+|REDUCED\s+)?\*", sparql, re.IGNORECASE):
        inner = pattern.pattern if isinstance(pattern, Proj) else pattern
        pattern = Proj(tuple(sorted(variables(inner))), inner)
    check_well_formed(pattern)
    projection = pattern.variables if isinstance(pattern, Proj) else tuple(sorted(variables(pattern)))
    return GenQuery(text=text, pattern=pattern, projection=projection, thresholds=thetas)
