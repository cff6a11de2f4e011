"""`sparqlab model serve`: llama-cpp-python's server over the bundled SmolLM2-135M on 127.0.0.1 — what it says it
serves (``/props`` in llama-server's shape, ``/v1/models``), real replies with the server's token counts, a clean
stop, and one-line errors for a model it cannot serve."""

from __future__ import annotations

import hashlib
import json
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from sparqlab.llm import OpenAIModel
from sparqlab.serving.llama_cpp import model_file, start_llama_server
from support.real_model import REAL_MODEL_THREADS, require_real_model


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def test_props_answers_in_llama_servers_shape_with_the_identity_of_what_answers(real_model):
    props = _get(real_model.url.removesuffix("/v1") + "/props")
    path = model_file("smollm2-135m")
    assert props["total_slots"] == 1  # llama-cpp-python computes one request at a time
    assert props["default_generation_settings"]["n_ctx"] == 8192
    assert props["model_path"] == str(path) and props["build_info"].startswith("llama-cpp-python 0.3.")
    assert "<|im_start|>" in props["chat_template"]  # SmolLM2's ChatML template, read from the file
    identity = props["identity"]
    assert identity == real_model.identity
    assert identity["engine"] == "llama-cpp-python" and props["build_info"].endswith(identity["engine_version"])
    assert identity["model_file"] == "SmolLM2-135M-Instruct.Q4_1.gguf" and identity["n_ctx"] == 8192
    assert identity["model_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert identity["chat_template_sha256"] == hashlib.sha256(props["chat_template"].encode()).hexdigest()
    assert isinstance(identity["chat_format"], str) and identity["chat_format"]


def test_models_lists_exactly_the_served_name(real_model):
    listed = _get(real_model.url + "/models")["data"]
    assert [entry["id"] for entry in listed] == ["smollm2-135m"] == [real_model.name]


def test_a_real_reply_comes_with_the_servers_token_counts_and_stops_at_max_tokens(real_model):
    model = OpenAIModel(real_model.name, base_url=real_model.url)
    reply = model.chat_sync("Name the capital of France.", temperature=0.0, max_tokens=24)
    assert reply.text.strip() and not reply.usage.estimated
    assert reply.usage.prompt_tokens > 5 and 0 < reply.usage.completion_tokens <= 24
    cut = model.chat_sync("Write a long story about a dog.", temperature=0.0, max_tokens=3)
    assert cut.finish_reason == "length" and cut.usage.completion_tokens == 3


@pytest.mark.slow
def test_a_started_server_stops_on_leaving_its_block_and_the_command_on_sigterm():
    require_real_model()
    with start_llama_server(n_threads=REAL_MODEL_THREADS, n_ctx=512) as server:
        assert _get(server.url.removesuffix("/v1") + "/props")["identity"]["n_ctx"] == 512
    assert server.process.returncode is not None
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(server.url + "/models", timeout=5)

    command = subprocess.Popen([sys.executable, "-m", "sparqlab", "model", "serve", "smollm2-135m", "--n-ctx",
                                "512", "--n-threads", str(REAL_MODEL_THREADS)], stdout=subprocess.PIPE, text=True)
    try:
        line = command.stdout.readline()
        assert line.startswith("serving smollm2-135m at http://127.0.0.1:") and line.rstrip().endswith("/v1")
        command.send_signal(signal.SIGTERM)
        assert command.wait(timeout=30) in (0, 128 + signal.SIGTERM)
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()
        command.stdout.close()


@pytest.mark.slow
def test_a_server_given_a_log_writes_llama_cpps_log_of_each_request_there(tmp_path):
    """``log=``: what a benchmark reads the server's prefix-cache reuse from (its replies do not report it): a
    second question behind the same instructions is logged as a prefix-match hit."""
    require_real_model()
    log = tmp_path / "server.log"
    with start_llama_server(n_threads=REAL_MODEL_THREADS, n_ctx=512, log=log) as server:
        model = OpenAIModel(server.name, base_url=server.url)
        instructions = {"role": "system", "content": "Answer with one word. " * 8}
        for question in ("Name a colour.", "Name a fruit."):
            model.chat_sync([instructions, {"role": "user", "content": question}], temperature=0.0, max_tokens=4)
    reused = [int(tokens) for tokens in re.findall(r"(\d+) prefix-match hit", log.read_text(encoding="utf-8"))]
    assert reused and reused[-1] > 40  # the shared instructions, not evaluated again


@pytest.mark.parametrize(("model", "message"), [
    ("smollm3", "ValueError: unknown model 'smollm3': a bundled model (smollm2-135m) or a FILE.gguf"),
    ("missing.gguf", "FileNotFoundError: no GGUF model file at missing.gguf"),
])
def test_a_model_it_cannot_serve_is_one_line_before_anything_starts(model, message, tmp_path):
    done = subprocess.run([sys.executable, "-m", "sparqlab", "model", "serve", model], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == f"sparqlab model: {message}"


def _exited(pid: int) -> bool:
    """Whether process ``pid`` is gone (or a zombie nobody has reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.slow
def test_a_server_whose_parent_is_killed_exits_too():
    require_real_model()
    parent = subprocess.Popen([sys.executable, "-c", "import time\nfrom sparqlab.serving.llama_cpp import "
                               "start_llama_server\nserver = start_llama_server(n_threads=1, n_ctx=512)\n"
                               "print(server.process.pid, flush=True)\ntime.sleep(300)"], stdout=subprocess.PIPE,
                              text=True)
    try:
        server = int(parent.stdout.readline())
        assert not _exited(server)
    finally:
        parent.kill()  # no finally of its own runs: only the pipe tells the server
        parent.wait()
        parent.stdout.close()
    deadline = time.monotonic() + 30
    while not _exited(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _exited(server)
