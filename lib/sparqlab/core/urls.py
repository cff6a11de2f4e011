"""URL helpers shared by the HTTP clients of the KG and model layers."""

from __future__ import annotations

from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port of ``url`` (the port made explicit): what a redirect may not change, since a run
    records the endpoint it was given."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or DEFAULT_PORTS.get(scheme)
