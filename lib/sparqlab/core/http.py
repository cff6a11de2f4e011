"""One bounded HTTP exchange on HTTPX2 (the HTTP stack under the model SDK): the model client, ``external`` and
the entity search read every reply through it (the search, synchronous, through :func:`fetch`).

A client's own timeout bounds each read, not the exchange: a server dripping a byte every half second never trips
it. Here an attempt (sending, the headers, the whole body) ends at its deadline however the bytes come; the body is
counted after decoding, so a gzip bomb is refused once its output passes the cap (HTTPX2 decodes one network chunk,
at most 64 KiB, at a time: a chunk's output, at most ~66 MiB for deflate's ratio, is the most held beyond the cap);
a reply that a redirect brought from another origin (scheme, host, port) is refused, since a run records the
endpoint it was given.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from typing import Any

import httpx2

from sparqlab.core.event_loops import run_sync
from sparqlab.core.urls import origin


class ReplyRefused(Exception):
    """A reply not read: its body is larger than the cap, or it came from another origin."""


async def check_origin(asked: Any, response: Any) -> None:
    """Raise :class:`ReplyRefused` (``response`` closed) when ``response`` (streamed, HTTPX2) came from
    another origin than the URL ``asked``."""
    if origin(str(response.url)) != origin(str(asked)):
        await response.aclose()
        raise ReplyRefused(f"{asked} redirected to another origin ({response.url}); refused: give that URL as the "
                           "endpoint if it is the one meant")


async def read_capped(response: Any, max_bytes: int, hint: str = "") -> bytes:
    """The decoded body of a streamed ``response`` (HTTPX2), read as it arrives and closed after;
    :class:`ReplyRefused` once it passes ``max_bytes`` (``hint`` says what to change)."""
    chunks, size = [], 0
    try:
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise ReplyRefused(f"{response.request.url} sent a reply larger than {max_bytes:,} bytes (refused "
                                   f"while reading){'; ' + hint if hint else ''}")
            chunks.append(chunk)
    finally:
        await response.aclose()
    return b"".join(chunks)


async def bounded_get(client: Any, url: str, *, timeout_s: float, max_bytes: int, hint: str = "",
                      params: dict[str, str] | None = None) -> tuple[Any, bytes]:
    """One GET through ``client`` (an ``httpx2.AsyncClient``) within ``timeout_s`` as a whole (``TimeoutError``
    after it): the response and its body, read by :func:`read_capped`."""
    async with asyncio.timeout(timeout_s):
        response = await client.send(client.build_request("GET", url, params=params), stream=True)
        await check_origin(url, response)
        return response, await read_capped(response, max_bytes, hint)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """HTTPX2's default TLS context, made once and shared by every client (an ``SSLContext`` is safe to share):
    loading the CA certificates costs ~30-60 ms of CPU a client, i.e. a search call or a run's model client."""
    return httpx2.create_ssl_context()


def fetch(url: str, *, timeout_s: float, max_bytes: int, hint: str = "", params: dict[str, str] | None = None,
          headers: dict[str, str] | None = None) -> tuple[httpx2.Response, bytes]:
    """:func:`bounded_get` for a synchronous caller, through :func:`~sparqlab.core.event_loops.run_sync`, so it
    works whether or not the calling thread runs an event loop (a notebook's does). Transport errors are
    HTTPX2's."""

    async def exchange() -> tuple[httpx2.Response, bytes]:
        async with httpx2.AsyncClient(headers=headers, timeout=timeout_s, verify=tls_context()) as client:
            return await bounded_get(client, url, timeout_s=timeout_s, max_bytes=max_bytes, hint=hint, params=params)

    return run_sync(exchange())
