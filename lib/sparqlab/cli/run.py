"""`sparqlab run`: run a method over a dataset from the command line (scripts, Slurm array jobs, shards)."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run", help="run a method over a dataset; a rerun of the same settings resumes",
        description="Run METHOD over a dataset and write runs/<experiment>/<run_id>/. The same settings resume "
                    "the same folder. For a Slurm array job give each task --shard-index $SLURM_ARRAY_TASK_ID "
                    "--num-shards N, then `sparqlab runs merge`.",
    )
    parser.add_argument("method", help="method name (`direct`; more arrive with the agents, GGC, DeSQ, GenOp)")
    parser.add_argument("--dataset", "-d", required=True, help="dataset name (`sparqlab data list`) or JSONL path")
    parser.add_argument("--split", default=None, help="split (default: the dataset's test split)")
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument("--kg", default=None, help="KG name (default: the one the questions name)")
    parser.add_argument("--kg-url", default=None, help="SPARQL endpoint URL to use for that KG")
    parser.add_argument("--model", "-m", default=None,
                        help="model name: a registered standin-* or the name the server serves "
                             "(default: SPARQLAB_MODEL)")
    parser.add_argument("--model-url", default=None,
                        help="OpenAI-compatible endpoint, e.g. http://gpu:8000/v1 (default: SPARQLAB_MODEL_URL)")
    parser.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (default 0)")
    parser.add_argument("--max-tokens", type=int, default=None, help="completion token limit per call")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    parser.add_argument("--experiment", "-e", default="default", help="results go to runs/<experiment>/")
    parser.add_argument("--concurrency", "-c", type=int, default=8, help="questions in flight (default 8)")
    parser.add_argument("--timeout", type=float, default=300.0, help="per-question time limit in s (default 300)")
    parser.add_argument("--shard-index", type=int, default=0, help="this shard (0-based)")
    parser.add_argument("--num-shards", type=int, default=1, help="number of shards")
    parser.add_argument("--cache", choices=["read_write", "replay", "off"], default="read_write",
                        help="model response cache mode (default read_write; replay: cached responses only)")
    parser.add_argument("--option", "-o", action="append", default=[], metavar="NAME=VALUE",
                        help="a method option, e.g. -o reparse_attempts=2 (values are Python literals)")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from sparqlab.methods import make_method
    from sparqlab.notebooks import parse_parameter
    from sparqlab.runs import RunConfig, model_label, run

    options = {}
    for item in args.option:
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"method options are NAME=VALUE, got {item!r}")
        options[name] = parse_parameter(value)
    model_params = {"temperature": args.temperature}
    if args.max_tokens is not None:
        model_params["max_tokens"] = args.max_tokens
    config = RunConfig(
        experiment=args.experiment, kg=args.kg, kg_url=args.kg_url,
        model=args.model, model_url=args.model_url,
        model_params=model_params, dataset=args.dataset, split=args.split, limit=args.limit, seed=args.seed,
        concurrency=args.concurrency, timeout_s=args.timeout, shard_index=args.shard_index,
        num_shards=args.num_shards, cache=args.cache,
    )
    result = run(make_method(args.method, **options), config=config)
    metrics = result.metrics
    print(f"{result.run_dir}\n{model_label(metrics.get('model'), metrics.get('model_is_standin'))}: "
          f"F1 {metrics['f1']:.4f}  EM {metrics['em']:.4f}  empty {metrics['empty_rate']:.4f}  "
          f"({metrics['n_done']}/{metrics['n_questions']} done, {result.answered} answered now)")
    return 0
