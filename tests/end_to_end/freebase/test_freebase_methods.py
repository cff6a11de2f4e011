"""Every method end to end on the Freebase-shaped fixture behind a real ``oxigraph serve-read-only``: SPINACH and
SAGA (Freebase prompt variant) through the project's OpenAI-compatible server with ``standin-agent``, direct, GGC
(Freebase prompt variant) and DeSQ (Freebase id scheme, KB memory of the fixture) with their stand-ins."""

from __future__ import annotations

import pytest

from sparqlab.data import load
from sparqlab.methods import make_method
from sparqlab.runs import RunConfig, run

FB = "http://rdf.freebase.com/ns/"
CRASHES = {"method_error", "question_timeout"}


@pytest.fixture(scope="module")
def agent_url():
    import sparqlab.methods.agents  # noqa: F401  (registers standin-agent)
    from sparqlab.serving.model_server import serve_in_background

    with serve_in_background("standin-agent") as url:
        yield url


@pytest.fixture
def run_on_fixture(freebase_url, tmp_path, shared_search_cache):
    questions = load("freebase-fixture")

    def go(name: str, model: str, **options):
        extra = {key: options.pop(key) for key in ("model_url", "model_roles") if key in options}
        result = run(make_method(name, **options), questions, RunConfig(
            experiment=f"fb-{name}", kg="freebase", kg_url=freebase_url, model=model, progress=False,
            output_root=str(tmp_path / "runs"), cache_path=str(tmp_path / "responses.sqlite"), **extra))
        frame = result.predictions().set_index("id")
        assert result.metrics["n_done"] == len(questions) == len(frame)
        assert not set(frame["error_category"].dropna()) & CRASHES, frame["error_category"].tolist()
        return result, frame

    return go


@pytest.mark.slow
def test_agents_ground_a_freebase_relation_through_the_endpoint(run_on_fixture, agent_url):
    for name in ("spinach", "saga"):
        result, frame = run_on_fixture(name, "standin-agent", model_url=agent_url)
        cwq = frame.loc["fixture-cwq-1"]  # the one question with a capitalised mention the stand-in can search
        assert "ns:m.01428y ns:language.human_language.countries_spoken_in" in cwq["predicted_sparql"]
        assert cwq["predicted_answers"] == [FB + "m.03_r3"] and cwq["f1"] == 0.0  # Jamaica: a wrong but real row
        if name == "saga":
            assert (frame["model_calls"].map(lambda calls: calls.get("answer_type")) == 1).all()
            prompts = (result.run_dir / "traces.jsonl").read_text(encoding="utf-8")
            assert "ns:people.person" in prompts and "Freebase MIDs" in prompts  # the Freebase variant


@pytest.mark.slow
def test_direct_ggc_and_desq_run_on_the_fixture(run_on_fixture):
    _, direct = run_on_fixture("direct", "standin-keyword-rules")
    assert set(direct["error_category"]) == {"parse_failure"}  # the movie keyword rules know no Freebase relation
    result, ggc = run_on_fixture("ggc", "standin-keyword-rules", mode="all", variant="freebase",
                                 prompt={"kg_rules": True}, model_roles={"corrector": {"model": "standin-echo"}})
    traces = (result.run_dir / "traces.jsonl").read_text(encoding="utf-8")
    # the Freebase profile's query rules, asked for (the paper's prompt is the default)
    assert "dotted ids such as ns:location.country.languages_spoken" in traces
    _, desq = run_on_fixture("desq", "standin-desq", train_dataset="webqsp", train_split="train", train_limit=40,
                             embedder="hashing")
    assert desq["error_category"].isna().all()
    assert desq["predicted_sparql"].str.contains("PREFIX ns: <http://rdf.freebase.com/ns/>").all()
    # execution-free structural scores against the Freebase gold queries
    assert {"scores.structural_em", "scores.fragment_em_key", "scores.uri_id_em"} <= set(desq.columns)
    assert desq["scores.fragment_em_key"].max() > 0 and (desq["scores.uri_slots"] >= 2).all()
    # the gold decomposition grounds Freebase ids: MIDs, dotted relations, with the fixture's names
    assert '"id": "film.film_character.portrayed_in_films", "label": "Portrayed in films"' in \
        desq.loc["WebQTest-51", "scores.gold_output"]
