"""`sparqlab kg build|search|lookup` and `sparqlab query`: build bundled KGs, search names, show what an agent's
lookup shows, run a query from the shell."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from sparqlab.core.text import text_table

_MAX_CELL = 70


def register(subparsers) -> None:
    """Add ``kg`` (with ``build``, ``search``, ``lookup``, ``serve``, ``serve-fixture`` and ``prefixes``) and
    ``query``."""
    kg = subparsers.add_parser("kg", help="build and inspect knowledge graphs")
    kg_commands = kg.add_subparsers(dest="kg_command", metavar="KG_COMMAND", required=True)

    build = kg_commands.add_parser("build", help="build a bundled KG's embedded store (e.g. movies)")
    build.add_argument("name", help="KG name with a bundled builder: movies or ck25")
    build.add_argument("--force", action="store_true", help="rebuild even if the store exists")
    build.set_defaults(handler=build_command)

    search = kg_commands.add_parser(
        "search", help="search a KG's entities, properties or classes by name (labels and aliases)",
        description="Search as the run's KG does: the same --kg / --kg-url / --kg-options as `sparqlab run`. Hits "
                    "come in the backend's order (the search API's own order for wikidata); a hit the query matched "
                    "by an alias or a label in another language shows that name.")
    search.add_argument("text", help="the name to look for")
    add_kg_arguments(search)
    search.add_argument("--kind", choices=["entity", "property", "class"], default="entity",
                        help="what to search (default entity)")
    search.add_argument("--limit", type=int, default=10, help="hits shown (default 10)")
    search.set_defaults(handler=search_command)

    lookup = kg_commands.add_parser(
        "lookup", help="print the observation an agent's lookup of an entity gets (SPINACH's or SAGA's rendering)",
        description="The text the controller model reads after `get_wikidata_entry(ENTITY)`: the entity's types "
                    "and truthy properties with values and qualifiers, in the lookup's order and cap. --method saga "
                    "applies P_τ(e) with the schema index (built into the cache on first use) and shows domains and "
                    "ranges; SPINACH prunes the neighbourhood with its controller model, which this command does not "
                    "call, so its view is shown unpruned.")
    lookup.add_argument("entity", help="entity id: Q42, wd:Q42, an IRI, or the KG's own short form")
    add_kg_arguments(lookup)
    lookup.add_argument("--method", choices=["spinach", "saga"], default="saga", help="whose rendering (default saga)")
    lookup.add_argument("-o", "--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a method option, e.g. -o lookup_max_properties=20 or -o features.type_filter=false")
    lookup.set_defaults(handler=lookup_command)

    fixture = kg_commands.add_parser(
        "serve-fixture", help="serve a KG's bundled test fixture over SPARQL on 127.0.0.1 until interrupted",
        description="Run `oxigraph serve-read-only` over the fixture (data/freebase/fixture/freebase_fixture.ttl, "
                    "data/text2sparql/dbpedia_fixture/dbpedia_fixture.ttl) and print its query URL, for --kg freebase "
                    "(or dbpedia) --kg-url URL without a Freebase (DBpedia) server.")
    fixture.add_argument("name", choices=["freebase", "dbpedia"], help="the KG whose fixture to serve")
    fixture.set_defaults(handler=serve_fixture_command)

    serve = kg_commands.add_parser(
        "serve", help="serve a bundled or file KG over SPARQL on 127.0.0.1 with a real engine until interrupted",
        description="Start a local SPARQL server of the KG (a bundled name such as movies or ck25, an RDF file or a "
                    "store folder) and print the URL to give as --kg-url (with --kg naming the profile): oxigraph's "
                    "server, or Virtuoso (Debian's virtuoso-opensource) with the KG in a named graph, its URL "
                    "carrying default-graph-uri. For comparing scores across engines (docs/engines.md).")
    serve.add_argument("kg", help="KG name with a bundled store (movies, ck25), RDF file or store folder")
    serve.add_argument("--engine", choices=["oxigraph", "virtuoso"], default="oxigraph",
                       help="the server to start (default oxigraph)")
    serve.add_argument("--max-rows", type=int, default=10_000,
                       help="Virtuoso's ResultSetMaxRows, its cap on every result (default 10000)")
    serve.add_argument("--timeout", type=int, default=None, help="the server's own per-query limit in s")
    serve.set_defaults(handler=serve_kg_command)

    prefixes = kg_commands.add_parser("prefixes", help="the prefixes a KG predefines (usable without PREFIX)")
    prefixes.add_argument("name", nargs="?", default=None,
                          help="KG name, RDF file, store folder or endpoint URL (default: every registered KG); a "
                               "file's prefixes are the ones it declares")
    prefixes.set_defaults(handler=prefixes_command)

    query = subparsers.add_parser("query", help="run a read-only SPARQL query on a KG",
                                  description="Run a read-only SPARQL query. The KG's predefined prefixes "
                                              "(`sparqlab kg prefixes KG`) need no PREFIX declaration; IRIs in "
                                              "the table are shortened by them and shown with their labels.")
    query.add_argument("sparql", help="the query, '-' to read it from stdin, or @FILE")
    query.add_argument("--kg", required=True,
                       help="KG name (movies, wikidata), endpoint URL, RDF file (its own prefixes predefined) or store "
                            "folder")
    add_profile_option(query)
    query.add_argument("--format", choices=["table", "json"], default="table",
                       help="table (default) or SPARQL JSON results")
    query.add_argument("--timeout", type=float, default=30.0, help="seconds (default 30)")
    query.add_argument("--limit", type=int, default=1000, help="row cap (default 1000)")
    query.add_argument("--no-cache", action="store_true", help="bypass the query cache")
    query.add_argument("--no-labels", action="store_true", help="do not look up labels of the IRIs in the table")
    query.set_defaults(handler=query_command)


def build_command(args: argparse.Namespace) -> int:
    """Build (or find) the store, check it against its integrity record (a damaged store is rebuilt), and print
    the counts its builder recorded in ``build.json``: "ready" only once the check has passed."""
    from sparqlab.core.integrity import DamagedOutput
    from sparqlab.kg.profiles import get_profile

    profile = get_profile(args.name)
    if profile.store_builder is None:
        raise ValueError(f"KG {args.name!r} has no bundled builder (it is queried at {profile.endpoint})")
    start = time.perf_counter()
    try:
        store = profile.store_builder(force=args.force)
    except DamagedOutput as damaged:
        print(f"{args.name}: the store {damaged.path} is damaged ({damaged.problem}); rebuilding it",
              file=sys.stderr, flush=True)
        store = profile.store_builder(force=True)
    elapsed = time.perf_counter() - start
    stats = json.loads((store.parent / "build.json").read_text(encoding="utf-8"))
    checked = stats["integrity"]
    print(f"{args.name}: store {store}")
    print(f"  ready in {elapsed:.1f} s (bulk build took {stats['build_seconds']:.1f} s; its {len(checked)} files, "
          f"{sum(f['size'] for f in checked.values()) / 2**20:.1f} MiB, match their build record)")
    if "kb_facts" not in stats:  # a KG loaded from RDF files: its counts as the builder recorded them
        print(f"  triples {stats['triples']:,} from {', '.join(stats.get('files', []))}")
        for key, value in stats.items():
            if key not in ("triples", "files", "build_seconds", "pyoxigraph", "integrity"):
                shown = ", ".join(f"{k} {v:,}" for k, v in value.items()) if isinstance(value, dict) else value
                print(f"  {key.replace('_', ' ')}: {shown}")
        return 0
    print(f"  triples {stats['triples']:,} from {stats['kb_facts']:,} MetaQA facts")
    per_class = ", ".join(f"{cls} {n:,}" for cls, n in stats["entities_per_class"].items())
    print(f"  entities {stats['entities']:,}: {per_class}")
    print(f"  labels shared by entities of several classes: {stats['labels_with_several_classes']:,}")
    per_relation = ", ".join(f"{rel} {n:,}" for rel, n in stats["facts_per_relation"].items())
    print(f"  facts per relation: {per_relation}")
    return 0


def serve_fixture_command(args: argparse.Namespace) -> int:
    """Serve the fixture until Ctrl-C, SIGTERM or SIGHUP (each stops the oxigraph child); the URL goes to stdout as
    the first line."""
    from sparqlab.engines.oxigraph_server import serve_store
    from sparqlab.graphs import dbpedia, freebase

    store = {"freebase": freebase.fixture_store, "dbpedia": dbpedia.fixture_store}[args.name]()
    with serve_store(store) as url:
        return _announce_and_wait(url, f"the {args.name} fixture")


def serve_kg_command(args: argparse.Namespace) -> int:
    """Serve the KG's store until Ctrl-C, SIGTERM or SIGHUP (each stops the server); the URL goes to stdout as the
    first line."""
    from sparqlab.engines import PRODUCTS, serve_on
    from sparqlab.kg import local_store

    store, _, _ = local_store(args.kg)
    with serve_on(PRODUCTS[args.engine], store, timeout_s=args.timeout, max_rows=args.max_rows) as url:
        return _announce_and_wait(url, f"{args.kg} with {args.engine}")


def _announce_and_wait(url: str, what: str) -> int:
    """Print the served URL as stdout's first line (scripts read it), then wait until Ctrl-C, SIGTERM or SIGHUP;
    the caller's context manager stops the server."""
    print(url, flush=True)
    print(f"serving {what}; stop with Ctrl-C", file=sys.stderr, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    return 0


def add_profile_option(parser: argparse.ArgumentParser) -> None:
    """``--profile``, beside every ``--kg`` that takes an endpoint URL."""
    parser.add_argument("--profile", default=None,
                        help="KG profile of an endpoint URL, e.g. --profile wikidata for a QLever mirror of Wikidata "
                             "or --profile ck25 for CK25 on Virtuoso (its prefixes are then predefined and sent with "
                             "each query); without it a URL gets a profile derived from its data")


def add_kg_arguments(parser: argparse.ArgumentParser) -> None:
    """The run's KG flags (``--kg``, ``--kg-url``, ``--kg-options``), generated from
    :class:`~sparqlab.runs.config.KGSettings` as `sparqlab run` has them (:func:`open_kg_from_arguments`)."""
    from sparqlab.cli.run_options import add_run_options
    from sparqlab.runs.config import RunConfig

    add_run_options(parser, skip=tuple(group for group in RunConfig.groups() if group != "graph") + ("experiment",))


def open_kg_from_arguments(args: argparse.Namespace):
    """The KG of :func:`add_kg_arguments`, opened as a run opens it."""
    from sparqlab.cli.run_options import run_config
    from sparqlab.runs.plan import open_run_kg

    config = run_config(args)
    if not config.kg:
        raise ValueError("give the KG with --kg NAME (movies, wikidata), an endpoint URL or an RDF file; with "
                         "--kg-url, --kg names its profile")
    return open_run_kg(config, config.kg)


def search_command(args: argparse.Namespace) -> int:
    with open_kg_from_arguments(args) as kg:
        hits = kg.search(args.text, kind=args.kind, limit=args.limit)
    for hit in hits:
        types = ", ".join(kg.profile.shorten(t) if "://" in t else t for t in hit.types) or "-"
        matched = f"  (matched: {hit.matched})" if hit.matched else ""
        print(f"{hit.score:6.1f}  {hit.label}  [{types}]  {kg.profile.shorten(hit.id)}{matched}")
        if hit.description:
            print(f"        {hit.description}")
    return 0


def lookup_command(args: argparse.Namespace) -> int:
    """Print the lookup observation of ``--method`` (no model is called; see the command's description)."""
    import asyncio

    from sparqlab.cli.run_options import method_from_options

    method = method_from_options(args.method, args.option)
    with open_kg_from_arguments(args) as kg:
        observation = asyncio.run(method.observe(kg, "lookup", args.entity))
    print(observation.text)
    if args.method == "spinach":
        print("(SPINACH prunes this neighbourhood with its controller model in a run; shown unpruned here)",
              file=sys.stderr)
    return 0


def prefixes_command(args: argparse.Namespace) -> int:
    from sparqlab.kg import open_kg
    from sparqlab.kg.profiles import PROFILES

    if args.name is None:
        profiles = PROFILES.values()
    elif PROFILES.known(args.name):
        profiles = [PROFILES.get(args.name)]
    else:
        with open_kg(args.name, cache=False) as kg:
            profiles = [kg.profile]
    for profile in profiles:
        print(f"{profile.name}:")
        width = max(map(len, profile.prefixes), default=0)
        for prefix, iri in sorted(profile.prefixes.items()):
            print(f"  PREFIX {(prefix + ':').ljust(width + 1)} <{iri}>")
    return 0


def _read_query(text: str) -> str:
    """The query given on the command line: itself, ``-`` for stdin, or ``@FILE``."""
    if text == "-":
        return sys.stdin.read()
    if text.startswith("@"):
        return Path(text[1:]).read_text(encoding="utf-8")
    return text


def query_command(args: argparse.Namespace) -> int:
    from sparqlab.kg import open_kg

    sparql = _read_query(args.sparql)
    with open_kg(args.kg, profile=args.profile, cache=not args.no_cache, timeout_s=args.timeout,
                 max_rows=args.limit) as kg:
        result = kg.query(sparql)
        labels = {} if args.no_labels or args.format == "json" else _labels(kg, result)
    if args.format == "json":
        data = result.to_json()
        standard = {k: data[k] for k in ("head", "results", "boolean") if k in data}
        print(json.dumps(standard, ensure_ascii=False, indent=2))
    else:
        print(format_table(result, kg.profile.shorten, labels))
    note = f"{len(result)} row(s)" if result.kind != "ask" else "ask"
    if result.truncated:
        note += f", truncated at --limit {args.limit}"
    note += f", {result.elapsed_s:.3f} s" + (", from cache" if result.cached else "")
    print(note, file=sys.stderr)
    return 0


def _labels(kg, result) -> dict[str, str]:
    """Labels of the IRIs in a result (one batched query); none when the lookup fails, the table still prints."""
    from sparqlab.eval.normalise import fetch_labels
    from sparqlab.kg.errors import KGError

    iris = {term.value for row in result.rows for term in row.values() if term is not None and term.type == "uri"}
    try:
        return fetch_labels(kg, iris) if iris else {}
    except KGError:
        return {}


def format_table(result, shorten, labels: dict[str, str] | None = None) -> str:
    """A plain-text table of a result: IRIs shortened with the profile's prefixes and followed by their label in
    parentheses when ``labels`` has one, long cells cut."""
    if result.kind == "ask":
        return "true" if result.boolean else "false"

    def cell(term) -> str:
        if term is None:
            return ""
        text = shorten(term.value) if term.type == "uri" else term.value
        if term.type == "uri" and (labels or {}).get(term.value):
            text += f" ({labels[term.value]})"
        if term.lang:
            text += f"@{term.lang}"
        return text if len(text) <= _MAX_CELL else text[: _MAX_CELL - 1] + "…"

    header = list(result.vars)
    return text_table(header, [[cell(row.get(var)) for var in header] for row in result.rows])
