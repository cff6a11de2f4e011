"""Every registered benchmark loads into sane Question records; the own format round-trips; bad input is
explained."""

import json

import pytest

from sparqlab.data import DATASETS, Question, dataset_names, load, read_questions, write_questions
from sparqlab.data.forms import answer_form
from sparqlab.data.metaqa import load_metaqa

# Upstream counts (data/*/PROVENANCE.md) and whether the split ships gold answers.
EXPECTED = [
    ("metaqa-1hop", "test", 9947, True),
    ("metaqa-2hop", "test", 14872, True),
    ("metaqa-3hop", "test", 14274, True),
    ("qald7", "train", 100, True),
    ("qald7", "test", 50, True),
    ("qald10", "test", 394, True),
    ("qald9plus", "train", 371, False),
    ("qald9plus", "test", 136, False),
    ("wwq", "train", 2431, False),
    ("wwq", "dev", 454, True),
    ("wwq", "test", 1431, True),
    ("spinach", "dev", 155, False),
    ("spinach", "test", 165, False),
    ("lcquad2", "test", 5715, False),
    ("sciqa", "test", 513, False),
    ("lcquad2-raw", "train", 3612, False),
    ("lcquad2-raw", "test", 904, False),
    ("lcquad2-ref", "train", 3612, False),
    ("lcquad2-ref", "test", 904, False),
    ("webqsp", "test", 1628, True),
    ("webqsp", "train", 3098, True),
    ("cwq", "test", 3531, True),
    ("grailqa", "dev", 1000, True),
    ("freebase-fixture", "test", 5, True),
    ("ck25", "test", 50, True),
    ("ck26", "test", 100, True),
    ("db25", "test", 200, True),
    ("db26", "test", 100, True),
]


def test_every_registered_split_has_an_expectation():
    covered = {(name, split) for name, split, _, _ in EXPECTED} | {
        ("mcqa-movies", s) for s in ("train", "dev", "test")
    }
    assert covered == {(name, split) for name in dataset_names() for split in DATASETS[name].splits}


@pytest.mark.parametrize(("name", "split", "count", "has_gold"), EXPECTED)
def test_split_loads_with_upstream_count(name, split, count, has_gold):
    questions = load(name, split=split)
    assert len(questions) == count
    assert len({q.id for q in questions}) == count
    assert all(q.text.strip() and q.gold_sparql and q.kg == DATASETS[name].kg for q in questions)
    if has_gold:
        assert all(q.gold_answers for q in questions if q.answer_form != "select") and all(
            q.gold_answers is not None for q in questions
        )
    else:
        assert all(q.gold_answers is None for q in questions)


def test_mcqa_movies_splits_load_and_cover_all_question_types():
    for split in ("train", "dev", "test"):
        questions = load("mcqa-movies", split=split)
        assert questions, split
        assert len({q.metadata["qtype"] for q in questions}) == 64
        assert all(1 <= len(q.gold_answers) <= 10 and q.kg == "movies" for q in questions)


def test_qald_answer_forms_follow_the_gold_result():
    questions = load("qald10") + load("qald7", split="train") + load("qald7")
    for question in questions:
        gold = question.metadata["gold_result"]
        if "boolean" in gold:
            assert question.answer_form == "ask"
            assert question.gold_answers == [str(gold["boolean"]).lower()]
        elif question.answer_form == "count":
            (value,) = question.gold_answers
            assert value.isdigit(), question.id
    assert {q.answer_form for q in questions} == {"select", "ask", "count"}


def test_qald_gold_answers_are_the_normalised_bindings():
    question = next(q for q in load("qald7") if q.id == "1")
    iris = {row["uri"]["value"] for row in question.metadata["gold_result"]["results"]["bindings"]}
    assert set(question.gold_answers) == iris
    assert question.metadata["grasp_id"] == "test_0"


def test_wwq_gold_rows_become_a_sparql_json_result():
    question = load("wwq", split="dev")[0]
    result = question.metadata["gold_result"]
    assert result["head"]["vars"] and result["results"]["bindings"]
    assert set(question.gold_answers) == {
        c["value"] for row in result["results"]["bindings"] for c in row.values()
    }


def test_spinach_test_questions_carry_grasp_ids_and_sparql():
    questions = load("spinach")
    assert [q.metadata["grasp_id"] for q in questions] == [f"test_{i}" for i in range(len(questions))]
    assert all(q.metadata["grasp_sparql"] for q in questions)
    assert all("grasp_id" not in q.metadata for q in load("spinach", split="dev"))


def test_metaqa_records_name_topic_entity_and_relation_path():
    question = load("metaqa-2hop", limit=1)[0]
    assert f"[{question.topic_entities[0]}]" in question.text
    assert question.metadata["hops"] == 2 and len(question.metadata["relation_path"]) == 2
    assert all(f'"{relation}"' in question.gold_sparql for relation in question.metadata["relation_path"])


@pytest.mark.parametrize(
    ("sparql", "form"),
    [
        ("PREFIX wd: <http://www.wikidata.org/entity/> ASK { wd:Q1 ?p ?o }", "ask"),
        ("# comment\nask { ?s ?p ?o }", "ask"),
        ("SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x ?p ?o }", "count"),
        ("PREFIX a: <http://a/> SELECT DISTINCT (count(?x) as ?c) { ?x ?p ?o }", "count"),
        ("SELECT ?x WHERE { { SELECT (COUNT(?y) AS ?c) WHERE { ?y ?p ?o } } BIND(?c AS ?x) }", "select"),
        ("SELECT ?x WHERE { ?x ?p ?o } GROUP BY ?x ORDER BY DESC(COUNT(?o)) LIMIT 1", "select"),
        ("SELECT ?x (COUNT(?o) AS ?n) WHERE { ?x ?p ?o } GROUP BY ?x", "select"),
        ("ASK { { SELECT (COUNT(?s) AS ?c) WHERE { ?s ?p ?o } } FILTER(?c > 1) }", "ask"),
    ],
)
def test_answer_form_reads_the_outer_query(sparql, form):
    assert answer_form(sparql) == form


def test_own_format_file_round_trips(tmp_path):
    original = load("qald7", limit=5) + load("metaqa-1hop", limit=3)
    path = tmp_path / "mine.jsonl"
    write_questions(path, original)
    assert [q.to_dict() for q in load(path)] == [q.to_dict() for q in original]
    assert [q.to_dict() for q in load(str(path), limit=2)] == [q.to_dict() for q in original[:2]]


def test_own_format_folder_of_splits(tmp_path):
    write_questions(tmp_path / "dev.jsonl", [Question("a", "first?")])
    write_questions(tmp_path / "test.jsonl", [Question("b", "second?", gold_answers=["x"])])
    assert [q.id for q in load(tmp_path)] == ["b"]
    assert [q.id for q in load(tmp_path, split="val")] == ["a"]
    with pytest.raises(ValueError, match="splits found there: dev, test"):
        load(tmp_path, split="train")


def test_own_format_reports_the_bad_record(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "1", "text": "ok"}) + "\n\n" + json.dumps({"text": "no id"}) + "\n")
    with pytest.raises(ValueError, match=r"bad.jsonl, line 3: .*'id' and 'text'"):
        read_questions(path)


@pytest.mark.parametrize(
    ("last_line", "message"),
    [
        ('{"id": "2", "text": "cut off', "line 2: not valid JSON"),
        ('["2", "a list"]', "line 2: expected a JSON object"),
        ('{"id": "2", "text": "q", "gold_answers": "Paris"}', "line 2: 'gold_answers' must be a list"),
        ('{"id": "2", "text": "q", "answer_form": "SELECT"}', "line 2: 'answer_form' must be one of select"),
        ('{"id": "2", "text": "q", "topic_entities": "Paris"}', "line 2: 'topic_entities' must be a list"),
        ('{"id": "2", "text": "q", "metadata": [1], "x": 1}', "line 2: 'metadata' must be a JSON object"),
    ],
)
def test_own_format_refuses_a_bad_last_line_instead_of_dropping_it(tmp_path, last_line, message):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"id": "1", "text": "ok"}) + "\n" + last_line, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load(path)


def test_unknown_keys_go_into_metadata():
    question = Question.from_dict({"id": 7, "text": "q", "metadata": {"a": 1}, "source": "mine"})
    assert question.id == "7" and question.metadata == {"a": 1, "source": "mine"}
    assert question.gold_answers is None and question.answer_form == "select"


def test_metaqa_names_a_malformed_line(tmp_path):
    folder = tmp_path / "1-hop"
    folder.mkdir()
    (folder / "qa_test_qtype.txt").write_text("movie_to_director\nmovie_to_director\n", encoding="utf-8")
    (folder / "qa_test.txt").write_text("who directed [Wind]\tCarroll Ballard\n[Alien]\tRidley Scott\n",
                                        encoding="utf-8")
    assert [q.gold_answers for q in load_metaqa(1, root=tmp_path)] == [["Carroll Ballard"], ["Ridley Scott"]]
    (folder / "qa_test.txt").write_text("who directed [Wind]\tCarroll Ballard\nno tab here\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"qa_test.txt:2: expected question<TAB>"):
        load_metaqa(1, root=tmp_path)


def test_split_given_for_a_single_file_is_refused(tmp_path):
    path = tmp_path / "q.jsonl"
    write_questions(path, [Question("a", "q?")])
    with pytest.raises(ValueError, match="no splits"):
        load(path, split="test")


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError) as error:
        load("qald-11")
    assert all(name in str(error.value) for name in dataset_names())


def test_unknown_split_lists_the_valid_ones():
    with pytest.raises(ValueError, match="valid splits: train, dev, test"):
        load("wwq", split="validate")


def test_val_is_an_alias_of_dev():
    assert [q.id for q in load("wwq", split="val", limit=3)] == [q.id for q in load("wwq", split="dev", limit=3)]


def test_sciqa_loads_its_513_test_questions_over_orkg_and_needs_an_endpoint(tmp_path, monkeypatch):
    """SciQA (GGC Table 13) ships the GRASP-normalised test questions (Apache-2.0) without gold answers (their file
    states no licence); a run without an ORKG endpoint stops with an error naming the option."""
    from sparqlab.data import load
    from sparqlab.methods.ggc import GGC
    from sparqlab.runs import RunConfig, run

    questions = load("sciqa")
    assert len(questions) == 513 and {q.kg for q in questions} == {"orkg"}
    assert all(q.gold_sparql and q.gold_answers is None for q in questions)
    assert "PREFIX orkgp: <http://orkg.org/orkg/predicate/>" in questions[0].gold_sparql
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path))
    with pytest.raises(ValueError, match=r"'orkg' is not bundled and has no default endpoint.*--kg-url URL"):
        run(GGC(mode="none"), config=RunConfig(dataset="sciqa", model="standin-knn", limit=2, progress=False))
