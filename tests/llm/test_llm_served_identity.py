"""The response cache knows *what* was served under a model name, not only the name: another model served under
the same name does not get old responses, and a rerun that never reached the endpoint says so."""

from sparqlab.llm import CachedModel, ChatModel, ChatResponse, OpenAIModel
from sparqlab.serving.model_server import serve_in_background


class Weights(ChatModel):
    """A model whose answers name the weights it stands for (``root`` is what the server reports)."""

    def __init__(self, root: str):
        self.name = "team-model"
        self.root = root

    async def acomplete(self, request):
        return ChatResponse(text=f"answer from {self.root}", model=self.name)


def ask(url: str, cache_path, mode: str = "read_write"):
    model = CachedModel(OpenAIModel("team-model", base_url=url, max_retries=0, connect_timeout_s=2),
                        cache_path, mode)
    return model.chat_sync("Who directed Alien?", temperature=0, max_tokens=16).text, model


def test_other_weights_under_the_same_name_miss_the_cache(tmp_path):
    cache = tmp_path / "responses.sqlite"
    with serve_in_background(Weights("weights-a")) as url:
        first, model = ask(url, cache)
        assert first == "answer from weights-a" and model.calls == 1
        assert model.stats()["served"] == {"id": "team-model", "root": "weights-a", "max_model_len": None}
        again, model = ask(url, cache)
        assert again == first and model.hits == 1 and model.calls == 0
    with serve_in_background(Weights("weights-b")) as url:
        swapped, model = ask(url, cache)
    assert swapped == "answer from weights-b" and model.calls == 1 and model.hits == 0
    assert model.describe()["served"]["root"] == "weights-b"


def test_cache_only_reruns_say_the_endpoint_was_not_contacted(tmp_path, dead_url):
    cache = tmp_path / "responses.sqlite"
    with serve_in_background(Weights("weights-a")) as url:
        ask(url, cache)
    replayed, model = ask(dead_url, cache, mode="replay")
    assert replayed == "answer from weights-a" and model.calls == 0
    assert "not contacted" in model.stats()["endpoint_note"]
    served, model = ask(dead_url, cache)  # read_write against a dead URL: the hit is served, the note says why
    assert served == "answer from weights-a" and model.calls == 0
    assert "could not be asked" in model.stats()["endpoint_note"] and model.stats()["served"] is None
