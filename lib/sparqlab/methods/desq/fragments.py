"""Gold decompositions (DeSQ section 3.1) and the deterministic assembler (section 3.4).

A query is split into SPARQL fragments — the query skeleton (``SELECT ... WHERE {}`` / ``ASK WHERE {}``), each
top-level triple pattern, each top-level FILTER, every other top-level element whole (OPTIONAL, UNION, BIND,
VALUES, sub-SELECT ...), and each solution modifier (GROUP BY, HAVING, ORDER BY, LIMIT, OFFSET, trailing VALUES).
Variables are standardised to ``?var1, ?var2 ...`` in order of first appearance, and every KG IRI becomes a URI
placeholder ``uri1, uri2 ...`` (one per distinct id) whose grounding — id, label, description — is listed apart
(section 3.2). Wikidata placeholders keep their namespace prefix (``wdt:uri1`` with id ``P36``, the paper's
form, so ``p:``/``ps:`` uses of one property share a slot); movie-KG placeholders stand for the whole IRI and their
id is the IRI below the KG namespace (``entity/Person/Ridley%20Scott``, ``relation/directed_by``).

:func:`assemble` is the inverse: fragments plus grounding to one executable query, with no model call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from sparqlab.eval.sparql_tree import (
    KNOWN_PREFIXES,
    Filter,
    Query,
    Term,
    Triple,
    default_term,
    element_text,
    head_text,
    iter_terms,
    modifier_texts,
    parse_query,
)
from sparqlab.kg.freebase import FB, FREEBASE, MID_PATTERN
from sparqlab.kg.profiles import MOVIES_NS, OWL, RDF, RDFS, WD, XSD

PLACEHOLDER = re.compile(r"^uri(\d+)$")

# ------------------------------------------------------------------------------------------------ id schemes


@dataclass(frozen=True)
class IdScheme:
    """How a KG's IRIs become grounded slots: ``split(iri) -> (prefix, id, kind)`` or ``None`` for vocabulary
    IRIs that stay literally in fragments (rdf:type, rdfs:label, wikibase:...). ``kind`` is ``entity``,
    ``property`` or ``class``; the KB memory searches among entries of the slot's kind."""

    name: str
    prefixed: tuple[tuple[str, str, str, str], ...] = ()  # (prefix, namespace, id regex, kind)
    bare_namespace: str | None = None  # ids relative to it, kind from the first path segment
    bare_kinds: tuple[tuple[str, str], ...] = ()
    generic: bool = False  # any non-vocabulary IRI is an entity whose id is the IRI
    vocabulary: frozenset[str] = frozenset()  # IRIs that stay literally in fragments although a pattern matches

    def split(self, iri: str) -> tuple[str | None, str, str] | None:
        if iri in self.vocabulary:
            return None
        for prefix, namespace, pattern, kind in self.prefixed:
            local = iri[len(namespace):]
            if iri.startswith(namespace) and re.fullmatch(pattern, local):
                return prefix, local, kind
        if self.bare_namespace and iri.startswith(self.bare_namespace):
            rest = iri[len(self.bare_namespace):]
            return None, rest, self.kind_of(None, rest) or "entity"
        if self.generic and not iri.startswith((RDF, RDFS, OWL, XSD)):
            return None, iri, "entity"
        return None

    def join(self, prefix: str | None, ident: str) -> str:
        """The IRI of ``ident`` under ``prefix`` (``None``: a bare placeholder); ``ValueError`` if ``ident`` is not
        a valid id there (a model may write ``"capital"`` where ``"P36"`` belongs)."""
        if not isinstance(ident, str) or not ident.strip() or any(c in ident for c in ' <>"{}|^`\\\n'):
            raise ValueError(f"{ident!r} is not a usable id")
        if prefix is not None:
            options = [(namespace, pattern) for name, namespace, pattern, _ in self.prefixed if name == prefix]
            if not options:
                raise ValueError(f"unknown placeholder prefix {prefix!r}")
            for namespace, pattern in options:
                if re.fullmatch(pattern, ident):
                    return namespace + ident
            shapes = " or ".join(pattern for _, pattern in options)
            raise ValueError(f"{ident!r} is not a valid id after {prefix}: (expected {shapes})")
        if self.bare_namespace:
            if self.kind_of(None, ident) is None:
                raise ValueError(f"{ident!r} is not a {self.name} id (e.g. entity/Film/Alien, relation/directed_by)")
            return self.bare_namespace + ident
        return ident

    def kind_of(self, prefix: str | None, ident: str) -> str | None:
        """The kind of slot an id names (``None`` when the id has no valid shape)."""
        if prefix is not None:
            kinds = [k for p, _, pattern, k in self.prefixed if p == prefix and re.fullmatch(pattern, str(ident))]
            return kinds[0] if kinds else None
        for segment, kind in self.bare_kinds:
            if str(ident).startswith(segment + "/") and len(str(ident)) > len(segment) + 1:
                return kind
        return "entity" if self.generic else None


_WD_PROPERTY = r"P[1-9][0-9]*"
WIKIDATA_SCHEME = IdScheme(
    "wikidata",
    prefixed=(
        ("wd", WD + "entity/", r"Q[1-9][0-9]*", "entity"),
        ("wd", WD + "entity/", _WD_PROPERTY, "property"),
        *((name, WD + path, _WD_PROPERTY, "property") for name, path in (
            ("wdt", "prop/direct/"), ("p", "prop/"), ("ps", "prop/statement/"), ("pq", "prop/qualifier/"),
            ("psv", "prop/statement/value/"), ("pqv", "prop/qualifier/value/"),
            ("psn", "prop/statement/value-normalized/"), ("pr", "prop/reference/"), ("wdno", "prop/novalue/"))),
    ),
)
MOVIES_SCHEME = IdScheme("movies", bare_namespace=MOVIES_NS,
                         bare_kinds=(("entity", "entity"), ("relation", "property"), ("class", "class")))
_FB_TYPE = r"(?:base\.[a-z0-9_]+|user\.[a-z0-9_]+\.[a-z0-9_]+|[a-z0-9_]+)\.[a-z0-9_]+"
FREEBASE_SCHEME = IdScheme(
    "freebase",
    prefixed=(("ns", FB, MID_PATTERN, "entity"), ("ns", FB, _FB_TYPE, "class"),
              ("ns", FB, _FB_TYPE + r"\.[a-z0-9_]+", "property")),
    vocabulary=frozenset({FREEBASE.type_predicate, FREEBASE.label_predicate}),
)
"""Freebase ids after ``ns:``: MIDs (``m.03_r3``) are entities, ``domain.type`` ids classes, ``domain.type.property``
ids relations (types in ``base.*`` have three segments and in ``user.*`` four, their properties one more);
``type.object.type`` and ``type.object.name`` stay literally in fragments, as ``rdf:type`` does elsewhere."""
SCHEMES = {"wikidata": WIKIDATA_SCHEME, "movies": MOVIES_SCHEME, "freebase": FREEBASE_SCHEME}


def scheme_for(kg_name: str) -> IdScheme:
    """The id scheme of a KG profile name; unknown KGs get a generic one (every non-vocabulary IRI is a slot)."""
    return SCHEMES.get(kg_name, IdScheme(kg_name, generic=True))


# ------------------------------------------------------------------------------------------------ records

FRAGMENT_KINDS = ("skeleton", "triple", "filter", "pattern", "modifier")


@dataclass
class Fragment:
    """One SPARQL fragment (standardised variables, URI placeholders) and the atomic constraint verbalising it."""

    kind: str
    text: str
    constraint: str = ""


@dataclass
class Slot:
    """One entry of the URI grounding block: placeholder, id, label, description (section 3.2)."""

    placeholder: str
    id: str
    label: str = ""
    description: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class Decomposition:
    """A query's fragments and grounding slots; ``kinds[placeholder]`` is a slot's kind (entity, property,
    class), which restricts retrieval in the KB memory; ``unknown`` holds the placeholders whose id no label source
    knows (their label and description are not known, rather than empty)."""

    fragments: list[Fragment]
    slots: list[Slot]
    kinds: dict[str, str] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------ extraction

_SIMPLE_LOCAL = re.compile(r"^[A-Za-z_][\w\-]*$")


def compact_iri(iri: str) -> str:
    """``prefix:local`` for a vocabulary IRI under a known prefix, else ``<iri>``."""
    for prefix, namespace in KNOWN_PREFIXES.items():
        if iri.startswith(namespace) and _SIMPLE_LOCAL.match(iri[len(namespace):]):
            return f"{prefix}:{iri[len(namespace):]}"
    return f"<{iri}>"


def decompose(query: str | Query, scheme: IdScheme,
              describe: Callable[[str, str, str], tuple[str, str] | None] | None = None) -> Decomposition:
    """The gold decomposition of ``query`` (section 3.1): fragments with standardised variables and URI
    placeholders, and a grounding slot per distinct id. ``describe(kind, prefix-or-"", id) -> (label,
    description)`` fills the grounding (KB memory or KG labels); it returns ``None`` for an id it does not know,
    whose placeholder is then listed in ``unknown``. Without ``describe`` labels stay empty.
    Raises :class:`~sparqlab.eval.sparql_tree.SparqlParseError` for a query that does not parse."""
    tree = parse_query(query) if isinstance(query, str) else query
    names: dict[Term, str] = {}
    placeholders: dict[str, str] = {}
    kinds: dict[str, str] = {}
    slots: list[Slot] = []
    unknown: list[str] = []
    for term in iter_terms(tree):
        if term.is_variable and term not in names:
            count = sum(1 for t in names if t.kind == term.kind) + 1
            names[term] = f"?var{count}" if term.kind == "var" else f"_:b{count}"
        elif term.kind == "iri":
            split = scheme.split(term.value)
            if split is not None and split[1] not in placeholders:
                prefix, ident, kind = split
                placeholder = f"uri{len(placeholders) + 1}"
                placeholders[ident] = placeholder
                kinds[placeholder] = kind
                described = describe(kind, prefix or "", ident) if describe else ("", "")
                if described is None:
                    unknown.append(placeholder)
                label, description = described or ("", "")
                slots.append(Slot(placeholder, ident, label, description))

    def show(term: Term) -> str:
        if term.is_variable:
            return names[term]
        if term.kind == "iri":
            split = scheme.split(term.value)
            if split is not None:
                prefix, ident, _ = split
                return f"{prefix}:{placeholders[ident]}" if prefix else placeholders[ident]
            return compact_iri(term.value)
        return default_term(term)

    fragments = [Fragment("skeleton", head_text(tree, show) + " WHERE {}")]
    for element in tree.where.elements:
        kind = "triple" if isinstance(element, Triple) else "filter" if isinstance(element, Filter) else "pattern"
        fragments.append(Fragment(kind, element_text(element, show)))
    fragments += [Fragment("modifier", text) for text in modifier_texts(tree, show)]
    return Decomposition(fragments, slots, kinds, unknown)


# ------------------------------------------------------------------------------------------------ assembly

_MODIFIER_ORDER = ("GROUP BY", "HAVING", "ORDER BY", "LIMIT", "OFFSET", "VALUES")
_FORMS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")
LITERAL_PATTERN = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')""")
PLACEHOLDER_USE = re.compile(r"(?<![\w?$:/#<])(?:([A-Za-z][\w\-]*):)?(uri\d+)\b(?![:/>])")
_PNAME_USE = re.compile(r"(?<![\w?$:/#<\"'])([A-Za-z][\w\-]*):(?=[A-Za-z_0-9])")


class AssemblyError(ValueError):
    """Fragments that cannot make one query; ``problems`` lists every reason."""

    def __init__(self, problems: Sequence[str]):
        super().__init__("; ".join(problems))
        self.problems = list(problems)


def placeholders_in(text: str) -> list[tuple[str | None, str]]:
    """``(prefix, placeholder)`` uses in a fragment, outside string literals."""
    found = []
    for number, part in enumerate(LITERAL_PATTERN.split(text)):
        if number % 2 == 0:
            found += [(m.group(1), m.group(2)) for m in PLACEHOLDER_USE.finditer(part)]
    return found


def substitute_placeholders(text: str, resolve: Callable[[str | None, str], str]) -> str:
    """``text`` with every placeholder use outside string literals replaced by ``resolve(prefix, placeholder)``."""
    parts = LITERAL_PATTERN.split(text)
    return "".join(part if number % 2 else PLACEHOLDER_USE.sub(lambda m: resolve(m.group(1), m.group(2)), part)
                   for number, part in enumerate(parts))


def _role(text: str) -> str:
    upper = " ".join(text.split()).upper()
    if upper.startswith(_FORMS):
        return "skeleton"
    if upper.startswith(tuple(m for m in _MODIFIER_ORDER if m != "VALUES")):
        return "modifier"
    return "body"


def assemble(fragments: Sequence[str | Fragment], slots: Sequence[Slot], scheme: IdScheme) -> str:
    """One executable query from fragments and grounding (section 3.4; deterministic, no model call).

    The skeleton fragment's ``{}`` receives the body fragments in their given order (triple patterns get their
    final dot); modifiers follow in SPARQL's clause order; a fragment of kind ``modifier`` starting with VALUES is
    a trailing VALUES clause. Each placeholder becomes its slot's IRI; PREFIX lines are added for the prefixes the
    query uses. Raises :class:`AssemblyError` listing every problem (no skeleton or two, a placeholder without a
    slot, an id that is not valid where it is used).
    """
    problems: list[str] = []
    by_placeholder = {slot.placeholder: slot for slot in slots}
    skeletons, body, modifiers = [], [], []
    for item in fragments:
        text = " ".join((item.text if isinstance(item, Fragment) else str(item)).split())
        if not text:
            continue
        role = _role(text)
        if isinstance(item, Fragment) and item.kind == "modifier":
            role = "modifier"
        (skeletons if role == "skeleton" else modifiers if role == "modifier" else body).append(text)
    if len(skeletons) != 1:
        problems.append(f"expected one SELECT/ASK skeleton fragment, got {len(skeletons)}")

    def resolve(prefix: str | None, placeholder: str) -> str:
        slot = by_placeholder.get(placeholder)
        if slot is None:
            problems.append(f"{placeholder} has no grounding entry")
            return placeholder
        try:
            iri = scheme.join(prefix, slot.id)
        except ValueError as error:
            problems.append(f"{placeholder}: {error}")
            return placeholder
        return f"{prefix}:{slot.id}" if prefix else f"<{iri}>"

    skeleton = substitute_placeholders(skeletons[0], resolve) if skeletons else ""
    parts = [substitute_placeholders(t, resolve) + (" ." if _is_triple(t) else "") for t in body]
    ordered = sorted(modifiers, key=lambda t: next(
        (n for n, m in enumerate(_MODIFIER_ORDER) if t.upper().startswith(m)), len(_MODIFIER_ORDER)))
    tail = [substitute_placeholders(t, resolve) for t in ordered]
    if problems:
        raise AssemblyError(problems)
    where = "{\n" + "".join(f"  {p}\n" for p in parts) + "}"
    if re.search(r"\{\s*\}\s*$", skeleton):
        text = re.sub(r"\{\s*\}\s*$", lambda _: where, skeleton)
    else:
        text = f"{skeleton} WHERE {where}" if " WHERE" not in skeleton.upper() else f"{skeleton} {where}"
    text = "\n".join([text, *tail])
    return _prefix_lines(text, scheme) + text


def _is_triple(text: str) -> bool:
    word = text.split(maxsplit=1)[0].upper() if text.split() else ""
    return word not in ("FILTER", "OPTIONAL", "MINUS", "BIND", "VALUES", "SERVICE", "GRAPH", "INCLUDE") and \
        not text.startswith("{")


def _prefix_lines(text: str, scheme: IdScheme) -> str:
    table = {**KNOWN_PREFIXES, **{prefix: namespace for prefix, namespace, _, _ in scheme.prefixed}}
    used = []
    for number, part in enumerate(LITERAL_PATTERN.split(text)):
        if number % 2 == 0:
            for match in _PNAME_USE.finditer(re.sub(r"<[^<>\s]*>", " ", part)):
                if match.group(1) in table and match.group(1) not in used:
                    used.append(match.group(1))
    return "".join(f"PREFIX {p}: <{table[p]}>\n" for p in used)
