"""Gate and corrector training data (paper, sections 3.6 and 4.1): run the generator over a training split, label
each initial query by query-level accuracy, and turn the labelled queries into gate examples or corrector SFT
files.

The generator pass is an ordinary run (``GGC(mode="none")``, a nested run of ``prepare`` through
:meth:`~sparqlab.platform.context.PrepareContext.sub_run`, or an experiment's run), so its folder has the usual
``predictions.jsonl``, traces and metrics, resumes, and can be inspected like any other run. A record's label is
its ``em`` (the answer set of s(0) equals the gold answer set); records whose gold query fails or returns nothing
are left out, since they cannot be judged.

Corrector compositions (section 4.3, Table 5c). The paper: "W1.0 denotes training only on the full set of wrong
samples, while W1.0+C0.2, W1.0+C0.5, and W1.0+C0.8 additionally add correct samples whose sizes correspond to
20%, 50%, and 80% of all training samples, respectively. Thus, the training set size increases as more correct
samples are added." ``W1.0`` is every wrong initial query; how many correct ones ``W1.0+Cx`` adds depends on
what "all training samples" is (``basis``):

* ``composed`` (default): the composed training set, so the correct samples are the share ``x`` of it —
  ``round(x / (1 − x) · |W|)`` of them (C0.8 adds 4 |W|). "All training samples" most directly names the set the
  corrector is trained on, and the sentence after it (the set grows with x) holds under this reading;
* ``wrong``: a ratio to the wrong samples — ``round(x · |W|)`` (C0.8 adds 0.8 |W|), the "W1.0 + C0.8" notation
  read as weights.

The correct samples are a seeded shuffle's prefix, so smaller compositions are subsets of larger ones.

SFT files are JSON Lines with one instruction/response pair per line, the corrector's inference prompt (paper,
Table 8) as the instruction and the gold query as the response::

    {"id": ..., "source": "wrong" | "correct", "system": <system prompt>, "instruction": <user turn>,
     "input": "", "output": <gold SPARQL>, "messages": [system, user, assistant <the same gold SPARQL>]}

``instruction``/``input``/``output``/``system`` is the Alpaca layout LLaMA-Factory reads (a ``dataset_info.json``
describing every file is written alongside); ``messages`` is the conversational layout TRL's ``SFTTrainer``
reads (train with ``assistant_only_loss=True`` to put the loss on the response only, as the paper does).
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparqlab.core.jsonl import read_jsonl, write_jsonl
from sparqlab.eval.metrics import EM_KEY, is_gold_error_record
from sparqlab.methods.ggc.feedback import KGFeedback, feedback_for
from sparqlab.methods.ggc.gate import Gate, GateExample, GateSettings
from sparqlab.methods.ggc.prompts import (
    PAPER_PROMPTS,
    PromptAdditions,
    conventions_for,
    corrector_messages,
    prompt_prefixes,
    sparql_target,
    variant_profile,
)

if TYPE_CHECKING:
    from sparqlab.kg.profiles import PromptConventions

COMPOSITIONS: dict[str, float] = {"W1.0": 0.0, "W1.0+C0.2": 0.2, "W1.0+C0.5": 0.5, "W1.0+C0.8": 0.8}
"""The paper's corrector training compositions: name → share of correct samples in the composed set."""


@dataclass(frozen=True)
class LabelledQuery:
    """An initial query s(0) of the generator, judged against the gold answers."""

    question_id: str
    question: str
    sparql: str
    correct: bool
    gold_sparql: str | None
    feedback: KGFeedback | None = None

    def gate_example(self) -> GateExample:
        """As a gate training example: label 1 ("correction required") when s(0) is wrong."""
        return GateExample(self.question, self.sparql, int(not self.correct), self.feedback, self.question_id)


def labelled_queries(run_dirs: Iterable[str | Path], kg: Any = None, kg_feedback: bool = False,
                     gold_errors: bool = False) -> list[LabelledQuery]:
    """The initial queries of generator-only runs (or uncorrected questions of any GGC run), labelled.

    Questions whose gold query fails or returns nothing are left out (training data: no correct target), unless
    ``gold_errors``: then they are kept as "correction required" (``correct=False``), the question set and labels
    the pipeline's gate metrics use (evaluation, Table 4). With ``kg_feedback`` each query is executed on ``kg`` (through the query cache) for its
    :class:`~sparqlab.methods.ggc.feedback.KGFeedback`, by the same code the method uses. A question in several folders
    is taken once (first folder wins).
    """
    if kg_feedback and kg is None:
        raise ValueError("kg_feedback needs the KG to execute the initial queries on")
    found: dict[str, LabelledQuery] = {}
    for run_dir in run_dirs:
        path = Path(run_dir) / "predictions.jsonl"
        if not path.is_file():
            raise FileNotFoundError(f"{run_dir} is not a run folder (no predictions.jsonl)")
        for record in read_jsonl(path):
            extra = record.get("extra") or {}
            gold_error = is_gold_error_record(record)
            if record["id"] in found or extra.get("triggered") or (gold_error and not gold_errors):
                continue
            if record.get(EM_KEY) is None and not gold_error:  # not judged (no gold at all)
                continue
            sparql = record.get("predicted_sparql") or ""
            feedback = feedback_for(kg, sparql) if kg_feedback else None
            found[record["id"]] = LabelledQuery(record["id"], record["question"], sparql,
                                                not gold_error and bool(record[EM_KEY]),
                                                record.get("gold_sparql"), feedback)
    if not found:
        raise ValueError("no judgeable initial queries in the given run folders")
    return list(found.values())


def gate_from_runs(run_dirs: Iterable[str | Path], kg: Any, settings: GateSettings, *,
                   kg_feedback: bool = False) -> Gate:
    """A gate trained on the :func:`labelled_queries` of generator-only runs (recorded as its sources), reading
    each initial query's KG feedback when ``kg_feedback``."""
    run_dirs = list(run_dirs)
    examples = labelled_queries(run_dirs, kg, kg_feedback)
    return Gate.train([e.gate_example() for e in examples], settings, [str(d) for d in run_dirs],
                      kg_feedback=kg_feedback)


COMPOSITION_BASES = ("composed", "wrong")


def correct_count(n_wrong: int, share: float, basis: str = "composed") -> int:
    """Correct samples to add to ``n_wrong`` wrong ones: ``share`` of the composed set (``basis="composed"``) or
    ``share`` times the wrong ones (``basis="wrong"``); module docstring."""
    if basis not in COMPOSITION_BASES:
        raise ValueError(f"unknown composition basis {basis!r}; use one of {', '.join(COMPOSITION_BASES)}")
    if not 0 <= share < 1:
        raise ValueError(f"a correct-sample share must be in [0, 1); got {share}")
    return round(share * n_wrong) if basis == "wrong" else round(share * n_wrong / (1 - share))


def compose(queries: Sequence[LabelledQuery], compositions: Mapping[str, float] = COMPOSITIONS,
            seed: int = 0, basis: str = "composed") -> dict[str, list[LabelledQuery]]:
    """The corrector training sets: every wrong query plus a seeded, nested choice of correct ones, counted by
    :func:`correct_count` on ``basis``.

    Wrong queries without a gold query to learn from are left out. Raises ``ValueError`` when a composition
    needs more correct queries than there are.
    """
    wrong = [q for q in queries if not q.correct and q.gold_sparql]
    correct = [q for q in queries if q.correct and q.gold_sparql]
    if not wrong:
        raise ValueError("no wrong initial queries: nothing for a corrector to learn to repair")
    random.Random(seed).shuffle(correct)
    sets = {}
    for name, share in compositions.items():
        needed = correct_count(len(wrong), share, basis)
        if needed > len(correct):
            raise ValueError(f"{name} needs {needed} correct samples but only {len(correct)} exist; generate "
                             "over more training questions or drop this composition")
        sets[name] = wrong + correct[:needed]
    return sets


def sft_record(query: LabelledQuery, kg_name: str, kg_notes: str, conventions: PromptConventions,
               kg_feedback: bool = False, additions: PromptAdditions = PAPER_PROMPTS,
               prefixes: str = "") -> dict[str, Any]:
    """One instruction/response pair (module docstring): the corrector's prompt and the gold query; the Alpaca
    ``output`` and the chat ``assistant`` turn are the same target (:func:`~sparqlab.methods.ggc.prompts.
    sparql_target`: fenced exactly when the prompt asks for a fence)."""
    feedback = query.feedback.describe() if kg_feedback and query.feedback else None
    system, user = corrector_messages(query.question, query.sparql, kg_name, kg_notes, conventions, feedback,
                                      additions, prefixes)
    target = sparql_target(query.gold_sparql, additions)
    return {"id": query.question_id, "source": "correct" if query.correct else "wrong",
            "system": system["content"], "instruction": user["content"], "input": "", "output": target,
            "messages": [system, user, {"role": "assistant", "content": target}]}


def write_corrector_data(queries: Sequence[LabelledQuery], out_dir: str | Path, kg: Any, *,
                         variant: str | None = None, kg_feedback: bool = False,
                         compositions: Mapping[str, float] = COMPOSITIONS, seed: int = 0,
                         sources: Sequence[str] = (), notes: str | None = None,
                         basis: str = "composed", prompt: PromptAdditions = PAPER_PROMPTS) -> dict[str, Any]:
    """Write ``<composition>.jsonl`` per composition, LLaMA-Factory's ``dataset_info.json`` and a
    ``manifest.json`` (sizes, seed, composition ``basis``, source runs); returns the manifest. ``notes`` is the KG description in the
    prompt (default: what the method's prompt says about ``kg``); ``variant`` as GGC's (``None``: the KG's own
    conventions)."""
    from sparqlab.kg.describe import kg_notes

    if kg_feedback and any(q.feedback is None for q in queries):
        raise ValueError("kg_feedback is on but some labelled queries have no feedback")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    notes = kg_notes(kg) if notes is None else notes
    conventions = conventions_for(kg.profile, variant)
    prefixes = prompt_prefixes(variant_profile(kg.profile, variant))
    sets = compose(queries, compositions, seed, basis)
    sizes, info = {}, {}
    for name, members in sets.items():
        write_jsonl(out / f"{name}.jsonl",
                    [sft_record(q, kg.profile.name, notes, conventions, kg_feedback, prompt, prefixes)
                     for q in members])
        n_correct = sum(q.correct for q in members)
        sizes[name] = {"total": len(members), "wrong": len(members) - n_correct, "correct": n_correct}
        info[f"ggc_corrector_{name}"] = {"file_name": f"{name}.jsonl", "formatting": "alpaca",
                                          "columns": {"prompt": "instruction", "query": "input",
                                                      "response": "output", "system": "system"}}
    (out / "dataset_info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    manifest = {"compositions": dict(compositions), "basis": basis, "sizes": sizes, "seed": seed,
                "variant": variant or kg.profile.name,
                "kg_feedback": kg_feedback, "prompt": dataclasses.asdict(prompt), "kg": kg.profile.name,
                "sources": list(sources),
                "n_labelled": len(queries)}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest
