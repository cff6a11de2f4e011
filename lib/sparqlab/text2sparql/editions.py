"""The four TEXT2SPARQL datasets (CK25, DB25, CK26, DB26) as the organisers publish them.

Each edition is a questions YAML (``dataset: {id, prefix}``, ``questions: [{id, question: {lang: text}, query:
{sparql}, features?}]``) and the **true result set** the organisers scored every system against (``{qname: {value:
1}}``, an ASK as ``{"true": 1|0}``; CK26 adds ``order_required``). A question asked in one language is one
*qname*, ``{prefix}:{id}-{language}``, and the loader turns each qname into one :class:`Question`: its text in
that language, the reference query as ``gold_sparql``, the official true result set as ``gold_answers``. The
true result set is the gold; re-executing the reference queries elsewhere can give other sets (docs/ck25.md).

``language`` selects one language of a multilingual edition (``None``: every qname, in the files' order, which
is how the organisers evaluate). Features, classes and properties are withheld metadata (they describe the gold
query). Files and licences: ``data/ck25/PROVENANCE.md`` and ``data/text2sparql/PROVENANCE.md``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from sparqlab.core.paths import data_dir
from sparqlab.data.files import require_file
from sparqlab.data.question import Question
from sparqlab.data.registry import Dataset, register_dataset
from sparqlab.text2sparql.metric import OFFICIAL_METRIC

ORDER_FEATURE = "RESULT_ORDER_MATTERS"
"""The feature flag of questions whose answer order the official evaluation scores with nDCG."""

ORDER_REQUIRED = "order_required"
"""The key of a 2026 true result set listing the order-sensitive qnames (not a question)."""


@dataclass(frozen=True)
class Edition:
    """One TEXT2SPARQL dataset: name (= the qname prefix), challenge year, dataset IRI, the KG its queries run
    on, its languages, where its questions and true result set are under ``data/``, and the one line
    ``sparqlab data list`` shows for it."""

    name: str
    year: int
    iri: str
    kg: str
    languages: tuple[str, ...]
    questions_file: str
    true_result_set: str
    description: str

    def folder(self) -> Path:
        return data_dir() / Path(self.questions_file).parent

    def check_language(self, language: str | None) -> None:
        if language is not None and language not in self.languages:
            raise ValueError(f"dataset {self.name} has the languages {', '.join(self.languages)}; "
                             f"got language {language!r}")


EDITIONS: dict[str, Edition] = {edition.name: edition for edition in (
    Edition("ck25", 2025, "https://text2sparql.aksw.org/2025/corporate/", "ck25", ("en",),
            "ck25/questions.yml", "ck25/ck25_true_result_set.json",
            "TEXT2SPARQL'25 corporate KG questions (50, English); gold = the challenge's official true result set"),
    Edition("db25", 2025, "https://text2sparql.aksw.org/2025/dbpedia/", "dbpedia", ("en", "es"),
            "text2sparql/db25/questions_db25.yaml", "text2sparql/db25/db25_true_result_set.json",
            "TEXT2SPARQL'25 DBpedia: 100 questions in English and Spanish (200 qnames); gold = the official true "
            "result set"),
    Edition("ck26", 2026, "https://text2sparql.aksw.org/2026/corporate/", "ck25", ("en", "de"),
            "text2sparql/ck26/questions_ck26.yml", "text2sparql/ck26/ck26_true_result_set.json",
            "TEXT2SPARQL'26 corporate: CK25's 50 questions paraphrased, English and German (100 qnames), on the "
            "CK25 KG; gold = the official true result set"),
    Edition("db26", 2026, "https://text2sparql.aksw.org/2026/dbpedia/", "dbpedia", ("en", "es"),
            "text2sparql/db26/questions_db26.yml", "text2sparql/db26/db26_true_result_set.json",
            "TEXT2SPARQL'26 DBpedia: 50 new questions in English and Spanish (100 qnames); gold = the official "
            "true result set"),
)}
"""The editions by name. CK26 paraphrases CK25's questions and runs on the same corporate KG (``ck25``)."""

DATASET_IRIS = {edition.iri: edition.name for edition in EDITIONS.values()}
"""Dataset IRI (what a client sends as ``dataset``) -> edition name."""


def edition(name: str) -> Edition:
    """The edition named ``name`` (a qname prefix); an unknown name is an error listing the known ones."""
    if name not in EDITIONS:
        raise ValueError(f"unknown TEXT2SPARQL dataset {name!r}; known: {', '.join(EDITIONS)}")
    return EDITIONS[name]


def edition_of(questions: list[Question]) -> Edition:
    """The edition a question list belongs to (from its qnames' prefix)."""
    prefixes = {q.id.partition(":")[0] for q in questions}
    if len(prefixes) != 1:
        raise ValueError(f"questions of one TEXT2SPARQL dataset expected; qname prefixes found: {sorted(prefixes)}")
    return edition(prefixes.pop())


def qname(prefix: str, number: int | str, language: str = "en") -> str:
    """The challenge's question name, ``{prefix}:{id}-{language}`` (what the client's ``ask`` output carries)."""
    return f"{prefix}:{number}-{language}"


def gold_from_result_set(values: dict[str, int], ask: bool) -> list[str]:
    """An official result-set entry as gold answers: an ASK's ``{"true": r}`` is ``["true"]`` if ``r`` else
    ``["false"]``; a SELECT's keys are its values (all relevance 1)."""
    if ask:
        return ["true" if values.get("true") else "false"]
    return [value for value, relevance in values.items() if relevance]


def is_ask(item: dict[str, Any]) -> bool:
    """An ASK question: flagged ``ASK`` (CK25/CK26/DB26) or, where the file has no features (DB25), a reference
    query with ASK and no SELECT."""
    if "features" in item:
        return "ASK" in item["features"]
    sparql = item["query"]["sparql"]
    return bool(re.search(r"\bASK\b", sparql, re.IGNORECASE)) and not re.search(r"\bSELECT\b", sparql,
                                                                                    re.IGNORECASE)


def read_true_result_set(path: Path) -> dict[str, dict[str, int]]:
    """A true (or system) result-set file: ``{qname: {value: relevance}}``; ``order_required`` is dropped."""
    data = json.loads(require_file(path).read_text(encoding="utf-8"))
    return {key: value for key, value in data.items() if key != ORDER_REQUIRED}


def load_edition(name: str, language: str | None = None, folder: str | Path | None = None) -> list[Question]:
    """The qnames of edition ``name`` (one ``language``, or all), the official true result set as gold.

    ``folder`` replaces the data folder holding the questions and true result set (tests)."""

    from sparqlab.core.yaml_loader import load_yaml_file

    spec_edition = edition(name)
    spec_edition.check_language(language)
    questions_path = Path(folder) / Path(spec_edition.questions_file).name if folder else \
        data_dir() / spec_edition.questions_file
    true_path = Path(folder) / Path(spec_edition.true_result_set).name if folder else \
        data_dir() / spec_edition.true_result_set
    spec = load_yaml_file(require_file(questions_path))
    official = read_true_result_set(true_path)
    prefix = spec["dataset"]["prefix"]
    if prefix != name:
        raise ValueError(f"{questions_path} declares the prefix {prefix!r}, expected {name!r}")
    questions = []
    for item in spec["questions"]:
        features = list(item.get("features", []))
        ask = is_ask(item)
        for lang in spec_edition.languages if language is None else (language,):
            if lang not in item["question"]:
                raise ValueError(f"{questions_path}: question {item['id']} has no {lang!r} text")
            name_ = qname(prefix, item["id"], lang)
            if name_ not in official:
                raise ValueError(f"{true_path}: no entry for {name_}")
            questions.append(Question(
                id=name_,
                text=item["question"][lang],
                gold_sparql=item["query"]["sparql"],
                gold_answers=gold_from_result_set(official[name_], ask),
                answer_form="ask" if ask else "select",
                kg=spec_edition.kg,
                metadata={"dataset": spec["dataset"]["id"], "language": lang, "features": features,
                          "classes": list(item.get("classes", [])),
                          "properties": list(item.get("properties", [])),
                          "order_matters": ORDER_FEATURE in features, "official_metric": OFFICIAL_METRIC,
                          "edition": spec_edition.year},
            ))
    return questions


FUNCTION_WORDS = {
    "en": {"the", "which", "what", "who", "is", "are", "of", "in", "how", "many", "does", "do", "did", "and", "for",
           "with", "our", "me", "give", "was", "has", "have"},
    "de": {"der", "die", "das", "welche", "welcher", "welches", "wer", "ist", "sind", "von", "wie", "viele", "und",
           "mit", "für", "unsere", "gib", "mir", "hat", "haben", "den", "dem", "des", "ein", "eine", "zu"},
    "es": {"el", "la", "los", "las", "qué", "quién", "quiénes", "cuál", "cuáles", "es", "son", "de", "del", "en",
           "cuántos", "cuántas", "y", "con", "para", "nuestro", "dame", "fue", "tiene", "un", "una"},
}
"""Frequent function words of the challenge's languages, for telling which one a question is asked in."""


def question_language(text: str, languages: tuple[str, ...]) -> str | None:
    """The language among ``languages`` whose function words ``text`` uses most (``None`` when none is used, or
    two tie): the TEXT2SPARQL API sends the question text and the dataset IRI, not the language."""
    words = [w.strip("¿?¡!.,;:()\"'") for w in text.casefold().split()]
    counts = {lang: sum(w in FUNCTION_WORDS.get(lang, ()) for w in words) for lang in languages}
    best = max(counts.values(), default=0)
    winners = [lang for lang, count in counts.items() if count == best]
    return winners[0] if best and len(winners) == 1 else None


def read_answers(path: str | Path) -> list[dict[str, Any]]:
    """The entries of a client ``ask`` output file, each checked: an object with a string ``qname`` and a
    ``query`` (string, or null for a question the system did not answer). Errors name the file and the entry."""
    path = Path(path)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON: {error}") from None
    if not isinstance(entries, list):
        raise ValueError(f"{path} must hold a JSON list of answers (the client's `ask` output), "
                         f"got {type(entries).__name__}")
    for number, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("qname"), str):
            raise ValueError(f"{path}, entry {number}: expected an object with a string 'qname', got {entry!r:.80}")
        if not isinstance(entry.get("query"), str | None):
            raise ValueError(f"{path}, entry {number} ({entry['qname']}): 'query' must be a string or null")
    return entries


for _edition in EDITIONS.values():  # a sparqlab.datasets module (sparqlab.core.plugins): the editions by name
    register_dataset(Dataset(_edition.name, _edition.kg, _edition.description,
                             {"test": partial(load_edition, _edition.name)}, languages=_edition.languages))
