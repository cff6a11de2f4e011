"""`sparqlab genop run`: evaluate a generative SPARQL query (GENOP patterns) on a KG with a model or a script;
`sparqlab genop examples`: write the paper's worked examples to try it on."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sparqlab.cli.kg import add_profile_option

SCRIPTED = "scripted:"


def register(subparsers) -> None:
    """Add ``genop`` with ``run`` and ``examples``."""
    genop = subparsers.add_parser("genop", help="generative SPARQL: queries with GENOP model calls")
    commands = genop.add_subparsers(dest="genop_command", metavar="GENOP_COMMAND", required=True)
    run = commands.add_parser(
        "run", help="evaluate a generative query and print its typed result",
        description="Evaluate a SELECT query with GENOP(\"template ?x\" AS ?y, \"model\") patterns (grammar: "
                    "docs/genop.md). Prints the typed result table (each value marked rdf or gen, IRIs by their "
                    "labels), the query's class (acyclic / stratified / non-stratified) and the number of model "
                    "calls; --format json gives exact values.")
    run.add_argument("query_file", type=Path, help="file holding the query ('-' reads stdin)")
    run.add_argument("--kg", required=True, help="KG name (movies), SPARQL endpoint URL or RDF file")
    add_profile_option(run)
    run.add_argument("--model", required=True,
                     help="the oracle model: a model name (served at --model-url or SPARQLAB_MODEL_URL, or a "
                          "standin-* name), an endpoint URL (the model is then SPARQLAB_MODEL or the first GENOP's "
                          "model specifier), or scripted:FILE.json (the scripted model)")
    run.add_argument("--model-url", default=None, help="OpenAI-compatible endpoint of --model NAME")
    run.add_argument("--format", choices=["table", "json"], default="table",
                     help='table (default) or one JSON object {"class", "model_calls", "rows"}')
    run.add_argument("--semantics", default="auto",
                     help="auto (by query class), single-pass, lfp, stratified or well-founded")
    run.add_argument("-K", type=int, default=5, help="proposal bound K: tuples per model call (default 5)")
    run.add_argument("-B", type=int, default=10, help="domain cap B per generated variable of a cycle (default 10)")
    run.add_argument("-T", type=int, default=1, help="repairs T per failing candidate (default 1)")
    run.add_argument("-R", type=int, default=1, help="validation repetitions R (default 1)")
    run.add_argument("--aggregation", choices=["all", "majority", "any"], default="majority",
                     help="how R validation votes are combined (default majority)")
    run.add_argument("--similarity", default="normalised",
                     help="string similarity for generated values: exact, normalised (default), jaccard, ratio")
    run.add_argument("--no-memo", action="store_true", help="switch off proposal/validation memoisation")
    run.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (default 0)")
    run.add_argument("--max-tokens", type=int, default=512, help="completion budget per call (default 512)")
    run.add_argument("--timeout", type=float, default=30.0, help="seconds per KG query (default 30)")
    run.set_defaults(handler=run_command)
    examples = commands.add_parser(
        "examples", help="write the paper's graph, worked examples and scripts into a folder",
        description="Write paper.ttl (the paper's example graph), each worked example's query (NAME.rq) and "
                    "script for the scripted model (NAME.json), the movie demo, and Example 1 as a question file "
                    "(questions.jsonl) for `sparqlab run genop`.")
    examples.add_argument("folder", type=Path, help="where to write them (created if missing)")
    examples.set_defaults(handler=examples_command)


def examples_command(args) -> int:
    from sparqlab.methods.genop.examples import write_example_files

    for name, path in write_example_files(args.folder).items():
        print(f"{name:12} {path}")
    return 0


def _model(spec: str, url: str | None, query):
    from sparqlab.core.environment import model_defaults
    from sparqlab.llm.factory import make_model, served_over_http
    from sparqlab.methods.genop import ScriptedModel

    if spec.startswith(SCRIPTED):
        return ScriptedModel(Path(spec[len(SCRIPTED):]))
    if spec.startswith(("http://", "https://")):
        name = (model_defaults(None, spec, served_over_http=served_over_http).name
                or next((g.model for g in query.genops if g.model), ""))
        if not name:
            raise ValueError("--model URL needs a model name: set SPARQLAB_MODEL or give the GENOP a model specifier")
        return make_model({"model": name, "base_url": spec})
    # no URL: llm.openai_backend.model_endpoint reads SPARQLAB_MODEL_URL or refuses (a stand-in runs in process)
    return make_model({"model": spec, **({"base_url": url} if url else {})})


def run_command(args: argparse.Namespace) -> int:
    """Parse, evaluate, print."""
    from sparqlab.core.event_loops import run_sync
    from sparqlab.kg import open_kg
    from sparqlab.methods.genop import EvalSettings, Oracle, parse_genop_query
    from sparqlab.methods.genop.report import typed_rows
    from sparqlab.methods.genop.semantics import evaluate, kg_query_fn

    text = sys.stdin.read() if str(args.query_file) == "-" else args.query_file.read_text(encoding="utf-8")
    settings = EvalSettings(semantics=args.semantics, k=args.K, b=args.B, t=args.T, r=args.R,
                            similarity=args.similarity)
    with open_kg(args.kg, timeout_s=args.timeout, profile=args.profile) as kg:
        query = parse_genop_query(text, kg.profile.prefixes)
        model = _model(args.model, args.model_url, query)
        oracle = Oracle.for_model(model, params={"temperature": args.temperature, "max_tokens": args.max_tokens},
                                  aggregation=args.aggregation, memoise=not args.no_memo)
        result = run_sync(evaluate(query, kg_query_fn(kg), oracle, settings, kg.profile.label_predicate,
                                   progress=args.format == "table"))
        if args.format == "json":
            print(json.dumps(result.to_json(), ensure_ascii=False))
            return 0
        frame = typed_rows(result, kg)  # IRIs by their labels; --format json gives the exact values
    deps = result.dependencies.describe()
    print(f"class: {deps['class']} (semantics: {result.semantics}; strata: {deps['strata']})")
    for edge in deps["edges"]:
        print(f"  {edge['from']} -{edge['sign']}-> {edge['to']} via {', '.join('?' + v for v in edge['vars'])}")
    print(frame.to_string(index=False) if len(frame) else "(no rows)")
    if result.undefined:
        print(f"undefined (well-founded): {len(result.undefined)} rows")
    stats = result.oracle_stats
    print(f"model calls: {result.model_calls} ({stats['calls']}; memo hits {stats['memo_hits']}; "
          f"model: {getattr(model, 'name', model)}{' [standin]' if getattr(model, 'is_standin', False) else ''})")
    return 0
