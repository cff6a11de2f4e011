"""`sparqlab serve METHOD`: any method as a TEXT2SPARQL challenge endpoint (GET / and /text2sparql)."""

from __future__ import annotations

import argparse
import dataclasses

SETTING_HELP = {
    "host": "address to bind (default %(default)s: this machine only; another address without a token warns)",
    "port": "port (default %(default)s; 0 picks a free one)",
    "token": "bearer token every request must send (Authorization: Bearer TOKEN), else 401 (default: the "
             "SPARQLAB_SERVE_TOKEN variable, which keeps it out of the process list; neither: no token)",
    "queue_size": "requests that may wait for a free slot (default %(default)s); more are answered 503 with Retry-After",
    "retry_after_s": "longest wait a 503 suggests in Retry-After (default %(default)s); a busy endpoint suggests "
                     "the expected wait for a slot, from recent answers",
    "max_question_chars": "longest question accepted (default %(default)s; longer: 422)",
    "max_request_bytes": "largest request line plus headers, or declared body (default %(default)s; larger: 413)",
    "read_timeout_s": "seconds a connection has to send its whole request, from opening or its last answer "
                      "(default %(default)s); then it is closed",
    "keep_alive_s": "seconds an idle connection stays open after an answer (default %(default)s)",
    "max_connections": "open connections at most (default %(default)s, fewer under a tight open-file limit); beyond, "
                       "the connection idle longest is closed",
    "docs": "serve /docs and /openapi.json (default: off)",
}
"""The help of each :class:`sparqlab.runs.serve.ServeSettings` field's flag (``--queue-size`` for
``queue_size``; ``--read-timeout`` for ``read_timeout_s``)."""


def _flag(name: str) -> str:
    return "--" + name.removesuffix("_s").replace("_", "-")


def add_serve_settings(parser: argparse.ArgumentParser) -> None:
    """One flag per :class:`~sparqlab.runs.serve.ServeSettings` field, defaulting to the field's default."""
    from sparqlab.runs.serve import ServeSettings

    for setting in dataclasses.fields(ServeSettings):
        if setting.type in ("bool", bool):
            parser.add_argument(_flag(setting.name), dest=setting.name, action="store_true",
                                help=SETTING_HELP[setting.name])
            continue
        kind = {"int": int, "float": float}.get(str(setting.type), str)
        parser.add_argument(_flag(setting.name), dest=setting.name, type=kind, default=setting.default,
                            metavar="SECONDS" if setting.name.endswith("_s") else setting.name.upper(),
                            help=SETTING_HELP[setting.name])


def serve_settings(args: argparse.Namespace):
    """The :class:`~sparqlab.runs.serve.ServeSettings` the flags give."""
    from sparqlab.runs.serve import ServeSettings

    return ServeSettings(**{s.name: getattr(args, s.name) for s in dataclasses.fields(ServeSettings)})


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
    parser.add_argument("--concurrency", "-c", type=int, default=4,
                        help="requests answered at once (default 4); up to --queue-size more wait")
    parser.add_argument("--question-timeout", type=float, default=300.0,
                        help="seconds a request may take from its arrival, the wait for a free slot included "
                             "(default 300); then it is answered with an empty query")
    parser.add_argument("--cache", choices=["read_write", "replay", "off"], default="read_write",
                        help="model response cache mode (default read_write)")
    add_serve_settings(parser)
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
    serve(ServedRun(method, config, datasets, serve_settings(args)))
    return 0
