"""The method ``desq`` on the platform with ``standin-desq``, the stand-in itself, and the DeSQ commands."""

import json

import pytest

from sparqlab.cli import main
from sparqlab.llm.base import ChatRequest
from sparqlab.methods import get_method
from sparqlab.methods.desq import STRATEGIES, Desq, DesqConfig
from sparqlab.methods.desq.fragments import Decomposition, Fragment, Slot, scheme_for
from sparqlab.methods.desq.generation import (
    DesqStandin,
    Example,
    finetune_records,
    map_messages,
    parse_constraints,
)
from sparqlab.methods.desq.metrics import output_bleu
from sparqlab.methods.desq.structured import parse_output
from sparqlab.methods.desq.verbalise import verbalise_with_model


def test_config_is_typed_and_oracle_cannot_answer():
    assert get_method("desq") is Desq
    config = DesqConfig.from_options({"strategy": "combined", "threshold": "0.9"})
    assert config.strategy == "combined" and config.threshold == 0.9
    with pytest.raises(ValueError, match="gold ids"):
        Desq(strategy="oracle")
    with pytest.raises(ValueError, match="choose one of none, oracle, always-retrieve"):
        Desq(strategy="roundtrip")
    with pytest.raises(ValueError, match="memory"):
        Desq(memory="dbpedia")


def test_run_answers_with_one_strategy_and_scores_all_seven(isolated, movies_kg):
    from sparqlab.runs import RunConfig, run

    method = Desq(strategy="roundtrip-exact", train_limit=400, embedder="hashing")
    config = RunConfig(experiment="desq-test", kg="movies", dataset="mcqa-movies", split="test", limit=8,
                       model="standin-desq", progress=False)
    result = run(method, config=config)
    assert result.metrics["complete"] and result.metrics["model_is_standin"]
    predictions = result.predictions()
    assert len(predictions) == 8
    for strategy in STRATEGIES:
        for key in ("id_em", "final_em", "fixed", "broken"):
            assert f"scores.{strategy}.{key}" in predictions
    assert (predictions["scores.oracle.broken"] == 0).all()
    assert (predictions["scores.oracle.id_em"] >= predictions["scores.none.id_em"]).all()
    answered = predictions[predictions["error_category"].isna()]
    assert len(answered) > 0
    # the final query is the run strategy's assembly: its EM (§3.5) is that strategy's final EM
    assert (answered["scores.query_em"] == answered["scores.roundtrip-exact.final_em"]).all()
    assert predictions["scores.uri_label_em"].mean() > 0.5  # labels come from the question's mentions
    assert 0 < output_bleu(predictions) <= 1
    assert result.metrics["desq_bleu"] == pytest.approx(output_bleu(predictions))  # the paper's numbers, stored
    slots = predictions["scores.uri_slots"].where(predictions["scores.roundtrip-exact.id_em"].notna())
    assert result.metrics["desq_id_em_roundtrip_exact"] == pytest.approx(
        (predictions["scores.roundtrip-exact.id_em"] * slots).sum() / slots.sum())
    record = json.loads((result.run_dir / "predictions.jsonl").read_text().splitlines()[0])
    assert parse_output(record["extra"]["structured_output"]).usable
    # a second run reuses the memory and the gold decompositions (content-keyed artifacts), same run id
    again = run(Desq(strategy="roundtrip-exact", train_limit=400, embedder="hashing"), config=config)
    assert again.run_dir == result.run_dir and again.metrics["prepare"]["artifacts"] == \
        result.metrics["prepare"]["artifacts"]


def ridley_example() -> Example:
    return Example("train_0", "which films did [Ridley Scott] direct?", "", Decomposition(
        [Fragment("skeleton", "SELECT DISTINCT ?var1 WHERE {}", "We need ?var1"),
         Fragment("triple", "?var1 uri1 uri2", '?var1 has directed by "Ridley Scott"'),
         Fragment("filter", 'FILTER ( ?var1 != "Ridley Scott" )', "We need it not to be Ridley Scott")],
        [Slot("uri1", "relation/directed_by", "directed_by", "a director of the film"),
         Slot("uri2", "entity/Person/Ridley%20Scott", "Ridley Scott", "director of 12 films")]))


def test_standin_refills_the_nearest_example_for_the_new_question(movies_kg):
    example = ridley_example()
    messages = map_messages("which films did [Wind] direct?", ["We need ?var1"], [example], scheme_for("movies"))
    reply = DesqStandin(kg="movies").respond(ChatRequest.build("standin-desq", messages))
    parsed = parse_output(reply)
    assert parsed.problems == []
    assert parsed.fragments[1].constraint == '?var1 has directed by "Wind"'
    assert parsed.fragments[2].text == 'FILTER ( ?var1 != "Wind" )'
    relation, entity = parsed.slots
    assert relation == example.decomposition.slots[0]
    # plain label lookup: the first entity id labelled "Wind" (a film and a tag share the name), and the
    # description of the example entity's class
    assert entity.label == "Wind" and entity.id == "entity/Film/Wind"
    assert entity.description == "a person: actor, director or writer"
    # the lookup ignores case, as a search box would: a tag and a person sharing a name both match
    assert DesqStandin(kg="movies").lookup("adam sandler") == DesqStandin(kg="movies").lookup("Adam Sandler") == \
        "entity/Person/Adam%20Sandler"


def test_cli_eval_structural_and_desq_commands(isolated, movies_kg, capsys):
    gold = "SELECT ?a WHERE { ?a wdt:P31 wd:Q5 . ?a wdt:P27 ?c }"
    assert main(["eval", "structural", "--gold", gold, "--pred",
                 "select ?x { ?x wdt:P27 ?y ; wdt:P31 wd:Q5 }"]) == 0
    query_file = isolated / "pred.rq"
    query_file.write_text("select ?y { ?x wdt:P27 ?y ; wdt:P31 wd:Q5 }")
    assert main(["eval", "structural", "--gold", gold, "--pred", str(query_file)]) == 1
    assert capsys.readouterr().out.splitlines() == ["match", "no match"]

    assert main(["desq", "decompose", "--kg", "movies",
                 'SELECT ?l ?f WHERE { ?p rdfs:label "Ridley Scott" . ?f mrel:directed_by ?p ; rdfs:label ?l }']) == 0
    out = capsys.readouterr().out
    assert "[triple] ?var2 uri1 uri2" in out and "id=entity/Person/Ridley%20Scott" in out
    assert "AC: ?var2 has directed by \"Ridley Scott\"" in out

    assert main(["desq", "memory", "build", "--kg", "movies", "--embedder", "hashing", "--entities", "40",
                 "--out", str(isolated / "memory")]) == 0
    out = capsys.readouterr().out
    assert "built" in out and "entries     57  (entity 40, property 9, class 8)" in out and "index size" in out
    assert main(["desq", "memory", "build", "--kg", "movies", "--embedder", "hashing", "--entities", "40",
                 "--out", str(isolated / "memory")]) == 0
    assert capsys.readouterr().out.startswith("loaded")


def test_finetune_records_model_verbaliser_and_constraint_parsing():
    example = ridley_example()
    records = finetune_records([example], scheme_for("movies"))
    assert [r["messages"][-1]["role"] for r in records] == ["assistant", "assistant"]
    assert records[0]["messages"][-1]["content"].startswith("1. We need ?var1\n2. ?var1 has directed by")
    assert parse_output(records[1]["messages"][-1]["content"]).slots == example.decomposition.slots
    assert "Worked examples:\n\n\n" in records[1]["messages"][0]["content"]  # zero-shot, as fine-tuned

    replies = iter(["A film directed by Ridley Scott.\nextra line", "", "Not Ridley Scott himself."])

    async def chat(messages):
        assert "?var1" in messages[0]["content"]
        return next(replies)

    import asyncio

    decomposition = asyncio.run(verbalise_with_model(example.decomposition, "which films?", chat))
    assert [f.constraint for f in decomposition.fragments] == [
        "A film directed by Ridley Scott.", '?var1 has directed by "Ridley Scott"', "Not Ridley Scott himself."]
    assert parse_constraints("Sure:\n1. We need ?var1\n2) ?var1 has genre Drama\n- done") == [
        "We need ?var1", "?var1 has genre Drama", "done"]


def test_a_saved_memory_is_loaded_instead_of_built(isolated, movies_kg):
    from desq_helpers import MOVIE_ENTRIES, small_memory

    from sparqlab.data import load
    from sparqlab.methods.desq.method import evaluate_offline

    folder = small_memory(MOVIE_ENTRIES).save(isolated / "saved")
    method = Desq(memory_dir=str(folder), train_limit=30)
    records = evaluate_offline(method, load("mcqa-movies", "test", limit=2), movies_kg, "standin-desq",
                               progress=False)
    assert len(method.memory) == len(MOVIE_ENTRIES) and method.artifacts()["kb_memory"] == method.memory.digest
    assert [r["id"] for r in records] == ["test_0", "test_1"]
    assert all("scores.combined.final_em" in r and "extra.structured_output" in r for r in records)
