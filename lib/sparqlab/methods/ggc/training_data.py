"""GGC's training-data builders, registered with :mod:`sparqlab.train.data` (``sparqlab train data --builder``):

* ``ggc-generator`` — the generator's inference prompt (:mod:`.prompts`) → gold SPARQL (paper, section 3.3);
* ``ggc-corrector`` — the W1.0 / +C0.2 / +C0.5 / +C0.8 corrector compositions from generator runs (:mod:`.data`;
  one file per composition, section 4.3);
* ``ggc-gate`` — gate examples (question, initial query, label) from generator runs (section 3.4).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sparqlab.core.hashing import file_digest
from sparqlab.data.question import Question
from sparqlab.kg.describe import kg_notes
from sparqlab.methods.ggc.data import COMPOSITIONS, labelled_queries, write_corrector_data
from sparqlab.methods.ggc.prompts import (
    PAPER_PROMPTS,
    PromptAdditions,
    conventions_for,
    generator_messages,
    prompt_prefixes,
    sparql_target,
    variant_profile,
)
from sparqlab.methods.ggc.split import generator_questions, trained_ids
from sparqlab.train.data import register_builder, write_dataset


@register_builder("ggc-generator", "dataset", needs_kg=True, portion=generator_questions,
                  description="the GGC generator's prompt -> gold SPARQL, over the generator's portion of the split "
                              "(GGC section 4.1; --generator-share)")
def generator_records(questions: Sequence[Question], kg: Any, progress: bool = True,
                      variant: str | None = None, prompt: PromptAdditions = PAPER_PROMPTS) -> tuple[list[dict], dict]:
    """GGC generator records: the generator's inference prompt and the gold query as the corrector files give
    theirs (:func:`~sparqlab.methods.ggc.prompts.sparql_target`); ``variant`` and ``prompt`` as GGC's
    (``None``: the KG's own conventions; the paper's prompts). The questions are the generator's portion of the
    split (:func:`~sparqlab.methods.ggc.split.generator_questions`, option ``generator_share``), so the gate
    and corrector questions of ``GGC.prepare`` and ``train gate`` with the same share are disjoint from them."""
    notes, conventions = kg_notes(kg), conventions_for(kg.profile, variant)
    prefixes = prompt_prefixes(variant_profile(kg.profile, variant))
    records = [{"id": q.id, "messages": [*generator_messages(q.text, kg.profile.name, notes, conventions, prompt,
                                                             prefixes),
                                         {"role": "assistant", "content": sparql_target(q.gold_sparql, prompt)}]}
               for q in questions if q.gold_sparql]
    return records, {}


def check_disjoint(queries: Sequence[Any], generator_data: str | Path | None) -> None:
    """GGC's protocol (section 4.1): the generator is fine-tuned on one portion of the training split and the
    gate / corrector data are labelled on the *remaining* questions. Refuses labelled ``queries`` whose question
    ids occur in the generator's training file ``generator_data`` (records with an ``id``)."""
    if generator_data is None:
        return
    shared = sorted({q.question_id for q in queries} & trained_ids(generator_data))
    if shared:
        raise ValueError(f"{len(shared)} labelled questions (e.g. {shared[0]!r}) are in the generator's training "
                         f"data {generator_data}: the paper labels gate and corrector data on the remaining training "
                         "questions; run the generator over another part of the split")


@register_builder("ggc-corrector", "runs", needs_kg=True,
                  description="corrector SFT compositions W1.0, +C0.2, +C0.5, +C0.8 from generator runs (--out is "
                              "a folder)")
def build_corrector_data(run_dirs: Sequence[str | Path], out: str | Path, kg: Any, *, variant: str | None = None,
                         kg_feedback: bool = False, seed: int = 0,
                         compositions: Mapping[str, float] | Sequence[str] | None = None,
                         basis: str = "composed", queries: Sequence[Any] | None = None,
                         generator_data: str | Path | None = None,
                         prompt: PromptAdditions = PAPER_PROMPTS) -> dict[str, Any]:
    """GGC's corrector compositions (default W1.0, +C0.2, +C0.5, +C0.8; ``compositions``: name → correct share,
    or names of :data:`~sparqlab.methods.ggc.data.COMPOSITIONS`; ``basis``: what C0.x is a share of, see
    :func:`~sparqlab.methods.ggc.data.write_corrector_data`) from generator runs, written by :func:`~sparqlab.methods.ggc.data.write_corrector_data` into the folder
    ``out``; the manifest gains each file's sha256. ``queries``: the runs' labelled queries when the caller has
    them already. ``generator_data``: the generator's training file; labelled questions must not be in it
    (:func:`check_disjoint`)."""
    if compositions is not None and not isinstance(compositions, Mapping):
        unknown = [name for name in compositions if name not in COMPOSITIONS]
        if unknown:
            raise ValueError(f"unknown compositions {unknown}; known: {', '.join(COMPOSITIONS)}")
        compositions = {name: COMPOSITIONS[name] for name in compositions}
    if queries is None:
        queries = labelled_queries(run_dirs, kg, kg_feedback)
    check_disjoint(queries, generator_data)
    manifest = write_corrector_data(queries, out, kg, variant=variant, kg_feedback=kg_feedback, seed=seed,
                                    compositions=compositions or COMPOSITIONS, sources=[str(d) for d in run_dirs],
                                    basis=basis, prompt=prompt)
    manifest["sha256"] = {name: file_digest(Path(out) / f"{name}.jsonl") for name in manifest["sizes"]}
    (Path(out) / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


@register_builder("ggc-gate", "runs", needs_kg=False,
                  description="gate examples (question, initial query, label) from generator runs")
def build_gate_data(run_dirs: Sequence[str | Path], out: str | Path, kg: Any = None,
                    generator_data: str | Path | None = None) -> dict[str, Any]:
    """Gate examples ``{"id", "question", "sparql", "label"}`` (label 1: the initial query is wrong) from
    generator runs (:func:`~sparqlab.methods.ggc.data.labelled_queries`). They carry no KG feedback: a feedback
    gate is trained from the runs themselves (``sparqlab train gate --runs``). ``generator_data``: as for
    :func:`build_corrector_data`."""
    queries = labelled_queries(run_dirs, kg)
    check_disjoint(queries, generator_data)
    records = [{"id": q.question_id, "question": q.question, "sparql": q.sparql, "label": int(not q.correct)}
               for q in queries]
    positive = sum(r["label"] for r in records)
    return write_dataset(out, records, builder="ggc-gate", sources={"runs": [str(d) for d in run_dirs]},
                         counts={"wrong": positive, "correct": len(records) - positive})
