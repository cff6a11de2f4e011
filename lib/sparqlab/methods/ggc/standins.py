"""The GGC stand-ins: ``standin-knn`` (generator) and ``standin-corrector`` (corrector). Deterministic, offline,
and never LLM results (their runs are labelled ``[standin]``).

``standin-knn`` plays the paper's fine-tuned generator: it remembers part of a training split (by default the
generator's portion of the run's own training split — the scored dataset's ``train``, else the KG profile's
``train_dataset``, e.g. a seeded half of mcqa-movies train on the movie KG, :mod:`.split` — so that the rest is
left for building gate and corrector training data, as the paper splits its training set) and answers with the nearest remembered question's gold
query, re-filled with the new question's bracketed entities (:mod:`sparqlab.methods.ggc.template_memory`). On the MCQA-style test
split it is right about nine times in ten; its mistakes are other question types' queries (wrong relation,
constraint or structure) and swapped entity roles.

``standin-corrector`` plays the corrector. It reads the question and the generated query from the prompt and
returns the first of its own candidates — the ``k`` nearest templates, each filled in both entity orders — that
differs from the generated query and executes with a non-empty result on its KG (the run's, unless ``kg`` names
another); if none does, it returns the generated query unchanged (as the paper's corrector prompt asks). It thus uses execution feedback and repairs
many wrong queries, but it also rewrites correct ones when they are routed to it — the over-correction a gate is
there to prevent. Its KG access goes through :meth:`KnowledgeGraph.query` like any generated SPARQL.

Both take the run's training source and KG when the run binds them (:meth:`StandinModel.bind`); the memory they
use is in their options and so in their response-cache identity. Memory options of another KG's dataset are
refused unless ``allow_other_kg`` is set.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from sparqlab.kg.errors import KGError
from sparqlab.llm import ChatRequest, RunBinding, StandinModel, register_standin
from sparqlab.methods.ggc.split import GENERATOR_SHARE, SPLIT_SEED
from sparqlab.methods.ggc.template_memory import TemplateMemory, memory_for, portion_memory, same_query
from sparqlab.platform.parsing import extract_sparql

_QUESTION = re.compile(r"^Question:[ \t]*(.+)$", re.MULTILINE)
NO_QUERY_REPLY = "I could not find a query for this question."


def question_in(message: str) -> str | None:
    """The question of a GGC user turn (the line starting with ``Question:``)."""
    match = _QUESTION.search(message)
    return match.group(1).strip() if match else None


def _fenced(sparql: str) -> str:
    return f"```sparql\n{sparql.strip()}\n```"


class _Remembering(StandinModel):
    """A stand-in remembering questions of ``dataset``/``split`` (module docstring): given as options, or the
    run's training source when the run binds it. Which questions: ``start:stop`` when either is given, else the
    generator's portion of :func:`~sparqlab.methods.ggc.split.training_split` with ``generator_share`` and
    ``split_seed`` (a seeded draw; its ids are in :meth:`describe`, so a run can check them against the questions
    it scores; ``environment.json`` keeps their count and digest beside the parameters that determine them)."""

    def __init__(self, dataset: str | None = None, split: str = "train", start: int | None = None,
                 stop: int | None = None, allow_other_kg: bool = False, generator_share: float = GENERATOR_SHARE,
                 split_seed: int = SPLIT_SEED):
        super().__init__()
        self.allow_other_kg = allow_other_kg
        self._given = dataset is not None
        self.memory_spec = {"dataset": dataset, "split": split, "start": start, "stop": stop}
        self.portion = {"generator_share": generator_share, "split_seed": split_seed}
        self._memory: TemplateMemory | None = None

    def _remember(self, dataset: str, split: str) -> None:
        start, stop = self.memory_spec["start"], self.memory_spec["stop"]
        self.memory_spec = {"dataset": dataset, "split": split, "start": start, "stop": stop}
        if start is None and stop is None:
            self.memory_spec.update(self.portion)
            self._memory = portion_memory(dataset, split, **self.portion)
        else:
            self._memory = memory_for(dataset, split, start or 0, stop)
        self.options = {**self.options, "memory": self.memory_spec}

    def bind(self, binding: RunBinding) -> None:
        if self._given:
            self._check_kg(self.memory_spec["dataset"], binding.kg)
            if self._memory is None:
                self._remember(self.memory_spec["dataset"], self.memory_spec["split"])
        elif binding.training is not None:
            self._remember(*binding.training)

    def _check_kg(self, dataset: str, kg: Any) -> None:
        from sparqlab.data import dataset_kg

        other = dataset_kg(dataset)
        if other is not None and other != kg.profile.name and not self.allow_other_kg:
            raise ValueError(f"{self.name}'s memory dataset={dataset} is a dataset of the {other} KG but this run is "
                             f"on {kg.profile.name}: give --model-options dataset= a dataset of {kg.profile.name}, or "
                             "--model-options allow_other_kg=true to remember it anyway")

    @property
    def memory(self) -> TemplateMemory:
        if self._memory is None:
            if not self._given:
                raise ValueError(f"{self.name} has no questions to remember: run it inside a run whose dataset (or "
                                 "KG profile) has a train split, or give --model-options dataset=NAME")
            self._remember(self.memory_spec["dataset"], self.memory_spec["split"])
        return self._memory

    def describe(self) -> dict[str, Any]:
        remembered = ({"ids": self._memory.question_ids} if self._memory is not None and "split_seed" in self.memory_spec
                      else {})
        return {**super().describe(), "memory": {**self.memory_spec, **remembered}}


@register_standin("standin-knn")
class KnnGenerator(_Remembering):
    """Nearest-neighbour template generator (module docstring). Options: ``dataset``, ``split``, ``start``,
    ``stop`` — the remembered slice of questions (with gold SPARQL and bracketed topic entities); by default the
    generator's portion of the run's training split (``generator_share``, ``split_seed``) — and ``allow_other_kg``."""

    name = "standin-knn"

    def respond(self, request: ChatRequest) -> str:
        question = question_in(request.last_user_message)
        candidates = self.memory.candidates(question, k=1) if question else []
        return _fenced(candidates[0]) if candidates else NO_QUERY_REPLY


@register_standin("standin-corrector")
class NeighbourCorrector(_Remembering):
    """Feedback-driven template corrector (module docstring). Options: the memory slice as for ``standin-knn``,
    ``kg`` (the KG it checks candidates on; default the run's) and ``k`` (neighbours considered, default 5)."""

    name = "standin-corrector"

    def __init__(self, dataset: str | None = None, split: str = "train", start: int | None = None,
                 stop: int | None = None, kg: str | None = None, k: int = 5, allow_other_kg: bool = False,
                 generator_share: float = GENERATOR_SHARE, split_seed: int = SPLIT_SEED):
        super().__init__(dataset, split, start, stop, allow_other_kg, generator_share, split_seed)
        if k < 1:
            raise ValueError(f"k must be at least 1; got {k}")
        self.kg_name = kg
        self.k = k
        self._kg = None
        self._own_kg = False
        self._lock = threading.Lock()

    def bind(self, binding: RunBinding) -> None:
        super().bind(binding)
        if self.kg_name is None:
            self._kg = binding.kg
        elif self.kg_name != binding.kg.profile.name and not self.allow_other_kg:
            raise ValueError(f"standin-corrector would check candidates on {self.kg_name} but this run is on "
                             f"{binding.kg.profile.name}: leave --model-options kg out (the run's KG), or give "
                             "--model-options allow_other_kg=true")

    def _graph(self):
        with self._lock:
            if self._kg is None:
                if self.kg_name is None:
                    raise ValueError("standin-corrector has no KG to check candidates on: run it inside a run, or "
                                     "give --model-options kg=NAME")
                from sparqlab.kg import open_kg

                self._kg, self._own_kg = open_kg(self.kg_name, workers=1), True
            return self._kg

    def _non_empty(self, sparql: str) -> bool:
        try:
            return not self._graph().query(sparql).is_empty
        except KGError:
            return False

    def respond(self, request: ChatRequest) -> str:
        message = request.last_user_message
        question, generated = question_in(message), extract_sparql(message)
        if not question:
            return NO_QUERY_REPLY
        for candidate in self.memory.candidates(question, k=self.k, swaps=True):
            if not same_query(candidate, generated) and self._non_empty(candidate):
                return _fenced(candidate)
        return _fenced(generated) if generated else NO_QUERY_REPLY

    async def aclose(self) -> None:
        with self._lock:
            if self._kg is not None and self._own_kg:
                self._kg.close()
            self._kg, self._own_kg = None, False

    def describe(self) -> dict[str, Any]:
        kg = self.kg_name or (self._kg.profile.name if self._kg is not None else None)
        return {**super().describe(), "kg": kg, "k": self.k}
