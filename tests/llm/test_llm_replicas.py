"""One model on several replicas (``model_url: A,B,C``): least-in-flight spreading, a failing replica taken out
with back-off and its calls retried on the others, per-replica counts in metrics.json, and a replica SIGKILLed
mid-run losing no question (real ``sparqlab serve-model`` processes)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from sparqlab.core.event_loops import run_sync
from sparqlab.core.processes import stop_process
from sparqlab.llm import get_model
from sparqlab.llm.base import ChatModel, ChatRequest, ChatResponse, Usage
from sparqlab.llm.errors import ModelUnavailable
from sparqlab.llm.replicas import ReplicaModel, replica_urls


class Scripted(ChatModel):
    """An in-process replica that answers, or fails as an unreachable server does while ``down`` is set."""

    def __init__(self, label: str):
        self.name = "m"
        self.label = label
        self.down = False
        self.release = None

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        if self.release is not None:
            await self.release.wait()
        if self.down:
            raise ModelUnavailable(f"{self.label} refused the connection")
        return ChatResponse(text=self.label, usage=Usage(1, 1), latency_s=0.0)


def _request() -> ChatRequest:
    return ChatRequest.build("m", "q")


def test_calls_go_to_the_replica_with_fewest_in_flight():
    import asyncio

    a, b, c = Scripted("a"), Scripted("b"), Scripted("c")

    async def scenario():
        gate = asyncio.Event()
        a.release = gate  # a holds its call until released
        replicas = ReplicaModel([a, b, c], ["A", "B", "C"])
        held = asyncio.create_task(replicas.acomplete(_request()))
        await asyncio.sleep(0)
        assert replicas.replicas[0].in_flight == 1
        answers = [(await replicas.acomplete(_request())).text for _ in range(4)]
        gate.set()
        assert (await held).text == "a"
        return replicas, answers

    replicas, answers = run_sync(scenario())
    assert "a" not in answers and sorted(answers) == ["b", "b", "c", "c"]
    assert {url: s["calls"] for url, s in replicas.replica_stats().items()} == {"A": 1, "B": 2, "C": 2}


def test_a_failing_replica_is_out_for_a_growing_back_off_and_its_calls_go_elsewhere():
    a, b = Scripted("a"), Scripted("b")
    now = [100.0]
    replicas = ReplicaModel([a, b], ["A", "B"], backoff_s=1.0, max_backoff_s=3.0, clock=lambda: now[0])
    a.down = True
    assert replicas.complete(_request()).text in ("a", "b")  # a's failure is retried on b
    assert [r.failures for r in replicas.replicas] == [1, 0]
    assert replicas.replicas[0].out_until == 101.0
    assert {replicas.complete(_request()).text for _ in range(3)} == {"b"}  # a is out: not even tried
    now[0] = 101.0  # back-off over: a is tried again, fails, and is out twice as long
    replicas.complete(_request())
    assert replicas.replicas[0].failures == 2 and replicas.replicas[0].out_until == 103.0
    now[0], a.down = 103.0, False
    answers = {replicas.complete(_request()).text for _ in range(4)}
    assert "a" in answers and replicas.replicas[0].out_until == 0.0  # back for good
    b.down, a.down = True, True
    now[0] = 200.0
    with pytest.raises(ModelUnavailable, match="every replica of 'm' failed this call .*A, B"):
        replicas.complete(_request())


def test_a_url_list_is_a_replica_set():
    assert replica_urls("http://a:1/v1, http://b:2") == ["http://a:1/v1", "http://b:2"]
    model = get_model("some/model", base_url="http://127.0.0.1:9/v1,http://127.0.0.1:10")
    assert isinstance(model, ReplicaModel)
    assert model.describe()["replicas"] == ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"]


def _start_server(delay_ms: int) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "sparqlab", "serve-model", "--model", "standin-keyword-rules",
                             "--port", "0", "--delay-ms", str(delay_ms)], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("serving "), line
    return proc, line.rsplit(" ", 1)[-1].strip()


def test_a_replica_killed_mid_run_loses_no_question(tmp_path):
    from sparqlab.methods import get_method
    from sparqlab.runs import RunConfig, run

    servers = [_start_server(150) for _ in range(3)]
    try:
        urls = [url for _, url in servers]
        config = RunConfig(dataset="metaqa-1hop", limit=12, concurrency=3, model="standin-keyword-rules",
                           model_url=",".join(urls), cache="off", progress=False, output_root=str(tmp_path))
        method = get_method("direct")
        result = {}
        worker = threading.Thread(target=lambda: result.update(r=run(method(method.config_class()), config=config)))
        worker.start()
        predictions = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and worker.is_alive():
            found = list(tmp_path.glob("default/*/predictions.jsonl"))
            if found and len(found[0].read_text().splitlines()) >= 3:
                predictions = found[0]
                break
            time.sleep(0.02)
        assert predictions is not None, "the run made no progress"
        servers[1][0].send_signal(signal.SIGKILL)
        worker.join(120)
        records = [json.loads(line) for line in predictions.read_text().splitlines()]
        assert len({r["id"] for r in records}) == len(records) == 12
        assert not [r for r in records if r.get("error")], [r["error"] for r in records if r.get("error")]
        metrics = result["r"].metrics
        assert metrics["n_done"] == 12 and metrics["complete"]
        per_replica = metrics["model_cache_last_session"]["replicas"]
        assert sorted(per_replica) == sorted(urls)
        assert sum(s["calls"] for s in per_replica.values()) == metrics["model_cache_last_session"]["calls"]
        assert per_replica[urls[0]]["calls"] > 0 and per_replica[urls[2]]["calls"] > 0
        assert per_replica[urls[0]]["latency_s"]["mean"] >= 0.15
        # what the run's prompts would cost a server with prefix caching: the shared instructions are reused
        cache = metrics["prefix_cache"]["simulated"]
        assert cache["recomputed_prompt_tokens"] == metrics["usage"]["tokens"]["prompt_recomputed"]
        assert 0 < cache["recomputed_prompt_tokens"] < cache["prompt_tokens"] and 0 < cache["reused_share"] < 1
    finally:
        for proc, _ in servers:
            stop_process(proc)
            proc.stdout.close()
