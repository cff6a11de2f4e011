"""Training-data builders feeding :func:`sparqlab.train.sft.train_sft` and the gate trainer: each writes JSONL
records (:mod:`sparqlab.train.records`) and a manifest beside them (counts, sources, sha256 of the file).

Builders (``sparqlab train data --builder NAME``):

* ``generic`` — any bundled dataset split: question → gold SPARQL (this package's prompts);
* ``ggc-generator`` — the GGC generator's prompt (``sparqlab.ggc.prompts``) → gold SPARQL (paper, section 3.3);
* ``desq`` — DeSQ's two fine-tuning records per question: question → atomic constraints, and question +
  constraints → two-part structured output (``sparqlab.desq.generation.finetune_records``);
* ``ggc-corrector`` — the W1.0 / +C0.2 / +C0.5 / +C0.8 corrector compositions from generator runs
  (``sparqlab.ggc.data``; one file per composition);
* ``ggc-gate`` — gate examples (question, initial query, label) from generator runs.

Dataset builders read the gold queries of a training split; they refuse a ``test`` split unless asked, since
fine-tuning on the scored questions would leak them into the results.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sparqlab.core.jsonl import write_jsonl
from sparqlab.data.question import Question
from sparqlab.train.prompts import PROMPTS
from sparqlab.train.records import file_digest

DATASET_BUILDERS = ("generic", "ggc-generator", "desq")
RUN_BUILDERS = ("ggc-corrector", "ggc-gate")
BUILDERS = DATASET_BUILDERS + RUN_BUILDERS


def manifest_path(path: str | Path) -> Path:
    """``data.jsonl`` → ``data.manifest.json``."""
    path = Path(path)
    return path.with_name(f"{path.stem}.manifest.json")


def write_dataset(path: str | Path, records: Sequence[dict[str, Any]], *, builder: str,
                  sources: dict[str, Any], counts: dict[str, int] | None = None) -> dict[str, Any]:
    """Write ``records`` to ``path`` and its manifest (builder, sources, counts, sha256); returns the manifest."""
    if not records:
        raise ValueError(f"the {builder} builder produced no records; nothing written to {path}")
    write_jsonl(path, records)
    manifest = {"builder": builder, "file": Path(path).name, "records": len(records), "counts": counts or {},
                "sources": sources, "sha256": file_digest(path)}
    manifest_path(path).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def sparql_response(sparql: str) -> str:
    return PROMPTS["sparql_response"].render(sparql=sparql.strip())


def question_records(questions: Sequence[Question], kg_name: str | None = None, kg_notes: str = "") -> list[dict]:
    """The generic builder: one chat record per question with a gold query (``kg_name`` defaults to the
    question's KG; ``kg_notes``, e.g. :func:`sparqlab.methods.direct.kg_notes`, go into the system turn)."""
    records = []
    for question in questions:
        if not question.gold_sparql:
            continue
        notes = PROMPTS["question_notes"].render(notes=kg_notes.strip()) if kg_notes.strip() else ""
        system = PROMPTS["question_system"].render(kg_name=kg_name or question.kg or "target", kg_notes=notes)
        records.append({"id": question.id, "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": PROMPTS["question_user"].render(question=question.text)},
            {"role": "assistant", "content": sparql_response(question.gold_sparql)}]})
    return records


def ggc_generator_records(questions: Sequence[Question], kg: Any, variant: str = "movies") -> list[dict]:
    """GGC generator records: the generator's inference prompt and the gold query, fenced as the corrector
    files fence theirs."""
    from sparqlab.ggc.prompts import generator_messages
    from sparqlab.methods.direct import kg_notes

    notes = kg_notes(kg)
    return [{"id": q.id, "messages": [*generator_messages(q.text, kg.profile.name, notes, variant),
                                      {"role": "assistant", "content": sparql_response(q.gold_sparql)}]}
            for q in questions if q.gold_sparql]


def desq_records(questions: Sequence[Question], kg: Any, progress: bool = True) -> tuple[list[dict], int]:
    """DeSQ fine-tuning records from gold decompositions (two per question); returns them and the number of
    questions whose gold query does not decompose (skipped, as DeSQ's ``prepare`` skips them)."""
    from tqdm.auto import tqdm

    from sparqlab.desq.evaluation import gold_sparql_for
    from sparqlab.desq.fragments import scheme_for
    from sparqlab.desq.generation import finetune_records, gold_example
    from sparqlab.desq.memory import describer
    from sparqlab.eval.sparql_tree import SparqlParseError

    scheme, describe = scheme_for(kg.profile.name), describer(None, kg)
    examples, skipped = [], 0
    for question in tqdm(questions, desc="DeSQ gold decompositions", unit="q", disable=not progress):
        try:
            examples.append(gold_example(question, scheme, describe, gold_sparql_for(question, kg)))
        except (ValueError, SparqlParseError):
            skipped += 1
    return finetune_records(examples, kg.profile.name), skipped


def build_from_dataset(builder: str, dataset: str, split: str, out: str | Path, *, limit: int | None = None,
                       kg: Any = None, variant: str = "movies", allow_test: bool = False,
                       progress: bool = True) -> dict[str, Any]:
    """Run a dataset builder (``generic`` | ``ggc-generator`` | ``desq``) over ``dataset``/``split`` (first
    ``limit`` questions) and write ``out`` + manifest. ``kg``: an open KG (needed by ``ggc-generator`` and
    ``desq``; gives ``generic`` its notes); ``variant``: GGC prompt variant; ``allow_test``: permit a test
    split."""
    from sparqlab.data.registry import load

    if builder not in DATASET_BUILDERS:
        raise ValueError(f"unknown dataset builder {builder!r}; use one of {', '.join(DATASET_BUILDERS)}")
    if split == "test" and not allow_test:
        raise ValueError("refusing to build training data from a test split (its questions are the scored ones); "
                         "pass allow_test=True / --allow-test if this is really wanted")
    if builder != "generic" and kg is None:
        raise ValueError(f"the {builder} builder needs the KG (its prompts and gold decompositions read it)")
    questions = load(dataset, split, limit)
    with_gold = [q for q in questions if q.gold_sparql]
    counts = {"questions": len(questions), "without_gold": len(questions) - len(with_gold)}
    if builder == "generic":
        from sparqlab.methods.direct import kg_notes

        records = question_records(with_gold, kg.profile.name if kg else None, kg_notes(kg) if kg else "")
    elif builder == "ggc-generator":
        records = ggc_generator_records(with_gold, kg, variant)
    else:
        records, counts["undecomposable"] = desq_records(with_gold, kg, progress)
    sources = {"dataset": dataset, "split": split, "limit": limit, "kg": kg.profile.name if kg else None,
               "variant": variant if builder == "ggc-generator" else None}
    return write_dataset(out, records, builder=builder, sources=sources, counts=counts)


def check_disjoint(queries: Sequence[Any], generator_data: str | Path | None) -> None:
    """GGC's protocol (section 4.1): the generator is fine-tuned on one portion of the training split and the
    gate / corrector data are labelled on the *remaining* questions. Refuses labelled ``queries`` whose question
    ids occur in the generator's training file ``generator_data`` (records with an ``id``)."""
    if generator_data is None:
        return
    from sparqlab.train.records import read_records

    trained_on = {str(r.get("id")) for r in read_records(generator_data) if r.get("id") is not None}
    if not trained_on:
        raise ValueError(f"{generator_data} has no record ids, so disjointness from it cannot be checked")
    shared = sorted({q.question_id for q in queries} & trained_on)
    if shared:
        raise ValueError(f"{len(shared)} labelled questions (e.g. {shared[0]!r}) are in the generator's training "
                         f"data {generator_data}: the paper labels gate and corrector data on the remaining training "
                         "questions; run the generator over another part of the split")


def build_corrector_data(run_dirs: Sequence[str | Path], out_dir: str | Path, kg: Any, *, variant: str = "movies",
                         kg_feedback: bool = False, seed: int = 0, compositions: Mapping[str, float] | None = None,
                         queries: Sequence[Any] | None = None,
                         generator_data: str | Path | None = None) -> dict[str, Any]:
    """GGC's corrector compositions (default W1.0, +C0.2, +C0.5, +C0.8; ``compositions``: name → correct share)
    from generator runs, written by :func:`sparqlab.ggc.data.write_corrector_data`; the manifest gains each
    file's sha256. ``queries``: the runs' labelled queries when the caller has them already.
    ``generator_data``: the generator's training file; labelled questions must not be in it
    (:func:`check_disjoint`)."""
    from sparqlab.ggc.data import COMPOSITIONS, labelled_queries, write_corrector_data

    if queries is None:
        queries = labelled_queries(run_dirs, kg, kg_feedback)
    check_disjoint(queries, generator_data)
    manifest = write_corrector_data(queries, out_dir, kg, variant=variant, kg_feedback=kg_feedback, seed=seed,
                                    compositions=compositions or COMPOSITIONS, sources=[str(d) for d in run_dirs])
    manifest["sha256"] = {name: file_digest(Path(out_dir) / f"{name}.jsonl") for name in manifest["sizes"]}
    (Path(out_dir) / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def build_gate_data(run_dirs: Sequence[str | Path], out: str | Path, kg: Any = None,
                    kg_feedback: bool = False, generator_data: str | Path | None = None) -> dict[str, Any]:
    """Gate examples ``{"id", "question", "sparql", "label"}`` (label 1: the initial query is wrong) from
    generator runs (:func:`sparqlab.ggc.data.labelled_queries`), disjoint from ``generator_data``
    (:func:`check_disjoint`)."""
    from sparqlab.ggc.data import labelled_queries

    if kg_feedback:
        raise ValueError("gate files carry no KG feedback; train a feedback gate with `sparqlab ggc train-gate`")
    queries = labelled_queries(run_dirs, kg)
    check_disjoint(queries, generator_data)
    records = [{"id": q.question_id, "question": q.question, "sparql": q.sparql, "label": int(not q.correct)}
               for q in queries]
    positive = sum(r["label"] for r in records)
    return write_dataset(out, records, builder="ggc-gate", sources={"runs": [str(d) for d in run_dirs]},
                         counts={"wrong": positive, "correct": len(records) - positive})

