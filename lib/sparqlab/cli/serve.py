"""`sparqlab serve METHOD`: any method as a TEXT2SPARQL challenge endpoint (GET / and /text2sparql)."""

from __future__ import annotations

import argparse

SERVE_DEFAULTS = {"experiment": "serve", "concurrency": 4, "temperature": 0.0}
"""Run settings ``serve`` defaults otherwise than the declaration: its own experiment folder, four requests
answered at once, deterministic sampling."""

SERVE_SKIPS = ("questions", "generate_only", "answer_match", "shard_index", "num_shards", "progress", "repeats")
"""Run settings a served method does not take: the questions come from the requests, nothing is scored, one
session answers them."""


def register(subparsers) -> None:
    from sparqlab.cli.config_options import add_config_arguments
    from sparqlab.cli.run_options import add_method_options, add_run_options
    from sparqlab.text2sparql.endpoint import ServeSettings

    parser = subparsers.add_parser(
        "serve", help="serve a method as a TEXT2SPARQL challenge endpoint (every request a run-folder line)",
        description="Answer GET /?question=...&dataset=... (also /text2sparql) with {dataset, question, query}, "
                    "as the TEXT2SPARQL challenge's API says. Each request goes through the runner (model cache, "
                    "traces, timeout) and is appended to runs/<experiment>/<run>-serve-<session>/. The official "
                    "client asks it with `text2sparql ask questions.yml http://127.0.0.1:PORT/`.",
    )
    parser.add_argument("method", help="method name (`sparqlab methods list`)")
    parser.add_argument("--dataset-iri", action="append", default=[], metavar="IRI",
                        help="a dataset IRI the endpoint accepts for --kg (repeatable; by default ck25 accepts the "
                             "challenge's corporate IRIs of 2025 and 2026, dbpedia its DBpedia IRIs)")
    add_method_options(parser)
    add_run_options(parser, skip=SERVE_SKIPS, defaults=SERVE_DEFAULTS)
    add_config_arguments(parser.add_argument_group("endpoint: how the endpoint takes requests"), ServeSettings)
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    from sparqlab.cli.config_options import config_from_arguments
    from sparqlab.cli.run_options import method_from_options, run_config
    from sparqlab.text2sparql.endpoint import DEFAULT_DATASETS, ServedRun, ServeSettings, serve

    method = method_from_options(args.method, args.option)
    config = run_config(args, progress=False)
    if not config.kg:
        raise ValueError("give the KG the method answers over with --kg NAME (e.g. ck25)")
    datasets = {iri: kg for iri, kg in DEFAULT_DATASETS.items() if kg == config.kg}
    datasets.update(dict.fromkeys(args.dataset_iri, config.kg))
    if not datasets:
        raise ValueError(f"no dataset IRI maps to the KG {config.kg!r}: give one with --dataset-iri IRI")
    serve(ServedRun(method, config, datasets, config_from_arguments(ServeSettings, args)))
    return 0
