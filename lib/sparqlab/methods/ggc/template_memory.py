"""Template memory behind the GGC stand-ins: training questions with gold queries, retrieved by sentence
similarity of the question with its topic entities masked, and re-filled with a new question's entities.

MCQA-style questions mark their topic entities in brackets (``[Wind]``). Masking them (``[X]``) makes the
nearest neighbour a question of the same *phrasing* rather than one about the same film; its gold query, with
its bracketed entities replaced by the new question's in order of appearance, is the prediction. Mistakes are
real: the neighbour may be another question type (wrong relation, constraint or structure), or the two
phrasings may name the entities in a different order (roles swapped).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sparqlab.core.hashing import stable_hash
from sparqlab.core.paths import cache_dir
from sparqlab.data.question import Question
from sparqlab.llm.embeddings import embed
from sparqlab.methods.ggc.split import generator_questions
from sparqlab.sparql.tree import quote_literal

BRACKET = re.compile(r"\[([^\[\]]+)\]")
MASK = "[X]"
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def bracketed(text: str) -> list[str]:
    """The bracketed topic entities of a question, in order of appearance."""
    return [m.strip() for m in BRACKET.findall(text)]


def mask_entities(text: str) -> str:
    """The question with every bracketed entity replaced by ``[X]``."""
    return BRACKET.sub(MASK, text)


def unescape_literal(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r"}.get(m.group(1), m.group(1)), body)


def fill_template(sparql: str, old: Sequence[str], new: Sequence[str]) -> str | None:
    """``sparql`` with every string literal equal to ``old[i]`` replaced by ``new[i]``; ``None`` when the two
    questions name different numbers of entities (the template does not fit)."""
    if len(old) != len(new) or not old:
        return None
    mapping = dict(zip(old, new, strict=True))
    return LITERAL.sub(lambda m: quote_literal(mapping[unescape_literal(m.group(1))])
                        if unescape_literal(m.group(1)) in mapping else m.group(0), sparql)


def same_query(a: str | None, b: str | None) -> bool:
    """Equal up to whitespace."""
    return a is not None and b is not None and " ".join(a.split()) == " ".join(b.split())


@dataclass(frozen=True)
class Template:
    """One remembered training question."""

    question_id: str
    text: str
    sparql: str
    entities: tuple[str, ...]


class TemplateMemory:
    """Remembered (question, gold query) pairs with masked-question embeddings (cached on disk per content)."""

    def __init__(self, questions: Sequence[Question]):
        self.question_ids = [q.id for q in questions]  # all it was given, also those it cannot use as templates
        self.templates = [Template(q.id, q.text, q.gold_sparql, tuple(bracketed(q.text)))
                          for q in questions if q.gold_sparql and bracketed(q.text)]
        if not self.templates:
            raise ValueError("a template memory needs questions with gold SPARQL and bracketed topic entities")
        self.vectors = _cached_embeddings([mask_entities(t.text) for t in self.templates])

    def __len__(self) -> int:
        return len(self.templates)

    def nearest(self, text: str, k: int) -> list[tuple[Template, float]]:
        """The ``k`` templates whose masked questions are most similar to ``text``'s, most similar first."""
        similarity = self.vectors @ embed(mask_entities(text))[0]
        order = np.argsort(-similarity, kind="stable")[:k]
        return [(self.templates[i], float(similarity[i])) for i in order]

    def candidates(self, text: str, k: int = 1, swaps: bool = False) -> list[str]:
        """Filled queries of the ``k`` nearest templates that fit ``text``'s entities, most similar first,
        without repeats; with ``swaps``, each template is also filled with the entities in reverse order."""
        entities = bracketed(text)
        found: list[str] = []
        for template, _ in self.nearest(text, k):
            orders = [entities, entities[::-1]] if swaps and len(entities) > 1 else [entities]
            for order in orders:
                query = fill_template(template.sparql, template.entities, order)
                if query is not None and not any(same_query(query, q) for q in found):
                    found.append(query)
        return found


def _cached_embeddings(texts: list[str]) -> np.ndarray:
    from sparqlab.llm.embeddings import MODEL_NAME

    path = cache_dir() / "ggc" / f"memory-{stable_hash([MODEL_NAME, texts], 16)}.npy"
    if path.exists():
        return np.load(path, allow_pickle=False)
    vectors = embed(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_save(path, vectors)
    return vectors


def _atomic_save(path: Path, array: np.ndarray) -> None:
    partial = path.with_suffix(f".{threading.get_ident()}.partial.npy")
    np.save(partial, array, allow_pickle=False)
    partial.replace(path)


_MEMORIES: dict[tuple, TemplateMemory] = {}
_LOCK = threading.Lock()


def _shared(key: tuple, choose: Callable[[], list[Question]], what: str) -> TemplateMemory:
    """The process-wide memory under ``key``, built once from ``choose()``; ``ValueError`` naming ``what`` when
    it chooses no question."""
    with _LOCK:
        if key not in _MEMORIES:
            questions = choose()
            if not questions:
                raise ValueError(f"no questions in {what} to remember")
            _MEMORIES[key] = TemplateMemory(questions)
        return _MEMORIES[key]


def memory_for(dataset: str, split: str, start: int = 0, stop: int | None = None) -> TemplateMemory:
    """The (process-wide, shared) memory of questions ``start:stop`` of ``dataset``/``split``."""
    from sparqlab.data import load

    return _shared((dataset, split, start, stop), lambda: load(dataset, split)[start:stop],
                   f"{dataset}/{split}[{start}:{stop}]")


def portion_memory(dataset: str, split: str, generator_share: float, split_seed: int) -> TemplateMemory:
    """The (process-wide, shared) memory of the generator's portion of ``dataset``/``split``
    (:func:`~sparqlab.methods.ggc.split.generator_questions`)."""
    from sparqlab.data import load

    return _shared((dataset, split, "generator portion", generator_share, split_seed),
                   lambda: generator_questions(load(dataset, split), generator_share, split_seed),
                   f"the generator's portion of {dataset}/{split} (generator_share={generator_share})")
