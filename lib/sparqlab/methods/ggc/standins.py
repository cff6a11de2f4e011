"""The GGC stand-ins: ``standin-knn`` (generator) and ``standin-corrector`` (corrector). Deterministic, offline,
and never LLM results (their runs are labelled ``[standin]``).

``standin-knn`` plays the paper's fine-tuned generator: it remembers part of a training split (by default the
second half of the MCQA-style train split, so that the first half is left for building gate and corrector
training data, as the paper splits its training set) and answers with the nearest remembered question's gold
query, re-filled with the new question's bracketed entities (:mod:`sparqlab.methods.ggc.template_memory`). On the MCQA-style test
split it is right about nine times in ten; its mistakes are other question types' queries (wrong relation,
constraint or structure) and swapped entity roles.

``standin-corrector`` plays the corrector. It reads the question and the generated query from the prompt and
returns the first of its own candidates — the ``k`` nearest templates, each filled in both entity orders — that
differs from the generated query and executes with a non-empty result on its KG; if none does, it returns the
generated query unchanged (as the paper's corrector prompt asks). It thus uses execution feedback and repairs
many wrong queries, but it also rewrites correct ones when they are routed to it — the over-correction a gate is
there to prevent. Its KG access goes through :meth:`KnowledgeGraph.query` like any generated SPARQL.

Note: the response cache keys on the request, not on a stand-in's options; give runs that use different
memories different ``cache_path`` values (or ``cache="off"``).
"""

from __future__ import annotations

import re
import threading
from typing import Any

from sparqlab.kg.errors import KGError
from sparqlab.llm import ChatRequest, StandinModel, register_standin
from sparqlab.methods.ggc.template_memory import memory_for, same_query
from sparqlab.platform.parsing import extract_sparql

DEFAULT_MEMORY = {"dataset": "mcqa-movies", "split": "train", "start": 2500, "stop": None}
"""The remembered questions: mcqa-movies train[2500:]; train[:2500] stays free for gate/corrector data."""

_QUESTION = re.compile(r"^Question:[ \t]*(.+)$", re.MULTILINE)
NO_QUERY_REPLY = "I could not find a query for this question."


def question_in(message: str) -> str | None:
    """The question of a GGC user turn (the line starting with ``Question:``)."""
    match = _QUESTION.search(message)
    return match.group(1).strip() if match else None


def _fenced(sparql: str) -> str:
    return f"```sparql\n{sparql.strip()}\n```"


@register_standin("standin-knn")
class KnnGenerator(StandinModel):
    """Nearest-neighbour template generator (module docstring). Options: ``dataset``, ``split``, ``start``,
    ``stop`` — the remembered slice of questions (with gold SPARQL and bracketed topic entities)."""

    name = "standin-knn"

    def __init__(self, dataset: str = DEFAULT_MEMORY["dataset"], split: str = DEFAULT_MEMORY["split"],
                 start: int = DEFAULT_MEMORY["start"], stop: int | None = DEFAULT_MEMORY["stop"]):
        super().__init__()
        self.memory_spec = {"dataset": dataset, "split": split, "start": start, "stop": stop}
        self.memory = memory_for(dataset, split, start, stop)

    def respond(self, request: ChatRequest) -> str:
        question = question_in(request.last_user_message)
        candidates = self.memory.candidates(question, k=1) if question else []
        return _fenced(candidates[0]) if candidates else NO_QUERY_REPLY

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "memory": self.memory_spec}


@register_standin("standin-corrector")
class NeighbourCorrector(StandinModel):
    """Feedback-driven template corrector (module docstring). Options: the memory slice as for ``standin-knn``,
    ``kg`` (the KG it checks candidates on, default ``movies``) and ``k`` (neighbours considered, default 5)."""

    name = "standin-corrector"

    def __init__(self, dataset: str = DEFAULT_MEMORY["dataset"], split: str = DEFAULT_MEMORY["split"],
                 start: int = DEFAULT_MEMORY["start"], stop: int | None = DEFAULT_MEMORY["stop"],
                 kg: str = "movies", k: int = 5):
        super().__init__()
        if k < 1:
            raise ValueError(f"k must be at least 1; got {k}")
        self.memory_spec = {"dataset": dataset, "split": split, "start": start, "stop": stop}
        self.memory = memory_for(dataset, split, start, stop)
        self.kg_name = kg
        self.k = k
        self._kg = None
        self._lock = threading.Lock()

    def _graph(self):
        with self._lock:
            if self._kg is None:
                from sparqlab.kg import open_kg

                self._kg = open_kg(self.kg_name, workers=1)
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
            if self._kg is not None:
                self._kg.close()
                self._kg = None

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "memory": self.memory_spec, "kg": self.kg_name, "k": self.k}
