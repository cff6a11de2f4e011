"""answers_from_result against a real (tiny, embedded) KG: label mode maps IRIs to labels, IRI mode keeps them."""

from __future__ import annotations

import pytest

from sparqlab.eval import answers_from_result, fetch_labels, score_prediction
from sparqlab.kg import open_kg

TURTLE = """
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix e: <http://example.org/e/> .
@prefix r: <http://example.org/r/> .

e:heat rdfs:label "Heat" ; r:directed_by e:mann ; r:release_year e:y1995 .
e:thief rdfs:label "Thief" ; r:directed_by e:mann ; r:release_year e:y1981 .
e:collateral r:directed_by e:mann .
e:mann rdfs:label "Michael Mann" , "Mann, Michael"@en , "Michael Mann (Regisseur)"@de .
e:y1995 rdfs:label "1995" .
e:y1981 rdfs:label "1981"@de .
"""

DIRECTED = ("SELECT ?film ?filmLabel WHERE { ?film <http://example.org/r/directed_by> ?d . "
            "OPTIONAL { ?film <http://www.w3.org/2000/01/rdf-schema#label> ?filmLabel } }")


@pytest.fixture(scope="module")
def ttl(tmp_path_factory):
    path = tmp_path_factory.mktemp("kg") / "films.ttl"
    path.write_text(TURTLE, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def label_kg(ttl):
    return open_kg(ttl, profile="movies", cache=False)


@pytest.fixture(scope="module")
def iri_kg(ttl):
    return open_kg(ttl, cache=False)


def test_label_mode_maps_iris_to_labels(label_kg):
    assert label_kg.profile.answer_key == "label"
    result = label_kg.query(DIRECTED)
    # e:collateral has no label and stays an IRI; ?filmLabel is a companion of ?film and not an answer
    assert answers_from_result(result, label_kg) == {"Heat", "Thief", "http://example.org/e/collateral"}


def test_label_mode_prefers_untagged_then_english_labels(label_kg):
    labels = fetch_labels(label_kg, ["http://example.org/e/mann", "http://example.org/e/y1981",
                                     "http://example.org/e/y1995", "http://example.org/e/nothing"])
    assert labels == {"http://example.org/e/mann": "Michael Mann", "http://example.org/e/y1995": "1995"}


def test_label_mode_batches_lookups(label_kg, monkeypatch):
    queries = []
    original = type(label_kg).query

    def counting(self, sparql, **options):
        queries.append(sparql)
        return original(self, sparql, **options)

    monkeypatch.setattr(type(label_kg), "query", counting)
    iris = [f"http://example.org/e/x{i}" for i in range(5)] + ["http://example.org/e/heat"]
    assert fetch_labels(label_kg, iris) == {"http://example.org/e/heat": "Heat"}
    assert len(queries) == 1
    queries.clear()
    assert fetch_labels(label_kg, iris, batch_size=2) == {"http://example.org/e/heat": "Heat"}
    assert len(queries) == 3


def test_label_answers_score_against_name_gold_answers(label_kg):
    years = label_kg.query("SELECT ?y WHERE { ?f <http://example.org/r/release_year> ?y }")
    predicted = answers_from_result(years, label_kg)
    # 1981's only label is German, so that year stays an IRI and misses
    assert predicted == {"1995", "http://example.org/e/y1981"}
    assert score_prediction(predicted, ["1995", "1981"])["f1"] == pytest.approx(0.5)


def test_iri_mode_keeps_iris(iri_kg):
    assert iri_kg.profile.answer_key == "iri"
    answers = answers_from_result(iri_kg.query(DIRECTED), iri_kg)
    assert answers == {f"http://example.org/e/{f}" for f in ("heat", "thief", "collateral")}
    assert answers_from_result(iri_kg.query("ASK { ?f <http://example.org/r/directed_by> ?d }"), iri_kg) == {"true"}
