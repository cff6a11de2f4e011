"""Answer comparison as an explicit rule (iri / label / either), applied by the runner and recorded in metrics."""

import pytest

from sparqlab.eval.matching import match_either, resolve_mode
from sparqlab.methods import DirectSparql
from sparqlab.runs import RunConfig, run

DRUM = "http://sparqlab.org/movies/entity/Film/Drum"


@pytest.fixture(scope="module")
def movies():
    from sparqlab.graphs.movies import ensure_store
    from sparqlab.kg import open_kg

    ensure_store()
    with open_kg("movies") as kg:
        yield kg


def test_either_takes_the_gold_form_each_answer_matches(movies):
    assert match_either([DRUM], ["Drum"], movies) == ["Drum"]  # label-only gold
    assert match_either([DRUM], [DRUM], movies) == [DRUM]  # IRI gold
    # a wrong entity is written as the movie KG's rule writes it (its label), and stays wrong
    assert match_either([DRUM, "1999"], ["Bartleby", "1999"], movies) == ["1999", "Drum"]


def test_mode_defaults_to_the_profile_and_rejects_unknown(movies):
    assert resolve_mode(None, movies) == "label" and resolve_mode("either", movies) == "either"
    with pytest.raises(ValueError, match="iri, label, either"):
        resolve_mode("fuzzy", movies)
    with pytest.raises(ValueError, match="answer_match"):
        RunConfig(answer_match="fuzzy")


def test_runs_score_by_the_stated_rule_and_record_it(tmp_path, movies):
    settings = dict(kg="movies", dataset="metaqa-1hop", sample=10, sample_seed=2, model="standin-keyword-rules",
                    progress=False, output_root=str(tmp_path), cache_path=str(tmp_path / "responses.sqlite"))
    results = {mode: run(DirectSparql(), config=RunConfig(experiment=f"m-{mode}", answer_match=mode, **settings))
               for mode in ("iri", "label", "either")}
    default = run(DirectSparql(), config=RunConfig(experiment="m-default", **settings))
    assert {mode: r.metrics["answer_match"] for mode, r in results.items()} == {m: m for m in results}
    assert default.metrics["answer_match"] == "label" and default.run_id == results["label"].run_id
    assert results["label"].metrics["f1"] > 0
    assert results["either"].metrics["f1"] == pytest.approx(results["label"].metrics["f1"])
    assert results["iri"].metrics["f1"] < results["label"].metrics["f1"]  # MetaQA gold answers are names
