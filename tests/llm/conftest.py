"""Shared fixtures: a URL where no model server listens (the served one, ``echo_server``, is suite-wide:
tests/serving uses it too)."""

import socket

import pytest


@pytest.fixture
def dead_url():
    """A 127.0.0.1 URL where nothing listens (a port just bound and released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
