"""Near-duplicates between a pool and the scored questions: `sparqlab leakage` and the runner's record of it."""

from __future__ import annotations

import json

import pytest

from sparqlab.data import registry
from sparqlab.runs.leakage import _closest_by_tokens, find_pairs, leakage_report, query_similarity, query_tokens


def test_query_normalisation_ignores_names_prefixes_and_comments():
    a = "PREFIX pv: <http://ld.company.org/prod-vocab/>\nSELECT ?x WHERE { ?x pv:memberOf ?d } # the department"
    b = "select ?dept where { ?dept pv:memberOf ?d2 }"
    assert query_tokens(a) == query_tokens(b) and query_similarity(a, b) == 1.0
    assert query_similarity(a, "SELECT ?x WHERE { ?x pv:hasManager ?d }") < 1.0
    assert query_similarity(a, None) == 0.0


def test_the_closest_query_by_shared_tokens_is_the_highest_jaccard_and_the_first_on_a_tie():
    pool = [["a", "b", "c", "d"], ["a", "b"], [], ["x", "y"], ["a", "b"]]
    test = [["a", "b"], ["a", "b", "c", "e"], ["x"], ["q"], [], ["a", "a", "b"]]
    # {a,b} equals pool 1 (and 4, later); {a,b,c,e} shares 3 of 5 with pool 0 but 2 of 4 with pool 1;
    # {x} shares half of pool 3; nothing shares {q}; a missing query has no match; repeats count once
    assert _closest_by_tokens(test, pool) == [1, 0, 3, None, None, 1]
    many = [[f"t{i}", f"t{i + 1}"] for i in range(600)]  # more test rows than one chunk
    assert _closest_by_tokens(many, many) == list(range(600))


def test_ck26_is_ck25_paraphrased_in_both_languages(capsys):
    from sparqlab.cli import main

    report = leakage_report(registry.load("ck25"), registry.load("ck26"), keep_pairs=None)
    assert report["n_test"] == 100 and report["same_query"] == 98  # 49 questions × 2 languages; 42 changed
    pairs = {p["test_id"]: p for p in report["pairs"]}
    assert all(p["query_pool_id"] == p["test_id"].replace("ck26", "ck25").rsplit("-", 1)[0] + "-en"
               for p in pairs.values() if p["query_similarity"] == 1.0)
    english = [p for p in find_pairs(registry.load("ck25"), registry.load("ck26", language="en"))]
    assert sum(p.pool_id == p.test_id.replace("ck26", "ck25") for p in english) >= 45  # the paraphrase is the closest
    assert sum(p.text_similarity is not None and p.text_similarity >= 0.8 for p in english) >= 35
    assert main(["leakage", "--pool", "ck25", "--test", "ck26", "--language", "en"]) == 0
    out = capsys.readouterr().out
    assert "ck26:1-en     ck25:1-en" in out and "of 50 test questions" in out


def test_an_unrelated_pool_has_no_near_duplicates():
    report = leakage_report(registry.load("mcqa-movies", "train")[:300], registry.load("ck26", language="en"))
    assert report["near_duplicates"] == 0 and report["pairs"] == []


def test_a_run_with_a_ck25_few_shot_pool_records_the_overlap_on_ck26(ck25_kg, tmp_path):
    from sparqlab.methods import make_method
    from sparqlab.runs import RunConfig, run

    method = make_method("direct", few_shot_dataset="ck25", few_shot_split="test",
                         few_shot_ids=["ck25:1-en", "ck25:2-en"])
    result = run(method, registry.load("ck26", language="en")[2:6], RunConfig(
        kg="ck25", model="standin-schema-rules", output_root=str(tmp_path), cache="off", progress=False),
        kg=ck25_kg)
    leakage = result.metrics["leakage"]["ck25:test"]
    assert leakage["n_pool"] == 50 and leakage["n_test"] == 4 and leakage["near_duplicates"] == 4
    assert {p["query_pool_id"] for p in leakage["pairs"]} == {"ck25:3-en", "ck25:4-en", "ck25:5-en", "ck25:6-en"}
    assert json.loads((result.run_dir / "metrics.json").read_text())["leakage"] == result.metrics["leakage"]
    plain = run(make_method("direct"), registry.load("ck26", language="en")[:1], RunConfig(
        kg="ck25", model="standin-schema-rules", output_root=str(tmp_path), cache="off", progress=False),
        kg=ck25_kg)
    assert "leakage" not in plain.metrics  # no pool, nothing to check


@pytest.fixture(scope="module")
def ck25_kg():
    from sparqlab.kg import open_kg

    kg = open_kg("ck25", cache=False)
    yield kg
    kg.close()
