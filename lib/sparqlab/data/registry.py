"""The benchmark names the workbench knows, their splits, :func:`load` and :func:`training_source`.

A name maps to one loader call per split over files in ``data/`` (see each folder's PROVENANCE.md). Anywhere a
name is accepted, a path works too: a JSONL file in the workbench's own format, or a folder of ``<split>.jsonl``
(docs/adding-a-dataset.md). Other packages add named datasets with :func:`register_dataset` from a module declared
as a ``sparqlab.datasets`` entry point.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from sparqlab.core.paths import data_dir
from sparqlab.core.plugins import DATASET_GROUP
from sparqlab.core.registry import Registry
from sparqlab.data.files import read_questions
from sparqlab.data.question import Question

SPLIT_ALIASES = {"val": "dev", "validation": "dev"}


@dataclass(frozen=True)
class Dataset:
    """A named benchmark: its KG, a one-line description, a loader per split (called lazily) and, for a
    multilingual one, its languages (a loader then takes ``language``: one of them, or ``None`` for all).

    ``paper_sizes``: per split, how many questions the specification papers evaluate (SAGA section 5);
    ``paper_rule``: the documented selection rule that comes nearest to that set (a ``RunConfig.select`` value),
    named when a run scores the published file instead (:func:`evaluation_set_note`).
    """

    name: str
    kg: str
    description: str
    splits: dict[str, Callable[..., list[Question]]]
    default_split: str = "test"
    languages: tuple[str, ...] = ()
    paper_sizes: dict[str, int] = field(default_factory=dict)
    paper_rule: str | None = None

    def load(self, split: str | None = None, language: str | None = None) -> list[Question]:
        """The questions of ``split`` (the default split when ``None``), in ``language`` if given."""
        split = _resolve_split(split, self.splits, self.default_split)
        if split not in self.splits:
            raise ValueError(f"dataset {self.name!r} has no split {split!r}; valid splits: {', '.join(self.splits)}"
                             + self._elsewhere(split))
        if not self.languages:
            if language is not None:
                raise ValueError(f"dataset {self.name!r} has one language; drop language={language!r}")
            return self.splits[split]()
        if language is not None and language not in self.languages:
            raise ValueError(f"dataset {self.name!r} has the languages {', '.join(self.languages)}; "
                             f"got language {language!r}")
        return self.splits[split](language=language)

    def _elsewhere(self, split: str) -> str:
        """Where the missing split can be found instead: the other datasets over the same KG that have it."""
        others = [name for name in DATASETS.names() if name != self.name and DATASETS.get(name).kg == self.kg
                  and split in DATASETS.get(name).splits]
        return f"; datasets over the {self.kg} KG with a {split!r} split: {', '.join(others)}" if others else ""


def evaluation_set_note(dataset: str | None, split: str | None, n_questions: int, select: str | None,
                        limit: int | None, sample: int | None) -> str | None:
    """A note when a run scores a different set than the paper's evaluation set of ``dataset``/``split``: the
    whole published split (no ``select``, ``limit`` or ``sample``) whose size is not the paper's; ``None`` when it
    is the paper's size, the dataset has no paper size, or the run chose its own subset."""
    if not dataset or dataset not in DATASETS or select or limit is not None or sample is not None:
        return None
    spec = DATASETS[dataset]
    paper = spec.paper_sizes.get(_resolve_split(split, spec.splits, spec.default_split))
    if paper is None or paper == n_questions:
        return None
    rule = f"; the documented rule nearest to it: --select {spec.paper_rule}" if spec.paper_rule else ""
    return (f"scores the published {dataset} {split or spec.default_split} file ({n_questions} questions), not the "
            f"paper's evaluation set ({paper}){rule} (docs/fidelity.md, 'Datasets')")


def _resolve_split(split: str | None, available: Collection[str], default: str) -> str:
    """``default`` for ``None``; ``val``/``validation`` mean ``dev`` unless the split exists under that name."""
    if split is None:
        return default
    return split if split in available else SPLIT_ALIASES.get(split, split)


def _metaqa(hops: int, split: str) -> list[Question]:
    from sparqlab.data.metaqa import load_metaqa

    return load_metaqa(hops, split)


def _qald(relative: str, grasp_ids: bool = False) -> list[Question]:
    from sparqlab.data.qald import load_qald

    return load_qald(data_dir() / relative, grasp_ids=grasp_ids)


def _grasp(relative: str) -> list[Question]:
    from sparqlab.data.grasp import load_grasp_jsonl

    return load_grasp_jsonl(data_dir() / relative)


def _sciqa() -> list[Question]:
    from sparqlab.data.grasp import load_grasp_jsonl

    return load_grasp_jsonl(data_dir() / "sciqa/grasp_test.jsonl", kg="orkg")


def _lcquad2_variant(form: str, split: str) -> list[Question]:
    from sparqlab.data.grasp import lcquad2_variant

    return lcquad2_variant(_grasp("lcquad2_wikidata/grasp_test.jsonl"), form, split)


def _json_list(relative: str, grasp_relative: str | None = None) -> list[Question]:
    from sparqlab.data.grasp import load_json_list

    grasp = None if grasp_relative is None else data_dir() / grasp_relative
    return load_json_list(data_dir() / relative, grasp_jsonl=grasp)


def _freebase(loader: str, *args: str) -> list[Question]:
    from sparqlab.data import freebase

    return getattr(freebase, loader)(*args)


def _own(relative: str) -> list[Question]:
    return read_questions(data_dir() / relative)


def _metaqa_dataset(hops: int) -> Dataset:
    return Dataset(
        f"metaqa-{hops}hop",
        "movies",
        f"MetaQA vanilla {hops}-hop test questions; gold SPARQL from the question type's relation path",
        {"test": partial(_metaqa, hops, "test")},
    )


DATASETS: Registry[Dataset] = Registry("dataset", group=DATASET_GROUP)
"""Named datasets: the bundled ones below, and those other packages register."""


def register_dataset(dataset: Dataset) -> Dataset:
    """Make ``dataset`` loadable by its name (``sparqlab run -d NAME``, :func:`load`)."""
    return DATASETS.register(dataset.name, dataset)


for _dataset in [
        _metaqa_dataset(1),
        _metaqa_dataset(2),
        _metaqa_dataset(3),
        Dataset(
            "mcqa-movies",
            "movies",
            "MCQA-style questions from the 64 MCQA templates over the movie KG (sparqlab data generate-mcqa)",
            {split: partial(_own, f"mcqa_movies/{split}.jsonl") for split in ("train", "dev", "test")},
        ),
        Dataset(
            "qald7",
            "wikidata",
            "QALD-7 task 4 (English, Wikidata) with gold answers",
            {
                "train": partial(_qald, "qald7_wikidata/qald-7-train-en-wikidata.json"),
                "test": partial(_qald, "qald7_wikidata/qald-7-test-en-wikidata.json", grasp_ids=True),
            },
            paper_sizes={"test": 45}, paper_rule="answerable",
        ),
        Dataset(
            "qald10",
            "wikidata",
            "QALD-10 test (Wikidata) with gold answers",
            {"test": partial(_qald, "qald10/qald_10.json", grasp_ids=True)},
            paper_sizes={"test": 383}, paper_rule="answerable",
        ),
        Dataset(
            "qald9plus",
            "wikidata",
            "QALD-9-plus (English, Wikidata) as copied by SPINACH; SPARQL only, no gold answers",
            {
                "train": partial(_json_list, "qald9plus_wikidata/train.json"),
                "test": partial(_json_list, "qald9plus_wikidata/test.json"),
            },
            paper_sizes={"test": 127}, paper_rule="answerable",
        ),
        Dataset(
            "wwq",
            "wikidata",
            "WikiWebQuestions as prepared by GRASP; gold answers for dev and test, SPARQL only for train",
            {
                "train": partial(_grasp, "wikiwebquestions/grasp_train.jsonl"),
                "dev": partial(_grasp, "wikiwebquestions/grasp_val.jsonl"),
                "test": partial(_grasp, "wikiwebquestions/grasp_test.jsonl"),
            },
            paper_sizes={"dev": 450, "test": 1409}, paper_rule="answerable",
        ),
        Dataset(
            "spinach",
            "wikidata",
            "SPINACH dataset (Wikidata 'Request a Query' questions); SPARQL only, no gold answers",
            {
                "dev": partial(_json_list, "spinach_dataset/dev.json"),
                "test": partial(_json_list, "spinach_dataset/test.json", "spinach_dataset/grasp_test.jsonl"),
            },
            paper_sizes={"dev": 149, "test": 156}, paper_rule="answerable",
        ),
        Dataset(
            "webqsp",
            "freebase",
            "WebQuestionsSP (Freebase): test = the 1,628 answered test questions (SAGA section 5), train 3,098",
            {"test": partial(_freebase, "load_webqsp", "test"), "train": partial(_freebase, "load_webqsp", "train")},
        ),
        Dataset(
            "cwq",
            "freebase",
            "ComplexWebQuestions 1.1 test (Freebase), 3,531 questions with answer MIDs",
            {"test": partial(_freebase, "load_cwq")},
        ),
        Dataset(
            "grailqa",
            "freebase",
            "GrailQA v1.0 (Freebase): the 1,000-question dev sample SAGA and ToG evaluate on",
            {"dev": partial(_freebase, "load_grailqa")},
            default_split="dev",
        ),
        Dataset(
            "freebase-fixture",
            "freebase",
            "Five questions in the WebQSP / CWQ / GrailQA formats over the Freebase-shaped fixture KG",
            {"test": partial(_freebase, "load_fixture")},
        ),
        Dataset(
            "lcquad2",
            "wikidata",
            "LC-QuAD 2.0 test (Wikidata) as prepared by GRASP; SPARQL only, no gold answers",
            {"test": partial(_grasp, "lcquad2_wikidata/grasp_test.jsonl")},
            paper_sizes={"test": 826}, paper_rule="answerable",
        ),
        Dataset(
            "sciqa",
            "orkg",
            "SciQA test (ORKG; GGC appendix D.2, Table 13) as prepared by GRASP: 513 questions, SPARQL only (the "
            "gold answers' file states no licence and is not shipped); needs an ORKG endpoint (--kg-url)",
            {"test": _sciqa},
        ),
        *(Dataset(
            f"lcquad2-{form}",
            "wikidata",
            f"LC-QuAD 2.0 {'Raw' if form == 'raw' else 'Ref'} (DeSQ Tables 3-7): the questions of the bundled test set "
            f"that have a usable paraphrase, worded as {'the verbalised question' if form == 'raw' else 'its paraphrase'}; "
            "every fifth is the test split, the rest train (sparqlab.data.grasp.lcquad2_variant)",
            {split: partial(_lcquad2_variant, form, split) for split in ("train", "test")},
        ) for form in ("raw", "ref")),
]:
    register_dataset(_dataset)


def dataset_names() -> list[str]:
    """The registered dataset names."""
    return DATASETS.names()


def load(name_or_path: str | Path, split: str | None = None, limit: int | None = None,
         language: str | None = None) -> list[Question]:
    """The questions of a named benchmark split, or of an own-format JSONL file / folder of ``<split>.jsonl``.

    ``split`` defaults to the dataset's default (``test``); for a single file it must be left ``None``.
    ``language`` picks one language of a multilingual dataset (``None``: all). ``limit`` keeps the first
    ``limit`` questions (file order).
    """
    if not Path(name_or_path).exists() and DATASETS.known(str(name_or_path)):
        questions = DATASETS.get(str(name_or_path)).load(split, language)
    else:
        if language is not None:
            raise ValueError(f"language={language!r} applies to a named multilingual dataset, not to {name_or_path}")
        questions = _load_path(Path(name_or_path), split)
    return questions if limit is None else questions[:limit]


def _load_path(path: Path, split: str | None) -> list[Question]:
    if path.is_file():
        if split is not None:
            raise ValueError(f"{path} is a single question file; it has no splits (drop split={split!r})")
        return read_questions(path)
    if path.is_dir():
        available = sorted(p.stem for p in path.glob("*.jsonl"))
        split = _resolve_split(split, available, "test")
        if split not in available:
            raise ValueError(f"{path} has no {split}.jsonl; splits found there: {', '.join(available) or 'none'}")
        return read_questions(path / f"{split}.jsonl")
    raise ValueError(
        f"{DATASETS.unknown_message(str(path))}; nor is it an existing JSONL file or folder of <split>.jsonl files"
    )


def splits_of(name_or_path: str | Path) -> list[str]:
    """The splits a dataset name or folder has (a single file has none)."""
    path = Path(name_or_path)
    if not path.exists() and DATASETS.known(str(name_or_path)):
        return list(DATASETS.get(str(name_or_path)).splits)
    return sorted(p.stem for p in path.glob("*.jsonl")) if path.is_dir() else []


def dataset_kg(name_or_path: str | Path, questions: Sequence[Question] = ()) -> str | None:
    """The KG a dataset is over: a named dataset's ``kg``, else the one KG its ``questions`` name (``None`` when
    they name none or several)."""
    if not Path(name_or_path).exists() and DATASETS.known(str(name_or_path)):
        return DATASETS.get(str(name_or_path)).kg
    names = {q.kg for q in questions if q.kg}
    return names.pop() if len(names) == 1 else None


TRAIN_SPLIT = "train"


def training_source(scored_dataset: str | None, scored_split: str | None,
                    kg_fallback: str | None) -> tuple[str, str] | None:
    """Where a method learns from when it is not told (GGC's gate, DeSQ's worked examples, stand-in memories):
    the ``train`` split of the scored dataset when it has one and it is not the split being scored; else the
    ``train`` split of ``kg_fallback`` (the run KG's profile's ``train_dataset``); ``None`` when neither exists."""
    if scored_dataset and scored_split != TRAIN_SPLIT and TRAIN_SPLIT in splits_of(scored_dataset):
        return str(scored_dataset), TRAIN_SPLIT
    if kg_fallback and TRAIN_SPLIT in splits_of(kg_fallback):
        return kg_fallback, TRAIN_SPLIT
    return None
