"""`sparqlab schema show|filter`: SAGA's schema index of a KG, and what the type filter P_τ(e) does to an entity's
properties — to see why a property vanished from an agent's lookup."""

from __future__ import annotations

import argparse
import json


def register(subparsers) -> None:
    """Add this area's subcommands."""
    schema = subparsers.add_parser("schema", help="SAGA's schema index (domain/range per property) and type filter")
    actions = schema.add_subparsers(dest="schema_command", metavar="ACTION")

    show = actions.add_parser("show", help="per property: domain, range, source (formal/empirical/none), masked",
                              description="Print the schema index of a KG (built on first use and kept in the "
                                          "cache), as a coverage mask leaves it.")
    _common(show)
    show.set_defaults(handler=_show)

    filt = actions.add_parser("filter", help="which of some properties P_tau(e) keeps for an entity",
                              description="Print the entity's types and which of the given properties the type "
                                          "filter P_tau(e) = {p | domain(p) empty or shares a type with e} keeps or "
                                          "removes, as {\"entity\", \"types\", \"kept\", \"removed\"}.")
    _common(filt)
    filt.add_argument("--entity", required=True,
                      help="entity id as the KG writes it (Q42 on Wikidata, Person/Ridley Scott on movies), a "
                           "prefixed name (wd:Q42) or an IRI")
    filt.add_argument("--properties", required=True,
                      help="comma-separated property ids: short (P19,P27; directed_by), prefixed (wdt:P19) or IRIs")
    filt.add_argument("--subclass-closure", action=argparse.BooleanOptionalAction, default=None,
                      help="close the entity's types under subclass-of before filtering (default: what the KG's "
                           "declarations mean: yes for rdfs:domain/rdfs:range, no for Wikidata's P2302)")
    filt.set_defaults(handler=_filter)
    schema.set_defaults(handler=lambda args: schema.print_help() or 2)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kg", required=True, help="KG name (movies, wikidata), endpoint URL or RDF file")
    parser.add_argument("--kg-url", default=None,
                        help="SPARQL endpoint (or RDF file) serving that KG, e.g. a Wikidata mirror with --kg wikidata")
    parser.add_argument("--schema-coverage", type=float, default=1.0,
                        help="fraction of formal domain declarations kept (default 1.0)")
    parser.add_argument("--coverage-seed", type=int, default=0, help="seed choosing which are kept (default 0)")
    parser.add_argument("--no-empirical", action="store_true",
                        help="no empirical fallback: properties without a formal declaration stay unconstrained")
    parser.add_argument("--empirical-filter", action="store_true",
                        help="let sampled types remove properties like a declaration (not the paper's reading: "
                             "by default they are hints only)")
    parser.add_argument("--sample", type=int, default=50, help="subjects/objects sampled per property (default 50)")
    parser.add_argument("--format", choices=["text", "json"], default="text", help="output format")


def _index(args: argparse.Namespace):
    from sparqlab.kg import PROFILES, open_kg
    from sparqlab.methods.agents.schema import default_schema_folder, load_or_build

    if args.kg_url:
        kg = open_kg(args.kg_url, profile=args.kg if args.kg in PROFILES else None)
    else:
        kg = open_kg(args.kg)
    index = load_or_build(kg, default_schema_folder(kg, args.sample), sample=args.sample)
    view = index.with_coverage(args.schema_coverage, args.coverage_seed).with_empirical_fallback(
        not args.no_empirical).with_empirical_filter(args.empirical_filter)
    return kg, view


def _show(args: argparse.Namespace) -> int:
    kg, index = _index(args)
    rows = [index.describe(p) for p in sorted(index.properties)]
    if args.format == "json":
        print(json.dumps({"kg": kg.identity, "schema_coverage": args.schema_coverage,
                          "coverage_seed": args.coverage_seed, "properties": rows}, indent=1, ensure_ascii=False))
        return 0
    for row in rows:
        mark = " [masked]" if row["masked"] else ""
        relation = "" if row["domain_relation"] == "instance" else f"{row['domain_relation']}: "
        print(f"{kg.profile.shorten(row['property'])} {row['label']!r}: domain {relation}"
              f"{', '.join(row['domain_labels']) or '-'} ({row['domain_source']}); range {', '.join(row['range_labels']) or '-'} ({row['range_source']}){mark}")
    return 0


def _filter(args: argparse.Namespace) -> int:
    from sparqlab.methods.agents.schema import class_superclasses, entity_types, superclasses, type_filter

    kg, index = _index(args)
    profile = kg.profile
    entity = profile.resolve_id(args.entity, "entity")
    given = {p.strip(): profile.predicate_iri(profile.resolve_id(p, "property"))
             for p in args.properties.split(",") if p.strip()}
    properties = list(given.values())
    types = entity_types(kg, entity)
    closure = kg.profile.constraints.subclass_semantics if args.subclass_closure is None else args.subclass_closure
    tau = superclasses(kg, types) if closure else set(types)
    sigma = class_superclasses(kg, entity)
    if sigma and closure:
        sigma = superclasses(kg, sigma)
    result = type_filter(properties, tau, index, superclasses=sigma)
    report = {"entity": entity, "resolved": {args.entity.strip(): entity, **given}, "types": types,
              "kept": result.kept, "removed": result.removed}
    if args.format == "json":
        print(json.dumps(report, indent=1, ensure_ascii=False))
        return 0
    print(f"{_echo(args.entity, entity)}: types {', '.join(index.label(t) for t in types) or '(none)'}")
    for text, prop in given.items():
        verdict = "kept" if prop in result.kept else "REMOVED"
        domain = ", ".join(index.label(c) for c in sorted(index.filter_classes(prop))) or "unconstrained"
        print(f"  {verdict:7} {_echo(text, prop)} ({index.label(prop)}): domain {domain}")
    return 0


def _echo(given: str, iri: str) -> str:
    """The id as typed and the IRI it resolved to (``Q42 = <http://www.wikidata.org/entity/Q42>``)."""
    return f"{given.strip()} = <{iri}>"
