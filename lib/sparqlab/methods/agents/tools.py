"""The agents' tools, registered with the platform's tool registry as thin functions over the question context.

SPINACH's tools (``agent_*``) show search hits and neighbourhoods as they are and prune every looked-up
neighbourhood with an LLM call. SAGA's variants (``saga_*``) run the same KG calls through the schema:

- ``saga_lookup``: adds τ(e) to Θ, applies P_τ(e) (Eq. 3) to the outgoing properties (and the same rule with ρ(p)
  to incoming ones) with *known* (formal, unmasked) declarations only, renders the rest compactly with domain
  and range (empirical evidence as a "usually" hint), lists properties whose range fits the expected answer type
  first, and falls back to LLM pruning only when the entity has no type;
- ``saga_search``: property hits annotated with domain and range; the paper's search hides nothing (P_τ(e)
  belongs to an entity's lookup, and the property a multi-hop question needs often belongs to an intermediate
  variable). Hiding hits by the last looked-up entity's types is the non-default ``search_filter`` option;
- ``saga_execute``: answers [BLOCKED] instead of running a pattern whose property has a known domain that
  excludes its subject's known type (Θ's entity types plus the query's own type patterns), and after a
  successful run records the query's variable types in Θ and trace-local range evidence from non-empty results
  of properties the index has no range for. A failing (blocked, erroneous or empty) query teaches Θ nothing.

All KG access goes through ``ctx.search`` / ``ctx.lookup`` / ``ctx.examples`` / ``ctx.query`` (counted per tool).
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from sparqlab.kg.errors import KGError
from sparqlab.kg.neighbourhood import Edge, Neighbourhood, not_shown_line, property_order, qualifier_text
from sparqlab.kg.results import QueryResult
from sparqlab.methods.agents.controller import AgentSession, session_of
from sparqlab.methods.agents.features import SagaFeatures
from sparqlab.methods.agents.prompts import PRUNE, PRUNE_EXAMPLE
from sparqlab.methods.agents.schema import (
    Triple,
    TypeState,
    declared_superclasses,
    domain_conflicts,
    frequent_types,
    render_property,
    sample_queries,
    superclass_query,
    triple_patterns,
    type_filter,
    type_patterns,
)
from sparqlab.platform import QuestionContext
from sparqlab.platform.parsing import first_json_object
from sparqlab.platform.tools import Observation, Tool, register_tool

EMPTY_RESULT = "(no rows): the query returned an empty result."
"""The observation of an empty result: all SPINACH says (its tool only reports the result)."""
EMPTY_WARNING = ("[WARNING] Check the direction of each triple, the entity ids and whether the property applies "
                 "to this kind of entity; try another property or entity.")
"""SAGA's addition to the empty-result observation (appendix F.2: "If the result is empty with a [WARNING], check
property type compatibility")."""
RANGE_SAMPLE = 5
"""Result values whose types are read for trace-local range evidence."""


def _short(ctx: QuestionContext, iri: str) -> str:
    return ctx.kg.profile.shorten(iri)


def _named(ctx: QuestionContext, iri: str, label: str) -> str:
    return f"{label} ({_short(ctx, iri)})" if label else _short(ctx, iri)


async def _labels(ctx: QuestionContext, iris: set[str]) -> dict[str, str]:
    """Labels of some IRIs in one counted query (for readable result tables)."""
    iris = {i for i in iris if not any(c in i for c in '<>"{}|^`\\ ')}
    if not iris:
        return {}
    profile = ctx.kg.profile
    languages = ", ".join(json.dumps(lang) for lang in profile.label_languages)
    values = " ".join(f"<{i}>" for i in sorted(iris))
    result = await ctx.query(f"SELECT ?e ?l WHERE {{ VALUES ?e {{ {values} }} ?e <{profile.label_predicate}> ?l "
                             f"FILTER(LANG(?l) IN ({languages})) }}")
    if isinstance(result, KGError):
        return {}
    labels: dict[str, str] = {}
    for row in result.rows:
        labels.setdefault(row["e"].value, row["l"].value)
    return labels


async def closure_of(ctx: QuestionContext, session: AgentSession, types: set[str]) -> set[str]:
    """τ⁺: the types and all their superclasses (one counted query per distinct type set, cached per question)."""
    key = frozenset(types)
    if key not in session.closures and (declared := declared_superclasses(ctx.kg, types)) is not None:
        session.closures[key] = declared  # a curated schema's supertypes (Freebase's fb_types), no query
    if key not in session.closures:
        result = await ctx.query(superclass_query(types, ctx.kg.profile.subclass_predicate))
        supers = set() if isinstance(result, KGError) else {r["super"].value for r in result.rows if "super" in r}
        session.closures[key] = set(types) | supers
    return session.closures[key]


async def ensure_sampled(ctx: QuestionContext, session: AgentSession, props) -> None:
    """Sample the subject/object types of properties a large KG's index has not sampled yet (counted queries;
    the samples are kept in the run's index for every later question)."""
    schema = session.schema
    for prop in [p for p in dict.fromkeys(props) if schema.needs_sample(p)]:
        sides = []
        for side in ("subject", "object"):
            counts, sampled = [await ctx.query(q) for q in sample_queries(ctx.kg.profile, prop, side)]
            ok = not isinstance(counts, KGError) and not isinstance(sampled, KGError)
            sides.append(frequent_types(counts, sampled) if ok else ())
        schema.add_sample(prop, *sides, class_labels=await _labels(ctx, {c for side in sides for c in side}))


def saga_features(session: AgentSession) -> SagaFeatures:
    """The SAGA features of the session a ``saga_*`` tool runs in; a clear error in a session that is not SAGA's
    (:attr:`AgentSession.schema_aware`)."""
    if session.features is None:
        raise RuntimeError("a SAGA tool ran in a session without SAGA's features (the method's start() sets them)")
    return session.features


async def _entity_types(ctx: QuestionContext, session: AgentSession, types: set[str]) -> set[str]:
    if types and saga_features(session).subclass_closure:
        return await closure_of(ctx, session, types)
    return types


# -- search ---------------------------------------------------------------------------------------------------

def _matched(hit) -> str:
    """`` [matched: wife]`` when the search matched another name of the hit than its label (an alias)."""
    return f" [matched: {hit.matched}]" if hit.matched else ""


async def _search(ctx: QuestionContext, args: dict[str, Any], schema_aware: bool) -> Observation:
    session = session_of(ctx)
    text, limit = args["text"], session.config.search_limit
    profile = ctx.kg.profile
    entities = await ctx.search(text, kind="entity", limit=limit)
    threshold = session.config.property_min_score
    props = [h for h in await ctx.search(text, kind="property", limit=limit) if threshold is None or h.score >= threshold]
    lines = []
    if entities:
        lines.append("entities:")
        lines += [f"- {_named(ctx, h.id, h.label)}" + (f": {h.description}" if h.description else "")
                  + (f" [types: {', '.join(h.types)}]" if h.types else "") + _matched(h) for h in entities]
    predicates = [profile.predicate_iri(h.id) for h in props]
    by_predicate = dict(zip(predicates, props, strict=True))
    hidden: list[str] = []
    if schema_aware:
        await ensure_sampled(ctx, session, predicates)
    if schema_aware and session.focus and saga_features(session).search_filter:
        focus_types = await _entity_types(ctx, session, session.theta.get(session.focus))
        result = type_filter(predicates, focus_types, session.schema,
                             superclasses=session.theta.superclasses.get(session.focus, ()))
        predicates, hidden = result.kept, result.removed
        session.counts["search_filtered"] += len(hidden)
    if predicates:
        lines.append("properties:")
        for p in predicates:
            hit = by_predicate[p]
            if schema_aware:
                lines.append("- " + render_property(p, session.schema, _short(ctx, p), hit.label, hit.description,
                                                    session.theta.range_evidence.get(p, ())) + _matched(hit))
            else:
                lines.append(f"- {_named(ctx, p, hit.label)}" + (f": {hit.description}" if hit.description else "")
                             + _matched(hit))
    if hidden:
        lines.append(f"({len(hidden)} matching propert{'y' if len(hidden) == 1 else 'ies'} hidden: their domain "
                     f"excludes the type of {_short(ctx, session.focus)})")
    if not lines:
        return Observation(f"Nothing found for {text!r}.", [])
    return Observation("\n".join(lines), entities + props)


# -- lookup -----------------------------------------------------------------------------------------------------

NESTED_SHOWN = 6
"""Properties of an unnamed value node (a Freebase CVT) shown inside its value, in the lookup's property order."""

Groups = dict[str, dict[str, list[Edge]]]
"""``{"out": {property: edges}, "in": {...}}``: a neighbourhood's properties in the order they are rendered."""


def _value(ctx: QuestionContext, edge: Edge, n: int) -> str:
    """One value as the agents show it: id with label, a CVT with its own properties one level deep (each
    property once), a statement's qualifiers in brackets after the value."""
    if edge.nested:  # a CVT: its id, then its own properties with their values, as Freebase agents show it
        inner = {}
        for nested in edge.nested:
            inner.setdefault(nested.property, []).append(nested)
        order = property_order(inner)
        shown = "; ".join(f"{_named(ctx, p, inner[p][0].property_label)} -> "
                          + ", ".join(_value(ctx, e, n) for e in inner[p][:n]) for p in order[:NESTED_SHOWN])
        more = f"; … (+{len(order) - NESTED_SHOWN} more properties)" if len(order) > NESTED_SHOWN else ""
        return f"{_short(ctx, edge.value)} {{{shown}{more}}}"
    if edge.value_label or "://" in edge.value:
        text = _named(ctx, edge.value, edge.value_label)
    else:
        text = edge.value if len(edge.value) <= 60 else edge.value[:57] + "..."
    return text + qualifier_text(edge, lambda iri, label: _named(ctx, iri, label) if "://" in iri else iri)


def _values(ctx: QuestionContext, hood: Neighbourhood, direction: str, prop: str, edges: list[Edge], n: int) -> str:
    shown = ", ".join(_value(ctx, e, n) for e in edges[:n])
    more = hood.count(direction, prop) - min(n, len(edges))
    return shown + (f" … (+{more} more)" if more > 0 else "")


def _property_name(ctx: QuestionContext, hood: Neighbourhood, prop: str) -> str:
    return _named(ctx, prop, hood.property_labels.get(prop, ""))


async def _prune(ctx: QuestionContext, session: AgentSession, hood: Neighbourhood, groups: Groups) -> Groups:
    """SPINACH's LLM pruning (appendix F.3): the model returns the useful part of the neighbourhood as JSON; the
    properties it keeps are those whose id appears in a returned key. An unreadable reply keeps everything."""
    n = session.config.values_per_property
    entry = {}
    for direction, props in groups.items():
        for prop, edges in props.items():
            name = _property_name(ctx, hood, prop)
            key = name if direction == "out" else f"(incoming) {name}"
            entry[key] = [_value(ctx, e, n) for e in edges[:n]]
    entity = _named(ctx, hood.id, hood.label) + (f": {hood.description}" if hood.description else "")
    prompt = PRUNE.render(example=ctx.kg.profile.conventions.prune_example or PRUNE_EXAMPLE, entity=entity,
                          edges=json.dumps(entry, ensure_ascii=False), question=session.question.text)
    reply = await ctx.chat([{"role": "user", "content": prompt}], role="controller", kind="prune",
                           defaults=session.config.call_params("prune"))
    kept = first_json_object(reply.text)
    if not kept:
        session.counts["prune_unreadable"] += 1
        return groups
    keys = " ".join(kept)
    return {direction: {p: e for p, e in props.items() if f"({_short(ctx, p)})" in keys}
            for direction, props in groups.items()}


def _cap(groups: Groups, limit: int) -> tuple[Groups, dict[str, list[str]]]:
    """The first ``limit`` properties of each direction (already in the rendering order), and the names of the
    rest, which the observation lists without values."""
    shown = {d: dict(list(props.items())[:limit]) for d, props in groups.items()}
    hidden = {d: list(props)[limit:] for d, props in groups.items()}
    return shown, hidden


async def _lookup(ctx: QuestionContext, args: dict[str, Any], schema_aware: bool) -> Observation:
    session = session_of(ctx)
    config = session.config
    hood = await ctx.lookup(args["entity"], values_per_property=config.values_per_property)
    type_ids = {t for t, _ in hood.types}
    class_labels = {t: label for t, label in hood.types if label}
    session.focus = hood.id
    supers = await _superclasses(ctx, session, hood) if schema_aware else set()
    if schema_aware and saga_features(session).type_state:
        if session.theta.add(hood.id, type_ids, hood.label, class_labels) and type_ids:
            session.note(f"[info] {_named(ctx, hood.id, hood.label)} is "
                         + ", ".join(sorted(class_labels.get(t, _short(ctx, t)) for t in type_ids)))
    elif schema_aware:  # without a persistent state only this lookup knows the entity's types
        session.theta = TypeState(answer_type=session.theta.answer_type)
        session.theta.add(hood.id, type_ids, hood.label, class_labels)
    if supers:
        session.theta.superclasses[hood.id] = supers
    groups: Groups = {"out": hood.grouped("out"), "in": hood.grouped("in")}
    total = sum(len(props) for props in groups.values())
    if schema_aware:
        await ensure_sampled(ctx, session, [p for props in groups.values() for p in props])
    filtered = pruned = 0
    notes = []
    filtering = schema_aware and type_ids and saga_features(session).type_filter
    if filtering:  # P_τ(e) before the cap: a removed property appears in no part of the observation
        tau = await _entity_types(ctx, session, type_ids)
        for direction, side in (("out", "domain"), ("in", "range")):
            result = type_filter(groups[direction], tau, session.schema, side=side, superclasses=supers)
            groups[direction] = {p: groups[direction][p] for p in result.kept}
            filtered += len(result.removed)
        if filtered:
            notes.append(f"{filtered} of {total} properties removed: their declared types exclude this entity's "
                         "types")
    groups = _order_for_answer(session, groups)
    groups, hidden = _cap(groups, config.lookup_max_properties)
    # SPINACH always; SAGA only for an untyped entity (and neither when no model answers: an observation
    # shown outside a run, AgentMethod.observe)
    if not filtering and (not schema_aware or not type_ids) and ctx.models:
        before = sum(len(props) for props in groups.values())
        groups = await _prune(ctx, session, hood, groups)
        pruned = before - sum(len(props) for props in groups.values())
        if pruned:
            notes.append(f"{pruned} of {before} properties left out as not relevant to the question")
    shown = sum(len(props) for props in groups.values())
    not_shown = sum(len(props) for props in hidden.values())
    session.lookups.append({"entity": hood.id, "types": len(type_ids), "properties": total, "shown": shown,
                            "filtered": filtered, "pruned": pruned, "not_shown": not_shown})
    ctx.log("lookup_filter", entity=hood.id, properties=total, shown=shown, filtered=filtered, pruned=pruned,
            not_shown=not_shown)
    return Observation(_render_lookup(ctx, session, hood, groups, hidden, notes, schema_aware), hood)


async def _superclasses(ctx: QuestionContext, session: AgentSession, hood: Neighbourhood) -> set[str]:
    """σ(e) of an entity that is a class: itself and its subclass-of values (closed under subclass-of with the
    ``subclass_closure`` option); empty for an entity without subclass-of edges (an instance)."""
    direct = {e.value for e in hood.outgoing if e.property == ctx.kg.profile.subclass_predicate}
    if not direct:
        return set()
    return {hood.id} | await _entity_types(ctx, session, direct)


def _answer_fit(session: AgentSession, prop: str, direction: str) -> bool:
    """Whether the expected answer type fits the property's far end (range for outgoing, domain for incoming)."""
    answer = session.theta.answer_type
    if not answer or not answer[1] or not session.schema_aware:
        return False
    far = session.schema.range(prop) if direction == "out" else session.schema.domain(prop)
    return answer[1] in far


def _order_for_answer(session: AgentSession, groups: Groups) -> Groups:
    """Properties whose far end fits the expected answer type first (SAGA's prior), otherwise the lookup's order
    (stable)."""
    return {d: {p: props[p] for p in sorted(props, key=lambda p: not _answer_fit(session, p, d))}
            for d, props in groups.items()}


def _render_lookup(ctx: QuestionContext, session: AgentSession, hood: Neighbourhood, groups: Groups,
                   hidden: dict[str, list[str]], notes: list[str], schema_aware: bool) -> str:
    n = session.config.values_per_property
    lines = [_named(ctx, hood.id, hood.label) + (f": {hood.description}" if hood.description else "")]
    lines.append("types: " + (", ".join(_named(ctx, t, label) for t, label in hood.types) or "(none)"))
    for direction, title, arrow in (("out", "outgoing properties (the entity is the subject)", "->"),
                                    ("in", "incoming properties (the entity is the object)", "<-")):
        props = groups[direction]
        if not props and not hidden[direction]:
            continue
        lines.append(f"{title}:")
        for prop, edges in props.items():
            label = hood.property_labels.get(prop, "")
            if schema_aware:
                head = render_property(prop, session.schema, _short(ctx, prop), label,
                                       range_evidence=session.theta.range_evidence.get(prop, ()))
                if _answer_fit(session, prop, direction):
                    head += " [fits the expected answer type]"
            else:
                head = _named(ctx, prop, label)
            lines.append(f"- {head}")
            lines.append(f"    {arrow} {_values(ctx, hood, direction, prop, edges, n)}")
        if hidden[direction]:
            lines.append("  " + not_shown_line(hidden[direction], lambda p: _property_name(ctx, hood, p)))
    if not any(groups.values()) and not any(hidden.values()):
        lines.append("(no properties to show)")
    lines += [f"({note})" for note in notes]
    return "\n".join(lines)


# -- examples, execute, stop --------------------------------------------------------------------------------------

async def _examples(ctx: QuestionContext, args: dict[str, Any]) -> Observation:
    rows = await ctx.examples(args["property"], limit=3)
    if not rows:
        return Observation(f"No uses of {args['property']} found.", rows)
    lines = [f"{_named(ctx, r['subject'], r['subject_label'])} -> "
             + (_named(ctx, r["object"], r["object_label"]) if "://" in r["object"] else r["object"]) for r in rows]
    return Observation("\n".join(lines), rows)


def _check_state(ctx: QuestionContext, session: AgentSession, triples: list[Triple]) -> TypeState:
    """The types the [BLOCKED] check of one query relies on, without touching Θ (a query that is blocked or
    fails must not teach Θ anything): Θ's entity types (without the persistent state Θ holds only the entity
    of the latest lookup, so "− persistent type state" removes persistence, not the check), and for variables the
    query's own type patterns — a variable name is reused across queries for different things, so ``?x``'s
    types from an earlier query do not carry over. ``variable_types="trace"`` is the older reading: every
    query's type patterns are written into Θ before it runs and a variable keeps them for later queries."""
    type_predicate, features = ctx.kg.profile.type_predicate, saga_features(session)
    if features.variable_types == "trace" and features.type_state:
        for term, cls in session.theta.observe_query(triples, type_predicate):
            if term.startswith("?"):
                session.note(f"[info] {term} is {session.theta.class_name(cls)}")
        return session.theta
    state = TypeState(class_labels=session.theta.class_labels, superclasses=session.theta.superclasses)
    for term, classes in session.theta.types.items():  # without type_state: the entity just looked up only
        if not term.startswith("?"):
            state.add(term, classes)
    state.observe_query(triples, type_predicate)
    return state


def _learn_from_query(ctx: QuestionContext, session: AgentSession, triples: list[Triple]) -> None:
    """After a successful run: the query's type patterns become Θ's record of its variables (replacing what an
    earlier query said about the same name) and of its entities (added to what Θ knows)."""
    found: dict[str, set[str]] = {}
    for term, cls in type_patterns(triples, ctx.kg.profile.type_predicate):
        found.setdefault(term, set()).add(cls)
    theta = session.theta
    for term, classes in found.items():
        theta.class_labels.update({c: session.schema.label(c) for c in classes if c not in theta.class_labels})
        if term.startswith("?"):
            if theta.get(term) != classes:
                theta.types.pop(term, None)
                theta.add(term, classes)
                session.note(f"[info] {term} is {', '.join(sorted(theta.class_name(c) for c in classes))}")
        else:
            theta.add(term, classes)


async def _blocked(ctx: QuestionContext, session: AgentSession, triples: list[Triple]) -> str | None:
    """SAGA's execute-time check: the [BLOCKED] text for the first pattern whose property's known domain excludes
    its subject's known types (:func:`_check_state`), else ``None``."""
    state, features = _check_state(ctx, session, triples), saga_features(session)
    if not features.type_filter:
        return None
    closure = None
    if features.subclass_closure:
        closure = {c: await closure_of(ctx, session, {c}) for t in triples for c in state.get(t.subject)}
    conflicts = domain_conflicts(triples, state, session.schema, closure)
    if not conflicts:
        return None
    triple, subject_types, domain = conflicts[0]
    schema = session.schema
    prop = f"{schema.label(triple.predicate)} ({_short(ctx, triple.predicate)})"
    subject = triple.subject if triple.subject.startswith("?") else _short(ctx, triple.subject)
    kinds = ", ".join(sorted(state.class_name(c) for c in subject_types))
    allowed = ", ".join(sorted(schema.label(c) for c in domain))
    session.note(f"[fail] BLOCKED: {prop} on {subject} ({kinds})")
    return (f"[BLOCKED] Not executed: {prop} has domain {allowed}, but {subject} is {kinds}. "
            f"Use a property that applies to {kinds}.")


async def _range_evidence(ctx: QuestionContext, session: AgentSession, triples: list[Triple],
                          result: QueryResult) -> None:
    """Trace-local evidence: types of a few result values of each pattern ``s p ?o`` whose property has no
    indexed range; kept in Θ for this interaction only."""
    profile = ctx.kg.profile
    for triple in triples:
        var = triple.object[1:] if triple.object.startswith("?") else None
        if not var or var not in result.vars or session.schema.range(triple.predicate) or "://" not in triple.predicate:
            continue
        values = sorted({t.value for t in result.column(var) if t.type == "uri"})[:RANGE_SAMPLE]
        if not values:
            continue
        found = await ctx.query(f"SELECT DISTINCT ?t WHERE {{ VALUES ?v {{ {' '.join(f'<{v}>' for v in values)} }} "
                                f"?v <{profile.type_predicate}> ?t }}")
        if isinstance(found, KGError) or not found.rows:
            continue
        types = {r["t"].value for r in found.rows}
        theta = session.theta
        theta.class_labels.update({c: session.schema.label(c) for c in types if c not in theta.class_labels})
        theta.observe_range(triple.predicate, types)
        if theta.add(triple.object, types):  # named in the type context and the knowledge log, like a type pattern
            session.note(f"[info] {triple.object} is {', '.join(sorted(theta.class_name(c) for c in types))}")


async def _execute(ctx: QuestionContext, args: dict[str, Any], schema_aware: bool) -> Observation:
    session = session_of(ctx)
    sparql = args["sparql"]
    # SAGA reads the query's triple patterns once, for the [BLOCKED] check and the range evidence
    triples = triple_patterns(sparql, ctx.kg.profile.prefixes) if schema_aware else []
    if schema_aware:
        blocked = await _blocked(ctx, session, triples)
        if blocked:
            session.counts["blocked"] += 1
            ctx.log("blocked", sparql=sparql, text=blocked)
            return Observation(blocked)
    result = await ctx.query(sparql)
    if isinstance(result, KGError):
        session.note(f"[fail] {result.kind}: {' '.join(sparql.split())[:120]}")
        return Observation(f"Error ({result.kind}): {result}\nFix the query and try again.", result)
    session.last_query, session.last_query_empty = sparql, result.is_empty
    if result.is_empty:
        session.note(f"[fail] Empty: {' '.join(sparql.split())[:120]}")
        return Observation(EMPTY_RESULT + (f"\n{EMPTY_WARNING}" if schema_aware else ""), result)
    iris = {t.value for row in result.rows[:session.config.execute_max_rows] for t in row.values() if t.type == "uri"}
    text = result.to_observation(session.config.execute_max_rows, await _labels(ctx, iris))
    session.note(f"[ok] {len(result)} row{'s' if len(result) != 1 else ''}: {' '.join(sparql.split())[:120]}")
    if schema_aware and saga_features(session).type_state:
        if saga_features(session).variable_types != "trace":
            _learn_from_query(ctx, session, triples)
        if result.kind == "select":
            await _range_evidence(ctx, session, triples, result)
    return Observation(text, result)


async def _stop(ctx: QuestionContext, args: dict[str, Any]) -> Observation:
    session = session_of(ctx)
    if session.last_query is None:
        return Observation("Stopped without a final query: no query was executed successfully.", None, final=True)
    return Observation("Stopped; the last executed query is the final answer.", session.last_query, final=True)


# -- registration ---------------------------------------------------------------------------------------------

_TEXT = {"text": {"type": "string", "description": "the name or words to look for"}}
_ENTITY = {"entity": {"type": "string", "description": "the entity id (prefixed name or <IRI>)"}}
_SPARQL = {"sparql": {"type": "string", "description": "the SPARQL query"}}

AGENT_TOOLS = (
    Tool("agent_search", "Entities and properties matching a text, with ids, descriptions and types.", _TEXT,
         partial(_search, schema_aware=False)),
    Tool("agent_lookup", "An entity's types and properties with values, pruned by an LLM call (SPINACH).", _ENTITY,
         partial(_lookup, schema_aware=False)),
    Tool("agent_examples", "A few real uses of a property.",
         {"property": {"type": "string", "description": "the property id"}}, _examples),
    Tool("agent_execute", "Run a SPARQL query; empty results and errors come back with guidance.", _SPARQL,
         partial(_execute, schema_aware=False)),
    Tool("agent_stop", "End; the last executed query is the final query.", {}, _stop),
    Tool("saga_search", "Search with property hits annotated by domain/range (SAGA).", _TEXT,
         partial(_search, schema_aware=True)),
    Tool("saga_lookup", "Schema-aware lookup: P_τ(e) filtering and compact domain/range rendering (SAGA).", _ENTITY,
         partial(_lookup, schema_aware=True)),
    Tool("saga_execute", "Execute with type-state updates, [BLOCKED] on known domain conflicts and trace-local "
         "range evidence (SAGA).", _SPARQL, partial(_execute, schema_aware=True)),
)
for _tool in AGENT_TOOLS:
    register_tool(_tool)
