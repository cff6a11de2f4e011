"""The algebra of generative SPARQL (grammar (1) of the paper): patterns, filter formulas, occurrences
(Def. 1), surrounding patterns with pruning (Def. 2) and well-formedness (Def. 3).

Patterns are immutable dataclasses; every GenOp occurrence carries a unique ``index`` (its position in the query
text), which identifies the occurrence in the dependency graph and in the memoisation keys.

Filter formulas have the paper's atoms ``bound(v)``, ``v = c`` and ``v = v'`` with ``∧`` and ``¬``; SPARQL's
``!=`` is read as ``¬(=)`` and ``||`` as a disjunction with SPARQL's three-valued truth table (⊤ if a disjunct is
⊤, else error if one is an error, else ⊥), i.e. ``¬(¬a ∧ ¬b)`` except that it keeps errors the way SPARQL does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from sparqlab.methods.genop.terms import TypedTerm


class GenOpSyntaxError(ValueError):
    """A generative query that cannot be parsed or is not well formed (Def. 3); the message says where."""


# --- filter formulas -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Bound:
    var: str


@dataclass(frozen=True)
class EqConst:
    var: str
    const: TypedTerm


@dataclass(frozen=True)
class EqVar:
    var: str
    other: str


@dataclass(frozen=True)
class Not:
    arg: Formula


@dataclass(frozen=True)
class And:
    args: tuple[Formula, ...]


@dataclass(frozen=True)
class Or:
    args: tuple[Formula, ...]


@dataclass(frozen=True)
class TrueF:
    """The always-true formula (an OPTIONAL without a filter)."""


Formula = Bound | EqConst | EqVar | Not | And | Or | TrueF


def formula_vars(f: Formula) -> set[str]:
    if isinstance(f, Bound | EqConst):
        return {f.var}
    if isinstance(f, EqVar):
        return {f.var, f.other}
    if isinstance(f, Not):
        return formula_vars(f.arg)
    if isinstance(f, And | Or):
        return set().union(*(formula_vars(a) for a in f.args))
    return set()


def formula_occurrences(f: Formula, negative: bool) -> Iterator[tuple[str, bool]]:
    """(variable, in a negative position) for each occurrence; a variable under ``¬`` is negative (Def. 14)."""
    if isinstance(f, Not):
        yield from formula_occurrences(f.arg, True)
    elif isinstance(f, And | Or):
        for a in f.args:
            yield from formula_occurrences(a, negative)
    else:
        for v in sorted(formula_vars(f)):
            yield v, negative


def show_formula(f: Formula) -> str:
    if isinstance(f, Bound):
        return f"bound(?{f.var})"
    if isinstance(f, EqConst):
        return f"?{f.var} = {f.const.value!r}"
    if isinstance(f, EqVar):
        return f"?{f.var} = ?{f.other}"
    if isinstance(f, Not):
        return f"¬({show_formula(f.arg)})"
    if isinstance(f, And):
        return " ∧ ".join(f"({show_formula(a)})" for a in f.args)
    if isinstance(f, Or):
        return " ∨ ".join(f"({show_formula(a)})" for a in f.args)
    return "⊤"


# --- patterns ------------------------------------------------------------------------------------------------

PLACEHOLDER = re.compile(r"[?$]([A-Za-z_][A-Za-z0-9_]*)")
"""A placeholder in a prompt template: ``?name`` or ``$name``."""


@dataclass(frozen=True)
class Empty:
    """The empty pattern ``{}``: evaluates to ``{∅}`` (the join identity)."""


@dataclass(frozen=True)
class BGP:
    """A basic graph pattern; ``triples`` are N3-rendered (subject, predicate, object) strings."""

    triples: tuple[tuple[str, str, str], ...]
    variables: frozenset[str]


@dataclass(frozen=True)
class GenOp:
    """``GenOp(π(X), Y, M)``: ``template`` with placeholders ``inputs`` (X), ``outputs`` (Y, ordered), model
    specifier ``model``; ``index`` identifies the occurrence."""

    index: int
    template: str
    outputs: tuple[str, ...]
    model: str = ""
    inputs: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "inputs", frozenset(PLACEHOLDER.findall(self.template)))

    @property
    def name(self) -> str:
        return f"g{self.index + 1}"

    def instantiate(self, render: dict[str, str]) -> str:
        """``π^[μ]``: each placeholder replaced by ``render[var]`` (the lexicalisation or a sentinel)."""
        return PLACEHOLDER.sub(lambda m: render.get(m.group(1), m.group(0)), self.template)

    def __str__(self) -> str:
        outs = ", ".join("?" + y for y in self.outputs)
        return f'{self.name}=GenOp("{self.template}" AS {outs}{", " + self.model if self.model else ""})'


@dataclass(frozen=True)
class Filter:
    formula: Formula
    pattern: Pattern


@dataclass(frozen=True)
class Proj:
    variables: tuple[str, ...]
    pattern: Pattern


@dataclass(frozen=True)
class Join:
    left: Pattern
    right: Pattern


@dataclass(frozen=True)
class Union:
    left: Pattern
    right: Pattern


@dataclass(frozen=True)
class Minus:
    left: Pattern
    right: Pattern


@dataclass(frozen=True)
class Diff:
    left: Pattern
    right: Pattern
    formula: Formula = TrueF()


@dataclass(frozen=True)
class Opt:
    left: Pattern
    right: Pattern
    formula: Formula = TrueF()


Pattern = Empty | BGP | GenOp | Filter | Proj | Join | Union | Minus | Diff | Opt
BINARY = (Join, Union, Minus, Diff, Opt)


def variables(p: Pattern) -> set[str]:
    """``var(P)``: every variable of the pattern (GenOp placeholders and outputs included)."""
    if isinstance(p, BGP):
        return set(p.variables)
    if isinstance(p, GenOp):
        return set(p.inputs) | set(p.outputs)
    if isinstance(p, Filter):
        return variables(p.pattern) | formula_vars(p.formula)
    if isinstance(p, Proj):
        return set(p.variables) | variables(p.pattern)
    if isinstance(p, BINARY):
        out = variables(p.left) | variables(p.right)
        return out | formula_vars(p.formula) if isinstance(p, Diff | Opt) else out
    return set()


def join_operands(p: Pattern) -> list[Pattern]:
    """The operands of a left-deep Join chain (one SPARQL group), in order."""
    ops = []
    while isinstance(p, Join):
        ops.append(p.right)
        p = p.left
    ops.append(p)
    ops.reverse()
    return ops


def certain_variables(p: Pattern) -> set[str]:
    """The variables every mapping of ``⟦P⟧`` binds: all of a BGP's and a GenOp's (its placeholders and outputs),
    either operand's of a Join, both branches' of a Union, the left operand's of Opt / Minus / Diff."""
    if isinstance(p, BGP):
        return set(p.variables)
    if isinstance(p, GenOp):
        return set(p.inputs) | set(p.outputs)
    if isinstance(p, Filter):
        return certain_variables(p.pattern)
    if isinstance(p, Proj):
        return set(p.variables) & certain_variables(p.pattern)
    if isinstance(p, Join):
        return certain_variables(p.left) | certain_variables(p.right)
    if isinstance(p, Union):
        return certain_variables(p.left) & certain_variables(p.right)
    if isinstance(p, Minus | Diff | Opt):
        return certain_variables(p.left)
    return set()


def genops(p: Pattern) -> list[GenOp]:
    """``gen(P)``: the GenOp occurrences of ``P`` (Def. 1) in occurrence order."""
    if isinstance(p, GenOp):
        return [p]
    if isinstance(p, Filter | Proj):
        return genops(p.pattern)
    if isinstance(p, BINARY):
        return sorted(genops(p.left) + genops(p.right), key=lambda g: g.index)
    return []


def remove(p: Pattern, drop: set[int]) -> Pattern:
    """``P`` with the GenOp occurrences whose index is in ``drop`` replaced by ``{}`` and pruned by the rules of
    Def. 2 (``Filter({}) ⇝ {}``, ``Proj({}) ⇝ {}``, ``{} Op P' ⇝ P'``, ``P' Op {} ⇝ P'``).

    With one index this is the surrounding pattern ``P \\ {g}``; with several it is how GenOps are *disabled*
    for the staged and stratum-wise operators (App. B.1, Def. 18). Disabling by pruning rather than by an
    always-empty pattern keeps the rest of a join alive, so lower strata can supply contexts.
    """
    if isinstance(p, GenOp):
        return Empty() if p.index in drop else p
    if isinstance(p, Filter | Proj):
        inner = remove(p.pattern, drop)
        if isinstance(inner, Empty):
            return inner
        return Filter(p.formula, inner) if isinstance(p, Filter) else Proj(p.variables, inner)
    if isinstance(p, BINARY):
        left, right = remove(p.left, drop), remove(p.right, drop)
        if isinstance(left, Empty):
            return right
        if isinstance(right, Empty):
            return left
        if isinstance(p, Diff | Opt):
            return type(p)(left, right, p.formula)
        return type(p)(left, right)
    return p


def occurrences(p: Pattern, negative: bool = False) -> Iterator[tuple[str, bool]]:
    """Every syntactic occurrence of a variable in ``P`` with its polarity (Def. 14): negative inside the right
    operand of Minus or Diff, inside the right operand of Opt (it also forms Opt's Diff branch), in the filter of
    Diff/Opt, or under ``¬`` in a Filter."""
    if isinstance(p, BGP):
        for v in sorted(p.variables):
            yield v, negative
    elif isinstance(p, GenOp):
        for v in sorted(p.inputs | set(p.outputs)):
            yield v, negative
    elif isinstance(p, Filter):
        yield from formula_occurrences(p.formula, negative)
        yield from occurrences(p.pattern, negative)
    elif isinstance(p, Proj):
        for v in p.variables:
            yield v, negative
        yield from occurrences(p.pattern, negative)
    elif isinstance(p, Join | Union):
        yield from occurrences(p.left, negative)
        yield from occurrences(p.right, negative)
    elif isinstance(p, Minus | Diff | Opt):
        yield from occurrences(p.left, negative)
        yield from occurrences(p.right, True)
        if isinstance(p, Diff | Opt):
            yield from formula_occurrences(p.formula, True)


def check_well_formed(p: Pattern) -> None:
    """Def. 3, plus ``X ∩ Y = ∅`` for every GenOp; raises :class:`GenOpSyntaxError` naming the violation."""
    for g in genops(p):
        clash = g.inputs & set(g.outputs)
        if clash:
            raise GenOpSyntaxError(f"{g.name}: ?{sorted(clash)[0]} is both a placeholder and an output "
                                   "(X ∩ Y must be empty)")
        available = variables(remove(p, {g.index})) - set(g.outputs)
        missing = sorted(g.inputs - available)
        if missing:
            raise GenOpSyntaxError(
                f"{g.name}: placeholder ?{missing[0]} occurs nowhere else in the query, so no mapping can bind it "
                f"(Def. 3 (i): X ⊆ var(P \\ {{g}}) \\ Y)")
    _check_local(p)


def _check_local(p: Pattern) -> None:
    if isinstance(p, Filter):
        missing = sorted(formula_vars(p.formula) - variables(p.pattern))
        if missing:
            raise GenOpSyntaxError(f"FILTER uses ?{missing[0]}, which its pattern never binds (Def. 3 (ii))")
        _check_local(p.pattern)
    elif isinstance(p, Proj):
        missing = sorted(set(p.variables) - variables(p.pattern))
        if missing:
            raise GenOpSyntaxError(f"SELECT lists ?{missing[0]}, which the pattern never binds (Def. 3 (iii))")
        _check_local(p.pattern)
    elif isinstance(p, BINARY):
        _check_local(p.left)
        _check_local(p.right)


def show(p: Pattern, indent: int = 0) -> str:
    """An indented rendering of the algebra, one operator per line."""
    pad = "  " * indent
    if isinstance(p, Empty):
        return pad + "{}"
    if isinstance(p, BGP):
        return pad + "BGP{ " + " . ".join(" ".join(t) for t in p.triples) + " }"
    if isinstance(p, GenOp):
        return pad + str(p)
    if isinstance(p, Filter):
        return f"{pad}Filter[{show_formula(p.formula)}]\n{show(p.pattern, indent + 1)}"
    if isinstance(p, Proj):
        return f"{pad}Proj[{', '.join('?' + v for v in p.variables)}]\n{show(p.pattern, indent + 1)}"
    name = type(p).__name__
    if isinstance(p, Diff | Opt) and not isinstance(p.formula, TrueF):
        name += f"[{show_formula(p.formula)}]"
    return f"{pad}{name}\n{show(p.left, indent + 1)}\n{show(p.right, indent + 1)}"
