"""Shared fixtures: a real `sparqlab serve-model` process on a free 127.0.0.1 port."""

import socket

import pytest

from sparqlab.serving.model_server import serve_in_background


@pytest.fixture(scope="session")
def echo_server():
    """Base URL of `sparqlab serve-model --model standin-echo --port 0`, started as a subprocess once (it keeps
    no state between requests)."""
    with serve_in_background("standin-echo", process=True) as url:
        yield url


@pytest.fixture
def dead_url():
    """A 127.0.0.1 URL where nothing listens (a port just bound and released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
