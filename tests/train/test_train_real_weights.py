"""Real weights through the fine-tuning pipeline: the bundled SmolLM2-135M GGUF converted once into the cache, a
few LoRA steps on MetaQA records of the shared prompt, the adapter merged, written back to GGUF and served by the
real llama.cpp server, which then answers in the trained format; the held-out split and the prompt the direct
method shares with the training records."""

from __future__ import annotations

import json

import pytest

from sparqlab.core.hashing import file_digest
from sparqlab.data.question import Question
from sparqlab.data.registry import load
from sparqlab.data.sampling import disjoint_from, sample_questions
from sparqlab.methods.direct.method import DirectConfig, build_messages
from sparqlab.train.data import build_from_dataset


def _question(qid: str, text: str, *entities: str) -> Question:
    return Question(qid, text, "SELECT * WHERE { ?s ?p ?o }", topic_entities=list(entities), kg="movies")


def test_training_questions_share_no_id_text_or_topic_entity_with_the_scored_sample():
    held = [_question("a", "who directed [Alien]", "Alien")]
    rest = [_question("a", "other text", "Heat"), _question("b", "Who directed [Alien] ", "Ridley"),
            _question("c", "films of [alien]", "alien"), _question("d", "who starred in [Heat]", "Heat")]
    assert [q.id for q in disjoint_from(rest, held)] == ["d"]


def test_metaqa_records_leave_out_the_evaluated_sample_and_ask_with_the_direct_methods_trained_prompt(tmp_path):
    out = tmp_path / "metaqa.jsonl"
    manifest = build_from_dataset("generic", "metaqa-1hop", "test", out, limit=50, allow_test=True,
                                  exclude_sample=100, exclude_seed=0, order_seed=0)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    questions = {q.id: q for q in load("metaqa-1hop", "test")}
    scored = sample_questions(list(questions.values()), 100, 0)
    scored_entities = {e.casefold() for q in scored for e in q.topic_entities}
    trained = [questions[r["id"]] for r in records]
    assert len(trained) == 50 and manifest["sources"]["exclude_sample"] == 100
    assert not {q.id for q in trained} & {q.id for q in scored}
    assert not {e.casefold() for q in trained for e in q.topic_entities} & scored_entities
    assert len({q.metadata["qtype"] for q in trained}) > 3  # a seeded draw, not the file's first (one) type
    question = trained[0]
    asked = build_messages(question, "movies", "notes the trained prompt leaves out", prompt="trained")
    assert asked == records[0]["messages"][:2]
    kg_prompt = build_messages(question, "movies", "notes the trained prompt")[0]["content"]
    assert "notes the trained prompt" in kg_prompt
    with pytest.raises(ValueError, match="prompt must be one of kg, trained"):
        DirectConfig(prompt="tuned")


def test_gguf_export_needs_a_base_converted_from_gguf(tiny_decoder, tmp_path):
    from sparqlab.train.export import export_gguf

    with pytest.raises(ValueError, match="not converted from a GGUF file"):
        export_gguf(str(tiny_decoder), None, tmp_path / "x.gguf")


@pytest.mark.timeout(900)  # about a minute on 2 idle cores (the conversion, ~2 minutes, once per cache)
def test_real_weights_fine_tune_and_the_merged_adapter_served_by_llama_cpp(converted_real_model, tmp_path):
    from sparqlab.serving.llama_cpp import model_file, start_llama_server
    from sparqlab.train.convert import SOURCE_FILE, converted_base
    from sparqlab.train.export import export_gguf
    from sparqlab.train.sft import SFTConfig, train_sft

    folder = converted_base("smollm2-135m")
    assert folder == converted_real_model  # content-addressed: converted once (kept in the CI cache)
    source = json.loads((folder / SOURCE_FILE).read_text())
    assert source["gguf_sha256"] == file_digest(model_file("smollm2-135m"))
    assert "quantization_config" not in json.loads((folder / "config.json").read_text())

    data = tmp_path / "metaqa.jsonl"
    build_from_dataset("generic", "metaqa-1hop", "test", data, limit=2, allow_test=True, exclude_sample=100,
                       order_seed=0)
    result = train_sft(SFTConfig(base="smollm2-135m", data=str(data), out=str(tmp_path / "sft"), max_steps=2,
                                 batch_size=2, grad_accum=1, learning_rate=2e-3, eval_fraction=0, threads=2,
                                 max_length=256, progress=False))
    # the same two records each step; two steps take the loss from ~2.6 to ~2.0 and are enough for the fenced
    # query below, which the base model does not write (it answers in prose)
    summary = result.summary
    assert summary["base"]["converted_from"]["gguf_sha256"] == source["gguf_sha256"]
    assert summary["data_manifest"]["sources"]["dataset"] == "metaqa-1hop"
    assert summary["steps"] == 2 and summary["last_train_loss"] < summary["first_train_loss"]

    tuned = export_gguf("smollm2-135m", result.adapter, tmp_path / "tuned.gguf")
    record = json.loads(data.read_text().splitlines()[0])
    with start_llama_server(str(tuned), n_ctx=1024, n_threads=2) as server:
        import openai

        assert server.identity["model_sha256"] == file_digest(tuned)
        client = openai.OpenAI(base_url=server.url, api_key="none")
        reply = client.chat.completions.create(model=server.name, messages=record["messages"][:2], max_tokens=48,
                                               temperature=0).choices[0].message.content
    assert "```sparql" in reply and "SELECT" in reply
