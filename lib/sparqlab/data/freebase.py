"""The Freebase benchmarks of SAGA Table 2 and DeSQ section 4: WebQSP, ComplexWebQuestions, GrailQA.

Each loader reads a dataset's own release format (copies in ``data/freebase/``, PROVENANCE.md there) into
:class:`Question` records with gold SPARQL, gold answers as Freebase IRIs (``ns:m.…``; value answers as their
lexical forms), ``kg="freebase"``:

- **WebQSP** (``WebQSP.{test,train}.json``, ``{"Questions": [{QuestionId, RawQuestion, Parses: [...]}]}``): the gold
  query and answers are those of the first parse (the dataset's own order; 1,815 parses for 1,639 test questions);
  every parse's query and answers stay in the withheld metadata. The test split keeps the 1,628 questions with at
  least one gold answer, the set SAGA section 5 evaluates. The topic entity is public (``topic_entities``): SAGA
  describes WebQSP as "test questions with annotated topic entities".
- **CWQ** (test only; dev and train were not available): gold SPARQL and answer MIDs from ChatKBQA's copy, topic
  entities and the answer name from ToG's copy of the same 3,531 records (SAGA reports 3,273 test questions without
  saying which were dropped). Neither paper gives CWQ's topic entities to the system: they are withheld metadata.
- **GrailQA** (``split="dev"``): ToG's 1,000-question sample of GrailQA v1.0 dev with gold answers, the set SAGA
  calls its 1,000 test questions. Topic entities, level, S-expression and graph query are withheld metadata.

``sparqlab data`` commands and the runner get these through :mod:`sparqlab.data.registry`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparqlab.data.forms import answer_form
from sparqlab.data.question import Question
from sparqlab.eval.normalise import answer_set
from sparqlab.graphs.freebase import freebase_dir, mid_to_iri, read_json_gz
from sparqlab.kg.results import Term

KG = "freebase"


def _answer(kind: str, argument: str) -> Any:
    """A gold answer as an RDF term (entities) or a lexical form (values: years, dates, numbers, names)."""
    return Term("uri", mid_to_iri(argument)) if kind.lower() == "entity" else argument


def _answers(items: list[tuple[str, str]]) -> list[str]:
    return sorted(answer_set(_answer(kind, argument) for kind, argument in items))


def _read(path: str | Path) -> Any:
    path = Path(path)
    if path.suffix == ".gz":
        return read_json_gz(path)
    import json

    if not path.is_file():
        raise FileNotFoundError(f"no such data file: {path} (see data/freebase/PROVENANCE.md)")
    return json.loads(path.read_text(encoding="utf-8"))


def webqsp_questions(data: dict[str, Any], *, answered_only: bool = False) -> list[Question]:
    """Questions of a WebQSP release object (``{"Questions": [...]}``); ``answered_only`` drops questions whose
    first parse has no answer."""
    questions = []
    for item in data["Questions"]:
        parses = item["Parses"]
        if not parses:
            continue
        first = parses[0]
        answers = _answers([(a["AnswerType"], a["AnswerArgument"]) for a in first.get("Answers") or ()])
        if answered_only and not answers:
            continue
        topic = first.get("TopicEntityMid")
        questions.append(Question(
            id=item["QuestionId"],
            text=item["RawQuestion"],
            gold_sparql=first["Sparql"],
            gold_answers=answers,
            answer_form=answer_form(first["Sparql"]),
            topic_entities=[mid_to_iri(topic)] if topic else [],
            kg=KG,
            metadata={
                "topic_entity_name": first.get("TopicEntityName"),
                "inferential_chain": first.get("InferentialChain"),
                "manual_sparql": first["Sparql"].lstrip().startswith("#MANUAL"),
                "answer_names": [a.get("EntityName") for a in first.get("Answers") or ()],
                "parses": [{"id": p["ParseId"], "sparql": p["Sparql"],
                            "answers": _answers([(a["AnswerType"], a["AnswerArgument"]) for a in p.get("Answers") or ()])}
                           for p in parses],
            },
        ))
    return questions


def load_webqsp(split: str = "test", path: str | Path | None = None,
                answered_only: bool | None = None) -> list[Question]:
    """WebQSP ``test`` (the 1,628 answered questions; ``answered_only=False``: all 1,639) or ``train`` (all
    3,098)."""
    path = path or freebase_dir() / "webqsp" / f"WebQSP.{split}.json.gz"
    return webqsp_questions(_read(path), answered_only=split == "test" if answered_only is None else answered_only)


def cwq_questions(records: list[dict[str, Any]], named: list[dict[str, Any]] | None = None) -> list[Question]:
    """CWQ records (``ID``, ``question``, ``sparql``, ``answer``: answer MIDs); ``named`` (ToG's copy, same IDs)
    adds the topic entities and the answer name as withheld metadata."""
    extra = {r["ID"]: r for r in named or ()}
    questions = []
    for record in records:
        other = extra.get(record["ID"], {})
        answers = record.get("answer")
        questions.append(Question(
            id=record["ID"],
            text=record["question"],
            gold_sparql=record["sparql"],
            gold_answers=None if answers is None else _answers([("Entity" if str(a)[:2] in ("m.", "g.") else "Value", a)
                                                                for a in answers]),
            answer_form=answer_form(record["sparql"]),
            kg=KG,
            metadata={
                "compositionality_type": record.get("compositionality_type"),
                "webqsp_id": record.get("webqsp_ID"),
                "topic_entity": other.get("topic_entity", {}),
                "answer_name": other.get("answer"),
            },
        ))
    return questions


def load_cwq(path: str | Path | None = None, named_path: str | Path | None = None) -> list[Question]:
    """CWQ 1.1 test: 3,531 questions."""
    base = freebase_dir() / "cwq"
    records = _read(path or base / "ComplexWebQuestions_test.chatkbqa.json.gz")
    named_path = named_path or (None if path else base / "cwq_test.tog.json.gz")
    return cwq_questions(records, _read(named_path) if named_path else None)


def grailqa_questions(records: list[dict[str, Any]]) -> list[Question]:
    """GrailQA v1.0 records (``qid``, ``question``, ``sparql_query``, ``answer``: [{answer_type,
    answer_argument, entity_name}], ``level``, ``s_expression``, ``graph_query``, ...)."""
    questions = []
    for record in records:
        answers = record.get("answer")
        questions.append(Question(
            id=str(record["qid"]),
            text=record["question"],
            gold_sparql=record["sparql_query"],
            gold_answers=None if answers is None else _answers(
                [(a["answer_type"], a["answer_argument"]) for a in answers]),
            answer_form=answer_form(record["sparql_query"]),
            kg=KG,
            metadata={
                "level": record.get("level"),
                "function": record.get("function"),
                "num_edge": record.get("num_edge"),
                "domains": record.get("domains"),
                "s_expression": record.get("s_expression"),
                "topic_entity": record.get("topic_entity", {}),
                "answer_names": [a.get("entity_name") for a in answers or ()],
            },
        ))
    return questions


def load_grailqa(path: str | Path | None = None) -> list[Question]:
    """GrailQA v1.0 dev, ToG's 1,000-question sample."""
    return grailqa_questions(_read(path or freebase_dir() / "grailqa" / "grailqa_dev_1000.tog.json.gz"))


def load_fixture() -> list[Question]:
    """The Freebase-shaped fixture's questions (``data/freebase/fixture/``), one file per dataset format."""
    folder = freebase_dir() / "fixture"
    return (webqsp_questions(_read(folder / "webqsp.json"), answered_only=True)
            + cwq_questions(_read(folder / "cwq.json")) + grailqa_questions(_read(folder / "grailqa.json")))
