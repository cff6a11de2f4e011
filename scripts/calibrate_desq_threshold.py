"""Move DeSQ's score-threshold cut (the paper's 0.85, a BGE-Large cosine) to another embedder, and show what the
cut does on held-out training questions.

Cosines of different embedders lie on different scales: BGE's documented distribution is "about in the interval
[0.6, 1]" (unrelated texts near 0.6), MiniLM's unrelated texts score near 0. The equivalent cut is the point as far
from the embedder's unrelated level towards 1 as 0.85 lies above 0.6 (62.5 % of the way;
``correction.cut_equivalent``), the unrelated level being the median cosine of 20,000 random pairs of memory
entries (``correction.unrelated_cosine``), measured on the movie and the Wikidata memory. Then the held-out
training questions after the worked examples are answered (no query executed) and score-threshold / combined are
replayed at several cuts (``metrics.threshold_sweep``)::

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/calibrate_desq_threshold.py [--embedder minilm] [--model standin-desq]

Movies: mcqa-movies train[2000:2200] with train[:2000] as worked examples (notebook 07's setting); Wikidata:
qald9plus train[300:] with train[:300] as worked examples, the Wikidata memory.
"""

from __future__ import annotations

import argparse

import pandas as pd

from sparqlab.data.registry import load
from sparqlab.kg import open_kg
from sparqlab.methods.desq import Desq
from sparqlab.methods.desq.correction import cut_equivalent, unrelated_cosine
from sparqlab.methods.desq.method import evaluate_offline
from sparqlab.methods.desq.metrics import threshold_sweep

SETTINGS = {
    "movies": dict(kg="movies", dataset="mcqa-movies", examples=2000, held_out=200, memory="kg"),
    "wikidata": dict(kg="wikidata", dataset="qald9plus", examples=300, held_out=None, memory="catalogue"),
}


def measure(name: str, embedder: str, model: str) -> tuple[float, float, pd.DataFrame]:
    """(unrelated cosine, equivalent cut, sweep) of one setting."""
    setting = SETTINGS[name]
    questions = load(setting["dataset"], split="train")
    stop = None if setting["held_out"] is None else setting["examples"] + setting["held_out"]
    method = Desq(strategy="roundtrip-exact", threshold=0.85, train_dataset=setting["dataset"],
                  train_limit=setting["examples"], memory=setting["memory"], embedder=embedder)
    with open_kg(setting["kg"]) as kg:
        records = pd.DataFrame(evaluate_offline(method, questions[setting["examples"]:stop], kg, model))
    unrelated = unrelated_cosine(method.memory.vectors)
    cut = cut_equivalent(unrelated)
    sweep = threshold_sweep(records, sorted({0.5, 0.6, round(cut, 2), 0.7, 0.8, 0.85, 0.9, 0.95, 1.0}))
    return unrelated, cut, sweep


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--model", default="standin-desq")
    parser.add_argument("--kg", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    args = parser.parse_args()
    for name in args.kg:
        unrelated, cut, sweep = measure(name, args.embedder, args.model)
        print(f"{name} ({args.embedder}, {args.model}): unrelated cosine {unrelated:.4f}, "
              f"equivalent of 0.85: {cut:.4f}")
        print(sweep.round(4).to_string(), flush=True)


if __name__ == "__main__":
    main()
