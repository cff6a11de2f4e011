"""Fixtures of the agent tests: the Wikidata-shaped test KG behind a real ``oxigraph serve-read-only`` server,
``standin-agent`` behind the project's OpenAI-compatible server, and per-test runs/response-cache folders.

The movie KG and its label index stay in the project cache (building them per test would take minutes)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from sparqlab.core.paths import PROJECT_ROOT
from sparqlab.core.processes import stop_process

WIKIDATA_TEST = PROJECT_ROOT / "data" / "wikidata_test"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def wd_store(tmp_path_factory) -> Path:
    """A pyoxigraph store holding the Wikidata-shaped test KG (closed before the server opens it)."""
    import pyoxigraph

    path = tmp_path_factory.mktemp("wdstore") / "store"
    store = pyoxigraph.Store(str(path))
    store.bulk_load(path=str(WIKIDATA_TEST / "wikidata_test.ttl"))
    store.flush()
    del store
    return path


@pytest.fixture(scope="session")
def wd_server(wd_store) -> str:
    """The test KG behind ``oxigraph serve-read-only`` on a free 127.0.0.1 port; yields the query URL."""
    local = Path(sys.executable).with_name("oxigraph")
    binary = str(local) if local.exists() else shutil.which("oxigraph")
    if not binary:
        pytest.fail("the oxigraph server is not installed (pip install -r requirements-dev.txt)")
    port = _free_port()
    process = subprocess.Popen([binary, "serve-read-only", "--location", str(wd_store), "--bind",
                                f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/query"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                pytest.fail(f"oxigraph server exited: {process.stderr.read().decode(errors='replace')}")
            try:
                urllib.request.urlopen(url + "?query=ASK%7B%7D", timeout=2).read()
                break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline:
                    pytest.fail("oxigraph server did not start within 30 s")
                time.sleep(0.05)
        yield url
    finally:
        stop_process(process)
        process.stderr.close()


@pytest.fixture(scope="session")
def agent_model_url() -> str:
    """``standin-agent`` served by ``sparqlab.llm.server`` (OpenAI-compatible HTTP) on 127.0.0.1."""
    import sparqlab.agents  # noqa: F401  (registers standin-agent)
    from sparqlab.llm.server import serve_in_background

    with serve_in_background("standin-agent") as url:
        yield url


@pytest.fixture
def run_settings(tmp_path) -> dict:
    """RunConfig fields that keep a test's runs and model responses in its own folder."""
    return {"output_root": str(tmp_path / "runs"), "cache_path": str(tmp_path / "responses.sqlite"),
            "progress": False}
