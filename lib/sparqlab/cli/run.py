"""`sparqlab run`: run a method over a dataset from the command line (scripts, Slurm array jobs, shards)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from sparqlab.llm.errors import ModelUnavailable, ReplayMiss, UnknownModel


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run", help="run a method over a dataset; a rerun of the same settings resumes",
        description="Run METHOD over a dataset and write runs/<experiment>/<run_id>/. The same settings resume "
                    "the same folder. For a Slurm array job give each task --shard-index $SLURM_ARRAY_TASK_ID "
                    "--num-shards N, then `sparqlab runs merge`.",
    )
    parser.add_argument("method", help="method name (`sparqlab methods list`)")
    parser.add_argument("--dataset", "-d", required=True, help="dataset name (`sparqlab data list`) or JSONL path")
    parser.add_argument("--split", default=None, help="split (default: the dataset's test split)")
    parser.add_argument("--language", default=None,
                        help="one language of a multilingual dataset (ck26: en, de; db25/db26: en, es); "
                             "default: all its languages")
    parser.add_argument("--limit", type=int, default=None, help="first N questions only (after --sample)")
    parser.add_argument("--sample", type=int, default=None, metavar="N",
                        help="N questions drawn reproducibly, stratified by question type (recorded in the run id)")
    parser.add_argument("--sample-seed", type=int, default=0, metavar="S", help="seed of --sample (default 0)")
    parser.add_argument("--select", choices=["answerable"], default=None,
                        help="a rule-defined subset before --limit/--sample: answerable = the gold query returns "
                             "an answer on the KG (--kg-url), as the SAGA paper's evaluation sets (recorded in the "
                             "run id)")
    parser.add_argument("--answer-match", choices=["iri", "label", "either"], default=None,
                        help="how predicted answers are compared with gold: by IRI, by label, or either "
                             "(default: the KG's rule; recorded in metrics.json)")
    parser.add_argument("--generate-only", action="store_true",
                        help="write the final queries without executing or scoring them; score the folder later "
                             "against any KG with `sparqlab runs score RUN --kg KG`")
    parser.add_argument("--kg", default=None, help="KG name (default: the one the questions name)")
    parser.add_argument("--kg-url", default=None, help="SPARQL endpoint URL to use for that KG")
    parser.add_argument("--kg-search", choices=["local", "api"], default=None,
                        help="entity search: api (wbsearchentities, the wikidata default) or local (a label index "
                             "built from the endpoint itself, for a small mirror)")
    parser.add_argument("--model", "-m", default=None,
                        help="model name: a registered standin-* or the name the server serves "
                             "(default: SPARQLAB_MODEL)")
    parser.add_argument("--model-url", default=None,
                        help="OpenAI-compatible endpoint, e.g. http://gpu:8000/v1 (default: SPARQLAB_MODEL_URL)")
    parser.add_argument("--temperature", type=float, default=None,
                        help="sampling temperature of every call; when given it wins over the method's per-kind "
                             "defaults (default: the method's, else 0)")
    parser.add_argument("--max-tokens", type=int, default=None,
                        help="completion token limit of every call; when given it wins over the method's per-kind "
                             "budgets ({kind}_max_tokens options)")
    parser.add_argument("--model-opt", action="append", default=[], metavar="NAME=VALUE",
                        help="an option of the model factory (repeatable; values read as JSON when they parse), e.g. "
                             "-m noisy:standin-agent --model-opt rate=0.3 --model-opt seed=1")
    parser.add_argument("--reasoning-effort", default=None,
                        help="a reasoning model's effort (low / medium / high) for every call; wins over the "
                             "method's {kind}_reasoning_effort options")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    parser.add_argument("--experiment", "-e", default="default", help="results go to runs/<experiment>/")
    parser.add_argument("--concurrency", "-c", type=int, default=8, help="questions in flight (default 8)")
    parser.add_argument("--question-timeout", "--timeout", dest="question_timeout", type=float, default=300.0,
                        help="per-question time limit in s for the method's work and, separately, for executing its "
                             "final query (default 300)")
    parser.add_argument("--shard-index", type=int, default=0, help="this shard (0-based)")
    parser.add_argument("--num-shards", type=int, default=1, help="number of shards")
    parser.add_argument("--cache", choices=["read_write", "replay", "off"], default="read_write",
                        help="model response cache mode (default read_write; replay: cached responses only)")
    parser.add_argument("--option", "-o", action="append", default=[], metavar="NAME=VALUE",
                        help="a method config field, e.g. -o reparse_attempts=2 (checked against the method's config "
                             "dataclass: `sparqlab methods list` shows the fields; tuples as a,b,c)")
    parser.add_argument("--model-role", action="append", default=[], metavar="ROLE=NAME[@URL]",
                        help="the model of one method role, e.g. --model-role corrector=meta-llama/Llama-3.1-70B"
                             "@http://gpu2:8000/v1 (repeatable; roles not named use --model)")
    parser.set_defaults(handler=_run)


def parse_pairs(items: list[str], what: str) -> dict[str, str]:
    """``NAME=VALUE`` strings as a dict; a malformed or repeated name is an error."""
    pairs: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"{what} are NAME=VALUE, got {item!r}")
        if name.strip() in pairs:
            raise ValueError(f"{what}: {name.strip()!r} given twice")
        pairs[name.strip()] = value
    return pairs


def parse_model_roles(items: list[str]) -> dict[str, dict[str, str]]:
    """``ROLE=NAME[@URL]`` strings as ``RunConfig.model_roles`` (the URL split at the last ``@http``)."""
    roles = {}
    for role, spec in parse_pairs(items, "--model-role values").items():
        name, sep, url = spec.rpartition("@http")
        roles[role] = {"model": name, "url": "http" + url} if sep else {"model": spec}
        if not roles[role]["model"]:
            raise ValueError(f"--model-role {role}= needs a model name")
    return roles


CLI_HINTS = (
    (ModelUnavailable, "check that the server runs and give its /v1 URL with --model-url http://HOST:PORT/v1 "
                       "(or SPARQLAB_MODEL_URL); -m names the model it serves"),
    (UnknownModel, "pass one of the served names with -m NAME (the list above), or point --model-url at the server "
                   "that serves your model"),
    (ReplayMiss, "--cache replay only serves cached responses: run once with --cache read_write (the default) "
                 "against a live endpoint (-m NAME --model-url URL), then replay"),
)
"""What to do about a run stopped by a model error, in this command's flags (the library's messages speak of
``RunConfig`` fields and environment variables)."""


def _check_model_flags(args: argparse.Namespace, method_class) -> None:
    """Refuse, before any work, a missing model or a served model with no endpoint (the llm layer's own rule and
    message, :func:`sparqlab.llm.openai_backend.model_endpoint`)."""
    from sparqlab.llm.openai_backend import model_endpoint
    from sparqlab.llm.standins import STANDIN_PREFIX, standin_names

    if not method_class.needs_model or not method_class.roles:  # the runner's rule: a method without roles calls no model
        return
    model = args.model or os.environ.get("SPARQLAB_MODEL")
    if not model:
        raise ValueError(f"method {args.method!r} needs a model: pass -m NAME, a stand-in ({', '.join(standin_names())}) "
                         "or the name your server serves together with --model-url URL; or set SPARQLAB_MODEL")
    if not model.startswith(STANDIN_PREFIX):
        model_endpoint(model, args.model_url)


def parse_json_pairs(items: list[str], what: str) -> dict[str, Any]:
    """``NAME=VALUE`` pairs (:func:`parse_pairs`); a value that parses as JSON (numbers, booleans, lists) is taken
    as such, anything else as text."""
    values: dict[str, Any] = {}
    for name, text in parse_pairs(items, what).items():
        try:
            values[name] = json.loads(text)
        except ValueError:
            values[name] = text
    return values


def _run(args: argparse.Namespace) -> int:
    from sparqlab.methods import get_method
    from sparqlab.runs import RunAborted, RunConfig, model_label, run

    method_class = get_method(args.method)
    method = method_class(method_class.config_class.from_options(parse_pairs(args.option, "method options")))
    # Only what the user gave: an explicit setting wins over the method's per-kind defaults (issue 18 item 8).
    model_params = {name: value for name, value in (("temperature", args.temperature),
                                                     ("max_tokens", args.max_tokens),
                                                     ("reasoning_effort", args.reasoning_effort)) if value is not None}
    config = RunConfig(
        experiment=args.experiment, kg=args.kg, kg_url=args.kg_url,
        kg_options={"search": args.kg_search} if args.kg_search else {},
        model=args.model, model_url=args.model_url, model_roles=parse_model_roles(args.model_role),
        model_options=parse_json_pairs(args.model_opt, "--model-opt values"),
        model_params=model_params, dataset=args.dataset, split=args.split, language=args.language,
        limit=args.limit, seed=args.seed,
        sample=args.sample, sample_seed=args.sample_seed, select=args.select, generate_only=args.generate_only,
        answer_match=args.answer_match,
        concurrency=args.concurrency, question_timeout_s=args.question_timeout, shard_index=args.shard_index,
        num_shards=args.num_shards, cache=args.cache,
    )
    _check_model_flags(args, method_class)
    try:
        result = run(method, config=config)
    except RunAborted as error:  # say what to do in terms of this command's flags
        hint = next((text for kind, text in CLI_HINTS if isinstance(error.__cause__, kind)), None)
        if hint is None:
            raise
        raise RunAborted(f"{error}\nwhat to do: {hint}") from error.__cause__
    metrics = result.metrics
    scores = (f"F1 {_percent(metrics['f1'])}  EM {_percent(metrics['em'])}  empty {_percent(metrics['empty_rate'])}"
              f"  no query {_percent(metrics.get('no_query_rate'))}" if metrics.get("n_scored") != 0 else "unscored (no question has gold answers or a gold query)")
    print(f"{result.run_dir}\n{model_label(metrics.get('model'), metrics.get('model_is_standin'))}: {scores}  "
          f"({metrics['n_done']}/{metrics['n_questions']} done, {result.answered} answered now)")
    note = (metrics.get("model_cache_last_session") or {}).get("endpoint_note")
    if note:
        print(note, file=sys.stderr)
    return 0


def _percent(value: float | None) -> str:
    """Rates as the papers print them: percent with one decimal."""
    return "-" if value is None else f"{100 * value:.1f}%"
