"""`sparqlab serve METHOD`: any method as a TEXT2SPARQL challenge endpoint (GET / and /text2sparql)."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve", help="serve a method as a TEXT2SPARQL challenge endpoint (every request a run-folder line)",
        description="Answer GET /?question=...&dataset=... (also /text2sparql) with {dataset, question, query}, "
                    "as the TEXT2SPARQL challenge's API says. Each request goes through the runner (model cache, "
                    "traces, timeout) and is appended to runs/<experiment>/<run>-serve-<session>/. The official "
                    "client asks it with `text2sparql ask questions.yml http://127.0.0.1:PORT/`.",
    )
    parser.add_argument("method", help="method name (`sparqlab methods list`)")
    parser.add_argument("--kg", required=True, help="the KG the method answers over (e.g. ck25)")
    parser.add_argument("--kg-url", default=None, help="SPARQL endpoint URL to use for that KG")
    parser.add_argument("--dataset-iri", action="append", default=[], metavar="IRI",
                        help="a dataset IRI the endpoint accepts for --kg (repeatable; ck25 accepts the "
                             "challenge's https://text2sparql.aksw.org/2025/corporate/ by default)")
    parser.add_argument("--model", "-m", default=None, help="model name: a standin-* or the served name")
    parser.add_argument("--model-url", default=None, help="OpenAI-compatible endpoint, e.g. http://gpu:8000/v1")
    parser.add_argument("--model-role", action="append", default=[], metavar="ROLE=NAME[@URL]",
                        help="the model of one method role (repeatable)")
    parser.add_argument("--option", "-o", action="append", default=[], metavar="NAME=VALUE",
                        help="a method config field (`sparqlab methods list`)")
    parser.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (default 0)")
    parser.add_argument("--experiment", "-e", default="serve", help="run folders go to runs/<experiment>/")
    parser.add_argument("--concurrency", "-c", type=int, default=4, help="requests answered at once (default 4)")
    parser.add_argument("--question-timeout", type=float, default=300.0, help="per-request limit in s (default 300)")
    parser.add_argument("--cache", choices=["read_write", "replay", "off"], default="read_write",
                        help="model response cache mode (default read_write)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)")
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    from sparqlab.cli.run import _check_model_flags, parse_model_roles, parse_pairs
    from sparqlab.methods import get_method
    from sparqlab.runs import RunConfig
    from sparqlab.runs.serve import DEFAULT_DATASETS, ServedRun, serve

    method_class = get_method(args.method)
    method = method_class(method_class.config_class.from_options(parse_pairs(args.option, "method options")))
    _check_model_flags(args, method_class)
    config = RunConfig(experiment=args.experiment, kg=args.kg, kg_url=args.kg_url, model=args.model,
                       model_url=args.model_url, model_roles=parse_model_roles(args.model_role),
                       model_params={"temperature": args.temperature}, concurrency=args.concurrency,
                       question_timeout_s=args.question_timeout, cache=args.cache, progress=False)
    datasets = {iri: kg for iri, kg in DEFAULT_DATASETS.items() if kg == args.kg}
    datasets.update(dict.fromkeys(args.dataset_iri, args.kg))
    if not datasets:
        raise ValueError(f"no dataset IRI maps to the KG {args.kg!r}: give one with --dataset-iri IRI")
    serve(ServedRun(method, config, datasets), host=args.host, port=args.port)
    return 0
