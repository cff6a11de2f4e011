"""Training-data builders feeding :func:`sparqlab.train.sft.train_sft` and the gate trainer: each writes JSONL
records (:mod:`sparqlab.train.records`) and a manifest beside them (counts, sources, sha256 of the file).

Builders (``sparqlab train data --builder NAME``) live in a registry: this module registers ``generic`` (any bundled
dataset split: question → gold SPARQL, this package's prompts); each method package registers its own on import
(GGC: ``ggc-generator``, ``ggc-corrector``, ``ggc-gate``; DeSQ: ``desq``), found through the
``sparqlab.plugins`` group (:mod:`sparqlab.core.plugins`), so this layer never imports a method. :func:`builder_names` lists them all.

A builder's ``source`` is ``dataset`` (it turns questions with gold queries into records; :func:`build_from_dataset`
loads the split and writes the file) or ``runs`` (it reads generator run folders and writes its own files;
:func:`build_from_runs`). Dataset builders refuse a ``test`` split unless asked, since fine-tuning on the scored
questions would leak them into the results.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sparqlab.core.hashing import file_digest, id_set_record
from sparqlab.core.jsonl import write_jsonl
from sparqlab.core.registry import Registry
from sparqlab.data.question import Question
from sparqlab.train.prompts import PROMPTS, question_messages


@dataclass(frozen=True)
class Builder:
    """A registered training-data builder.

    ``source="dataset"``: ``build(questions, kg, progress=..., **options) -> (records, extra_counts)`` over the
    questions of a split that have a gold query. ``source="runs"``: ``build(run_dirs, out, kg, **options) ->
    manifest``. ``needs_kg``: the builder reads the KG (prompts, gold decompositions, execution feedback).
    ``options``: the keyword options it takes (``variant``, ``seed`` ...), the rest of a request is refused.
    ``portion``: for a dataset builder, ``portion(questions, **its options) -> questions``, the part of the whole
    split it builds from before the ``limit`` is taken (GGC's generator: its portion of GGC §4.1); its keyword
    options are the builder's too.
    """

    name: str
    source: Literal["dataset", "runs"]
    build: Callable[..., Any]
    needs_kg: bool
    description: str
    portion: Callable[..., list[Question]] | None = None

    @property
    def options(self) -> tuple[str, ...]:
        return (*_keywords(self.build), *self.portion_options)

    @property
    def portion_options(self) -> tuple[str, ...]:
        return _keywords(self.portion) if self.portion else ()

    def portion_settings(self, options: dict[str, Any]) -> dict[str, Any]:
        """The ``portion`` keyword options in effect: those given in ``options``, else their defaults."""
        parameters = inspect.signature(self.portion).parameters if self.portion else {}
        return {name: options.get(name, parameters[name].default) for name in self.portion_options}


def _keywords(function: Callable[..., Any]) -> tuple[str, ...]:
    skip = {"questions", "kg", "progress", "run_dirs", "out"}
    return tuple(n for n in inspect.signature(function).parameters if n not in skip)


BUILDERS: Registry[Builder] = Registry("builder", same=lambda a, b: a.build.__qualname__ == b.build.__qualname__)
"""Training-data builders by name."""


def register_builder(name: str, source: Literal["dataset", "runs"], *, needs_kg: bool, description: str,
                     portion: Callable[..., list[Question]] | None = None):
    """Decorator: register ``build`` as the builder ``name`` (see :class:`Builder` for its signature and
    ``portion``)."""

    def decorate(build: Callable[..., Any]) -> Callable[..., Any]:
        BUILDERS.register(name, Builder(name, source, build, needs_kg, description, portion))
        return build

    return decorate


def builder_names(source: str | None = None) -> list[str]:
    """Every registered builder (the method packages' included), optionally of one ``source``."""
    return [name for name, b in BUILDERS.items() if source in (None, b.source)]


def get_builder(name: str) -> Builder:
    """The builder ``name``; the error lists the known ones."""
    return BUILDERS.get(name)


def _checked_options(builder: Builder, options: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(builder.options))
    if unknown:
        raise ValueError(f"the {builder.name} builder takes no option {', '.join(unknown)} "
                         f"(its options: {', '.join(builder.options) or 'none'})")
    return options


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


def held_out_portion(questions: Sequence[Question], exclude_sample: int | None = None, exclude_seed: int = 0,
                     order_seed: int | None = None) -> list[Question]:
    """The generic builder's portion of a split. ``exclude_sample``: the size of the scored sample drawn from the
    same split (``sparqlab run --sample N --sample-seed exclude_seed``,
    :func:`~sparqlab.data.sampling.sample_questions`)
    whose questions and topic entities are left out (:func:`~sparqlab.data.sampling.disjoint_from`): MetaQA ships
    only its test split, so its training records come from the rest of it. ``order_seed``: the rest in a seeded
    random order, so ``--limit N`` takes a random N rather than the file's first (files are sorted by type);
    ``None`` keeps the file order."""
    import random

    from sparqlab.data.sampling import disjoint_from, sample_questions

    rest = list(questions)
    if exclude_sample is not None:
        rest = disjoint_from(rest, sample_questions(rest, exclude_sample, exclude_seed))
    if order_seed is not None:
        random.Random(order_seed).shuffle(rest)
    return rest


@register_builder("generic", "dataset", needs_kg=False, portion=held_out_portion,
                  description="question -> gold SPARQL for any bundled dataset (KG notes in the system turn when a "
                              "KG is given; the prompt of `run direct -o prompt=trained`)")
def generic_records(questions: Sequence[Question], kg: Any = None, progress: bool = True) -> tuple[list[dict], dict]:
    """The ``generic`` builder over an open KG (its notes go into the system turn) or none."""
    from sparqlab.kg.describe import kg_notes

    return question_records(questions, kg.profile.name if kg else None, kg_notes(kg) if kg else ""), {}


def question_records(questions: Sequence[Question], kg_name: str | None = None, kg_notes: str = "") -> list[dict]:
    """The generic builder: one chat record per question with a gold query (``kg_name`` defaults to the
    question's KG; ``kg_notes``, e.g. :func:`sparqlab.kg.describe.kg_notes`, go into the system turn)."""
    records = []
    for question in questions:
        if not question.gold_sparql:
            continue
        records.append({"id": question.id, "messages": [
            *question_messages(question.text, kg_name or question.kg or "target", kg_notes),
            {"role": "assistant", "content": sparql_response(question.gold_sparql)}]})
    return records


def build_from_dataset(builder: str, dataset: str, split: str, out: str | Path, *, limit: int | None = None,
                       kg: Any = None, allow_test: bool = False, progress: bool = True,
                       **options: Any) -> dict[str, Any]:
    """Run a dataset builder over ``dataset``/``split`` (first ``limit`` questions, of the builder's ``portion``
    when it has one) and write ``out`` + manifest (its ``sources`` name the options and the questions' ids as
    count + digest). ``kg``: an open KG (required by builders that read it); ``options``: the builder's own (e.g.
    GGC's ``variant``); ``allow_test``: permit a test split."""
    from sparqlab.data.registry import load, splits_of

    spec = get_builder(builder)
    if spec.source != "dataset":
        raise ValueError(f"{builder} builds from generator run folders, not a dataset (use --runs)")
    options = _checked_options(spec, options)
    if split == "test" and not allow_test:
        raise ValueError("refusing to build training data from a test split (its questions are the scored ones); "
                         "pass allow_test=True / --allow-test if this is really wanted")
    if spec.needs_kg and kg is None:
        raise ValueError(f"the {builder} builder needs the KG (its prompts and gold decompositions read it)")
    try:
        questions = load(dataset, split, None if spec.portion else limit)
    except ValueError as missing:
        if split == "test" or "test" not in splits_of(dataset):
            raise
        raise ValueError(f"{missing} (to train on the scored test questions anyway: --split test --allow-test)") \
            from None
    portion = spec.portion_settings(options)
    if spec.portion:
        questions = spec.portion(questions, **portion)[:limit]
    with_gold = [q for q in questions if q.gold_sparql]
    counts = {"questions": len(questions), "without_gold": len(questions) - len(with_gold)}
    records, extra_counts = spec.build(with_gold, kg, progress=progress,
                                       **{k: v for k, v in options.items() if k not in spec.portion_options})
    sources = {"dataset": dataset, "split": split, "limit": limit, "kg": kg.profile.name if kg else None, **options,
               **portion, "question_ids": id_set_record(q.id for q in with_gold)}
    return write_dataset(out, records, builder=builder, sources=sources, counts={**counts, **extra_counts})


def build_from_runs(builder: str, run_dirs: Sequence[str | Path], out: str | Path, kg: Any = None,
                    **options: Any) -> dict[str, Any]:
    """Run a builder over generator run folders; it writes ``out`` (a file or a folder, as the builder says) and
    returns its manifest."""
    spec = get_builder(builder)
    if spec.source != "runs":
        raise ValueError(f"{builder} builds from a dataset split, not run folders (use --dataset)")
    if not run_dirs:
        raise ValueError(f"the {builder} builder needs --runs (generator-only run folders)")
    if spec.needs_kg and kg is None:
        raise ValueError(f"the {builder} builder needs the KG (its prompts or labels read it)")
    return spec.build(list(run_dirs), out, kg, **_checked_options(spec, options))
