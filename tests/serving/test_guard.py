"""The connection layer's accept path (:class:`sparqlab.serving.guard.Acceptor`): connections count from the
moment they are accepted, so a burst never takes more than ``max_open`` descriptors; the rest wait in the
kernel's listen queue and are accepted as open ones close. The library reaches uvicorn through its public
interfaces only."""

from __future__ import annotations

import ast
import asyncio
import socket
from pathlib import Path

import sparqlab
from sparqlab.serving.guard import Acceptor, listen_socket


async def _turns(n: int = 20) -> None:
    """Let the event loop run ``n`` iterations (asyncio would have accepted a whole burst by then)."""
    for _ in range(n):
        await asyncio.sleep(0)


def test_a_burst_is_accepted_only_up_to_max_open_and_the_rest_when_connections_close():
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        acceptor = Acceptor(max_open=5)
        made: list[asyncio.Transport] = []
        six_made = asyncio.Event()

        class Holding(asyncio.Protocol):  # keeps every connection open; tells the acceptor when one closes
            def connection_made(self, transport):
                made.append(transport)
                if len(made) == 6:
                    six_made.set()

            def connection_lost(self, exc):
                acceptor.release()

        server = listen_socket("127.0.0.1", 0)
        # the whole burst waits in the listen queue before the first accept (connect returns once queued)
        clients = [socket.create_connection(server.getsockname()) for _ in range(50)]
        acceptor.start(loop, [server], Holding)
        try:
            await _turns()
            assert len(made) == 5 and acceptor.open == 5, "at most max_open are accepted, the rest wait"
            made[0].close()
            await asyncio.wait_for(six_made.wait(), timeout=30)
            await _turns()
            assert len(made) == 6 and acceptor.open == 5, "one closed connection makes room for one more"
        finally:
            acceptor.stop()
            for transport in made:
                transport.close()
            await _turns()
            for conn in [*clients, server]:
                conn.close()

    asyncio.run(scenario())


def test_the_library_imports_uvicorn_s_public_package_only():
    """``uvicorn.Config`` and ``uvicorn.Server``, never a submodule such as its HTTP protocols (internals any
    release may change)."""
    imported = {}
    for path in Path(sparqlab.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                if name.split(".")[0] == "uvicorn":
                    imported.setdefault(name, []).append(path.name)
    assert set(imported) == {"uvicorn"}, imported
