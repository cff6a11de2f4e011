"""Format robustness: each method's F1 when its model's replies come wrapped in realistic shapes.

Every method runs on a fixed sample with its offline stand-in wrapped by :class:`NoisyModel` at noise rates 0, 0.1,
0.3 and 0.6. For each reply, with probability ``rate`` (decided by a hash of ``seed`` and the request, so the same
request always gets the same shape, in any order and at any concurrency), one of the shapes real models produce is
applied, without changing the content:

- ``reasoning_field``: a reasoning text returned apart (vLLM's reasoning parser), the content unchanged;
- ``think_inline``: the reasoning inline as ``<think>…</think>`` before the content (a server without parser);
- ``fence``: the content in a Markdown fence (``json`` / ``sparql`` tag by content, none otherwise);
- ``prose``: a sentence before and after (``Answer: YES`` for a verdict, the form models use);
- ``markdown``: bold ``**Thought:**`` / ``**Action:**``, a trailing comma in JSON, a period after a query,
  bold list items and verdicts.

The content of every reply is the same at every rate — only its wrapping changes — so a method whose parsers read
real models' replies keeps its rate-0 F1 (target: >= 95 % of it at rate 0.3). SPINACH / SAGA (standin-agent,
MetaQA 1-hop), GGC correct-all (standin-knn + standin-corrector, MCQA movies), DeSQ (standin-desq, MCQA movies),
the direct baseline (standin-keyword-rules, MCQA movies) run through the runner, each stand-in wrapped under a
stand-in name of its own (:func:`noisy_standin`), so a result is never mistaken for the base model's; GenOp runs
its worked examples with the scripted oracle, scored as the F1 of each example's rows against its rows at rate 0.

Usage: python benchmarks/format_robustness.py [--limit 20] [--rates 0,0.1,0.3,0.6] [--seed 0] [--json OUT]
       [--no-figure]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import statistics
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sparqlab.core.hashing import stable_hash
from sparqlab.llm import register_standin
from sparqlab.llm.base import ChatModel, ChatRequest, ChatResponse
from sparqlab.llm.standins import STANDIN_PREFIX, create_standin

_REASONING = ("Let me think about what the question needs. I should check which entity and relation are meant, "
              "and answer in the requested format.")
_QUERY = re.compile(r"^\s*(PREFIX|BASE|SELECT|ASK|CONSTRUCT|DESCRIBE)\b", re.IGNORECASE)
_ACTION_LINE = re.compile(r"^(Thought|Action):", re.MULTILINE)
_LIST_ITEM = re.compile(r"^(\d+[.)]|[-*•])\s+(.*)$", re.MULTILINE)


def content_type(text: str) -> str:
    """What a reply carries, judged from its text: ``json``, ``action``, ``sparql``, ``verdict``, ``list`` or
    ``text``."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            json.loads(stripped)
            return "json"
        except ValueError:
            pass
    if _ACTION_LINE.search(text):
        return "action"
    if _QUERY.match(stripped):
        return "sparql"
    if re.fullmatch(r"(?i)(yes|no)\W*", stripped):
        return "verdict"
    if _LIST_ITEM.search(text):
        return "list"
    return "text"


def _fence(text: str, kind: str) -> str:
    tag = {"json": "json", "sparql": "sparql"}.get(kind, "")
    return f"```{tag}\n{text.strip()}\n```"


def _prose(text: str, kind: str) -> str:
    if kind == "verdict":
        return f"Answer: {text.strip()}\n\nThat is my judgement of the candidate."
    if kind == "text":
        return text
    opening = {"json": "Here is the JSON object:", "sparql": "Here is the query:", "action": "Let me work on this.",
               "list": "Here are the atomic constraints:"}[kind]
    return f"{opening}\n\n{text.strip()}\n\nThis should help with the question."


def _markdown(text: str, kind: str) -> str:
    if kind == "action":
        return re.sub(r"^(Thought|Action):", r"**\1:**", text, flags=re.MULTILINE)
    if kind == "json" and not re.fullmatch(r"\{\s*\}", text.strip()):
        return re.sub(r"\s*\}\s*$", ",}", text)
    if kind == "sparql":
        return text.rstrip() + "."
    if kind == "verdict":
        return f"**{text.strip()}**"
    if kind == "list":
        return _LIST_ITEM.sub(lambda m: f"{m.group(1)} **{m.group(2).strip()}**", text)
    return text


Shape = Callable[[str, str], tuple[str, str | None]]
"""``(content, kind) -> (new content, separate reasoning or None)``."""

SHAPES: dict[str, Shape] = {
    "reasoning_field": lambda text, kind: (text, _REASONING),
    "think_inline": lambda text, kind: (f"<think>\n{_REASONING}\n</think>\n\n{text}", None),
    "fence": lambda text, kind: (_fence(text, kind) if kind != "text" else text, None),
    "prose": lambda text, kind: (_prose(text, kind), None),
    "markdown": lambda text, kind: (_markdown(text, kind), None),
}
"""The content-preserving wrappings, by name."""


def apply_shape(shape: str, text: str) -> tuple[str, str | None]:
    """``text`` wrapped in ``shape``: ``(content, reasoning)``. An empty reply stays empty."""
    if shape not in SHAPES:
        raise ValueError(f"unknown reply shape {shape!r}; choose from {', '.join(SHAPES)}")
    if not text.strip():
        return text, None
    return SHAPES[shape](text, content_type(text))


class NoisyModel(ChatModel):
    """The base model's replies in realistic wrappings (module docstring), named ``name`` (default
    ``noisy:BASE``); ``is_standin`` follows the base. The wrapping is deterministic: a response cache in front of
    it holds what the base would answer, wrapped."""

    def __init__(self, base: ChatModel, rate: float = 0.3, seed: int = 0,
                 shapes: Sequence[str] | str = tuple(SHAPES), name: str | None = None):
        if isinstance(shapes, str):
            shapes = [s.strip() for s in re.split(r"[,|+]", shapes) if s.strip()]
        unknown = [s for s in shapes if s not in SHAPES]
        if unknown or not shapes:
            raise ValueError(f"noisy: unknown or no shapes {unknown or list(shapes)}; choose from {', '.join(SHAPES)}")
        if not 0.0 <= float(rate) <= 1.0:
            raise ValueError(f"noisy: rate must lie in [0, 1] (got {rate})")
        self.base = base
        self.rate, self.seed, self.shapes = float(rate), int(seed), tuple(shapes)
        self.name = name or f"noisy:{base.name}"
        self.is_standin = base.is_standin

    def choose(self, request: ChatRequest) -> str | None:
        """The shape this request's reply gets, or ``None``: a deterministic function of seed and request."""
        digest = int(stable_hash([self.seed, request.to_dict()], 16), 16)
        if (digest % 1_000_000) / 1_000_000 >= self.rate:
            return None
        return self.shapes[(digest // 1_000_000) % len(self.shapes)]

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        response = await self.base.acomplete(replace(request, model=self.base.name))
        shape = self.choose(request)
        if shape is None:
            return replace(response, model=self.name)
        text, reasoning = apply_shape(shape, response.text)
        return replace(response, text=text, reasoning=reasoning if reasoning is not None else response.reasoning,
                       model=self.name)

    async def aclose(self) -> None:
        await self.base.aclose()

    async def served_identity(self) -> dict[str, Any] | None:
        return {"noise": {"rate": self.rate, "seed": self.seed, "shapes": list(self.shapes)},
                "base": await self.base.served_identity()}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "rate": self.rate, "seed": self.seed, "shapes": list(self.shapes),
                "base": self.base.describe()}


@functools.cache
def noisy_standin(base: str) -> str:
    """The name of a stand-in that is stand-in ``base`` behind :class:`NoisyModel` (``standin-noisy-knn`` for
    ``standin-knn``), registered on first use so that the runner makes it from a run's model name or a role's:
    options ``rate``, ``seed`` and ``shapes`` go to the wrapper, the rest to ``base``."""
    name = f"{STANDIN_PREFIX}noisy-{base.removeprefix(STANDIN_PREFIX)}"

    def factory(rate: float = 0.3, seed: int = 0, shapes: Sequence[str] | str = tuple(SHAPES),
                **options: Any) -> NoisyModel:
        return NoisyModel(create_standin(base, **options), rate, seed, shapes, name=name)

    register_standin(name, factory)
    return name


def _runner_methods(limit: int) -> dict[str, dict[str, Any]]:
    """Method name -> (method factory arguments, RunConfig fields) of the runner-driven methods."""
    movies = {"kg": "movies", "dataset": "mcqa-movies", "split": "test", "limit": limit}
    return {
        "spinach": {"method": ("spinach", {}), "run": {"kg": "movies", "dataset": "metaqa-1hop", "split": "test",
                                                       "limit": limit}, "model": "standin-agent"},
        "saga": {"method": ("saga", {}), "run": {"kg": "movies", "dataset": "metaqa-1hop", "split": "test",
                                                 "limit": limit}, "model": "standin-agent"},
        "ggc": {"method": ("ggc", {"mode": "all"}), "run": movies, "model": "standin-knn",
                "options": {"start": 2500}, "roles": {"corrector": ("standin-corrector", {"start": 2500})}},
        "desq": {"method": ("desq", {"train_limit": 400, "embedder": "hashing"}), "run": movies,
                 "model": "standin-desq"},
        "direct": {"method": ("direct", {}), "run": movies, "model": "standin-keyword-rules"},
    }


def run_method(spec: dict[str, Any], rate: float, seed: int) -> float:
    """F1 of one runner-driven method at one noise rate."""
    from sparqlab.methods import make_method
    from sparqlab.runs import RunConfig, run

    noise = {"rate": rate, "seed": seed}
    roles = {role: {"model": noisy_standin(name), "options": {**options, **noise}}
             for role, (name, options) in spec.get("roles", {}).items()}
    config = RunConfig(experiment="format-robustness", model=noisy_standin(spec["model"]),
                       model_options={**spec.get("options", {}), **noise}, model_roles=roles, cache="off",
                       progress=False, **spec["run"])
    name, options = spec["method"]
    return float(run(make_method(name, **options), config=config).metrics["f1"] or 0.0)


def run_genop(rate: float, seed: int, reference: dict[str, set] | None) -> tuple[float, dict[str, set]]:
    """GenOp over its worked examples: mean F1 of each example's rows against the rows at rate 0 (``reference``;
    ``None`` computes it, F1 = 1)."""
    from sparqlab.eval.metrics import set_scores
    from sparqlab.kg import open_kg
    from sparqlab.methods.genop import EvalSettings, Oracle, ScriptedModel, run_genop
    from sparqlab.methods.genop.examples import EXAMPLES, MOVIE_QUERY, MOVIE_SCRIPT, write_example_files

    folder = Path(tempfile.mkdtemp(prefix="genop-examples-"))
    paths = write_example_files(folder)
    rows: dict[str, set] = {}
    with open_kg(paths["graph"], cache=False) as paper_kg, open_kg("movies") as movies_kg:
        cases = {name: (example["query"], example["script"], paper_kg) for name, example in EXAMPLES.items()}
        cases["movies"] = (MOVIE_QUERY, MOVIE_SCRIPT, movies_kg)
        for name, (query, script, kg) in cases.items():
            oracle = Oracle.for_model(NoisyModel(ScriptedModel(script), rate=rate, seed=seed))
            result = run_genop(query, kg, oracle, EvalSettings())
            rows[name] = {json.dumps(sorted((k, str(v)) for k, v in row.items())) for row in
                          result.to_query_result().rows}
    reference = reference or rows
    return statistics.fmean(set_scores(rows[n], reference[n]).f1 for n in reference), rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20, help="questions per method (default 20)")
    parser.add_argument("--rates", default="0,0.1,0.3,0.6", help="noise rates (default 0,0.1,0.3,0.6)")
    parser.add_argument("--seed", type=int, default=0, help="noise seed (default 0)")
    parser.add_argument("--methods", default="spinach,saga,ggc,desq,direct,genop")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--no-figure", action="store_true", help="skip the figure")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    rates = [float(r) for r in args.rates.split(",")]
    methods = args.methods.split(",")
    specs = _runner_methods(args.limit)
    table: dict[str, dict[float, float]] = {}
    with tempfile.TemporaryDirectory() as root:
        os.environ["SPARQLAB_RUNS"] = root  # fresh runs: executed, not resumed from an earlier benchmark
        for method in methods:
            reference = None
            for rate in rates:
                if method == "genop":
                    f1, rows = run_genop(rate, args.seed, reference)
                    reference = reference or rows
                else:
                    f1 = run_method(specs[method], rate, args.seed)
                table.setdefault(method, {})[rate] = round(f1, 4)
                print(f"{method:8s} rate {rate:.1f}: F1 {f1:.4f}", flush=True)
    report = {"limit": args.limit, "seed": args.seed, "f1": table,
              "kept_at_0.3": {m: (round(v[0.3] / v[0.0], 4) if v.get(0.0) else None)
                              for m, v in table.items() if 0.3 in v and 0.0 in v}}
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if not args.no_figure:
        from sparqlab import plots

        fig, ax = plots.subplots(1, 1, figsize=(5.5, 3.2))
        for method, values in table.items():
            ax.plot(list(values), list(values.values()), marker="o", label=method)
        ax.set_xlabel("noise rate (replies re-wrapped, content unchanged)")
        ax.set_ylabel("F1")
        ax.set_ylim(0, 1.05)
        ax.set_title(f"format robustness, {args.limit} questions per method [standin]", fontsize=9)
        ax.legend(fontsize=7, ncol=3, loc="lower center")
        paths = plots.save_figure(fig, "format_robustness", experiment="replies",
                                  params={"limit": args.limit, "seed": args.seed})
        print("figure:", *paths)


if __name__ == "__main__":
    main()
