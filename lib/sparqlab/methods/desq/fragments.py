"""Gold decompositions (DeSQ section 3.1) and the deterministic assembler (section 3.4).

A query is split into SPARQL fragments — the query skeleton (``SELECT ... WHERE {}`` / ``ASK WHERE {}``), each
top-level triple pattern, each top-level FILTER, every other top-level element whole (OPTIONAL, UNION, BIND,
VALUES, sub-SELECT ...), and each solution modifier (GROUP BY, HAVING, ORDER BY, LIMIT, OFFSET, trailing VALUES).
Variables are standardised to ``?var1, ?var2 ...`` in order of first appearance, and every KG IRI becomes a URI
placeholder ``uri1, uri2 ...`` (one per distinct id) whose grounding — id, label, description — is listed apart
(section 3.2). Which IRIs are ids, of which kind, and how they are written comes from the KG profile's
``id_shapes`` (:func:`scheme_for`): a shape with a prefix keeps it in front of the placeholder (Wikidata's
``wdt:uri1`` with id ``P36``, the paper's form, so ``p:``/``ps:`` uses of one property share a slot); one without
stands for the whole IRI, its id the IRI below the shape's namespace (the movie KG's ``entity/Person/Ridley%20Scott``,
``relation/directed_by``).

:func:`assemble` is the inverse: fragments plus grounding to one executable query, with no model call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from sparqlab.kg.profiles import OWL, RDF, RDFS, XSD, IdForm, KGProfile, get_profile, known_prefixes
from sparqlab.sparql.tree import (
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

PLACEHOLDER = re.compile(r"^uri(\d+)$")

# ------------------------------------------------------------------------------------------------ id schemes


@dataclass(frozen=True)
class IdScheme:
    """How a KG's IRIs become grounded slots: ``split(iri) -> (prefix, id, kind)`` or ``None`` for vocabulary
    IRIs that stay literally in fragments (rdf:type, rdfs:label, wikibase:...). ``kind`` is ``entity``,
    ``property`` or ``class``; the KB memory searches among entries of the slot's kind.

    ``shapes`` are the profile's id shapes, tried in order; ``generic`` (a profile without shapes): any
    non-vocabulary IRI is an entity whose id is the IRI; ``vocabulary``: IRIs that stay literally although a shape
    matches."""

    name: str
    shapes: tuple[IdForm, ...] = ()
    generic: bool = False
    vocabulary: frozenset[str] = frozenset()

    @property
    def prefixed(self) -> tuple[tuple[str, str, str, str], ...]:
        """``(prefix, namespace, id pattern, kind)`` of the shapes written with a prefix."""
        return tuple((s.prefix, s.namespace, s.pattern, s.kind) for s in self.shapes if s.prefix)

    def split(self, iri: str) -> tuple[str | None, str, str] | None:
        if iri in self.vocabulary:
            return None
        for shape in self.shapes:
            local = shape.split(iri)
            if local is not None:
                return shape.prefix, local, shape.kind
        if self.generic and not iri.startswith((RDF, RDFS, OWL, XSD)):
            return None, iri, "entity"
        return None

    def join(self, prefix: str | None, ident: str) -> str:
        """The IRI of ``ident`` under ``prefix`` (``None``: a bare placeholder); ``ValueError`` if ``ident`` is not
        a valid id there (a model may write ``"capital"`` where ``"P36"`` belongs)."""
        if not isinstance(ident, str) or not ident.strip() or any(c in ident for c in ' <>"{}|^`\\\n'):
            raise ValueError(f"{ident!r} is not a usable id")
        options = [s for s in self.shapes if s.prefix == prefix]
        if prefix is not None and not options:
            raise ValueError(f"unknown placeholder prefix {prefix!r}")
        for shape in options:
            if re.fullmatch(shape.pattern, ident):
                return shape.namespace + ident
        if prefix is not None:
            shapes = " or ".join(s.pattern for s in options)
            raise ValueError(f"{ident!r} is not a valid id after {prefix}: (expected {shapes})")
        if options:
            examples = ", ".join(s.example for s in options if s.example)
            raise ValueError(f"{ident!r} is not a {self.name} id (e.g. {examples})")
        return ident

    def kind_of(self, prefix: str | None, ident: str) -> str | None:
        """The kind of slot an id names (``None`` when the id has no valid shape)."""
        kinds = [s.kind for s in self.shapes if s.prefix == prefix and re.fullmatch(s.pattern, str(ident))]
        if kinds:
            return kinds[0]
        return "entity" if self.generic and prefix is None else None

    def placeholder_note(self) -> str:
        """How placeholders are written on this KG, for the map prompt: keep a shape's prefix and give the bare
        id, or (without prefixes) let the placeholder stand for the IRI below the namespace; ``""`` for a
        generic scheme."""
        prefixed = [s for s in self.shapes if s.prefix]
        if prefixed:
            prefixes = list(dict.fromkeys(s.prefix for s in prefixed))[:2]
            examples = list(dict.fromkeys(s.example for s in prefixed if s.example))[:2]
            shown = " or ".join(f"{p}:uri{n}" for n, p in enumerate(prefixes, start=1))
            return (f" — keep the prefix in front of the placeholder, as in {shown}, and give the bare id "
                    f"({', '.join(examples)}) in the grounding")
        if self.shapes:
            namespace = self.shapes[0].namespace
            examples = ", ".join(s.example for s in self.shapes if s.example)
            return f" — a placeholder stands for the whole IRI; its id is the part after {namespace} ({examples})"
        return ""


def scheme_for(profile: KGProfile | str) -> IdScheme:
    """The id scheme of a KG profile (or a registered profile's name), built from its ``id_shapes`` and
    ``vocabulary``; a profile without shapes gets a generic one (every non-vocabulary IRI is a slot)."""
    if isinstance(profile, str):
        profile = get_profile(profile)
    return IdScheme(profile.name, profile.id_shapes, generic=not profile.id_shapes,
                    vocabulary=frozenset(profile.vocabulary))


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
    for prefix, namespace in known_prefixes().items():
        if iri.startswith(namespace) and _SIMPLE_LOCAL.match(iri[len(namespace):]):
            return f"{prefix}:{iri[len(namespace):]}"
    return f"<{iri}>"


def decompose(query: str | Query, scheme: IdScheme,
              describe: Callable[[str, str, str], tuple[str, str] | None] | None = None) -> Decomposition:
    """The gold decomposition of ``query`` (section 3.1): fragments with standardised variables and URI
    placeholders, and a grounding slot per distinct id. ``describe(kind, prefix-or-"", id) -> (label,
    description)`` fills the grounding (KB memory or KG labels); it returns ``None`` for an id it does not know,
    whose placeholder is then listed in ``unknown``. Without ``describe`` labels stay empty.
    Raises :class:`~sparqlab.sparql.tree.SparqlParseError` for a query that does not parse."""
    tree = parse_query(query, known_prefixes()) if isinstance(query, str) else query
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
    table = {**known_prefixes(), **{prefix: namespace for prefix, namespace, _, _ in scheme.prefixed}}
    used = []
    for number, part in enumerate(LITERAL_PATTERN.split(text)):
        if number % 2 == 0:
            for match in _PNAME_USE.finditer(re.sub(r"<[^<>\s]*>", " ", part)):
                if match.group(1) in table and match.group(1) not in used:
                    used.append(match.group(1))
    return "".join(f"PREFIX {p}: <{table[p]}>\n" for p in used)
