"""Which SPARQL engine answers a KG's queries, and what follows from it.

Results can depend on the engine even for one query over one KG (docs/engines.md): the order of rows without
ORDER BY, which tied rows a LIMIT keeps, how numbers are typed (Virtuoso's ``7/2`` is ``3``), what is an error.
So a run records its engine (``environment.json``, the run id, ``runs list``), and an engine's missing function
is the same typed error whichever backend reaches it (:class:`~sparqlab.kg.errors.UnsupportedFunction`, which
the cast rewrite :func:`sparqlab.sparql.rewrite.rewrite_casts` answers). An endpoint names its engine in the HTTP ``Server`` header (``Virtuoso/07.20.3229 (Linux) …``,
``Oxigraph/0.5.13``); :func:`engine_from_server` reads it.

The engines the workbench starts itself, each launched by the module named for it and both through
:func:`serve_on`: :mod:`sparqlab.engines.oxigraph_server` (``oxigraph serve-read-only`` over a store folder) and
:mod:`sparqlab.engines.virtuoso` (a Virtuoso loaded from store folders or RDF files).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ENGINES = ("embedded", "oxigraph-server", "virtuoso")
"""The engines the workbench can start itself (``sparqlab kg serve --engine``, a grid's ``engines`` axis);
any other endpoint's engine is named from its ``Server`` header (``qlever``, ``fuseki`` ...) or ``unknown``."""

RELATIVE_BASE = "http://sparqlab.invalid/"
"""The base IRI a relative IRI such as ``<15>`` resolves against on the embedded store, as the servers resolve
it against their own URL: it names nothing in any KG, so such a query parses on every engine and matches
nothing, instead of being a syntax error on one store only."""

PRODUCTS = {"oxigraph": "oxigraph-server", "virtuoso": "virtuoso"}
"""Server products by the engine name they stand for (an oxigraph behind HTTP is the server): how a ``Server``
header and ``sparqlab kg serve --engine`` name them."""


@dataclass(frozen=True)
class Engine:
    """An engine: ``name`` (one of :data:`ENGINES`, a product named by the ``Server`` header, or ``unknown``),
    its ``version`` when known and the raw ``server`` header it was read from."""

    name: str
    version: str | None = None
    server: str | None = None

    @property
    def label(self) -> str:
        """``name version`` as a table cell shows it."""
        return f"{self.name} {self.version}" if self.version else self.name


def engine_from_server(header: str | None) -> Engine:
    """The engine a ``Server`` response header names: ``Virtuoso/07.20.3229 (Linux) …`` → virtuoso 07.20.3229,
    ``Oxigraph/0.5.13`` → oxigraph-server 0.5.13, another ``Product/version`` → its product in lower case; no
    header → ``unknown``."""
    header = " ".join((header or "").split())
    match = re.match(r"([A-Za-z][\w.-]*)(?:/(\S+))?", header)
    if not match:
        return Engine("unknown", None, header or None)
    product = match.group(1).lower()
    return Engine(PRODUCTS.get(product, product), match.group(2), header)


TEST_GRAPH = "urn:sparqlab:kg"
"""The named graph :func:`serve_on` loads a KG into on Virtuoso."""


@contextlib.contextmanager
def serve_on(engine: str, store: str | Path, *, timeout_s: int | None = None, max_rows: int = 10_000,
             graph: str = TEST_GRAPH) -> Iterator[str]:
    """Serve the pyoxigraph store folder ``store`` on 127.0.0.1 with ``engine`` (``oxigraph-server`` or
    ``virtuoso``, :data:`ENGINES`) while the block runs; yields the URL a client opens — on
    Virtuoso with ``?default-graph-uri=`` naming the graph the KG was loaded into. ``max_rows`` is Virtuoso's
    own row cap (oxigraph has none); ``timeout_s`` the server's per-query limit."""
    from urllib.parse import quote

    if engine == "oxigraph-server":
        from sparqlab.engines.oxigraph_server import serve_store

        with serve_store(store, timeout_s=timeout_s) as url:
            yield url
    elif engine == "virtuoso":
        from sparqlab.engines.virtuoso import serve_virtuoso

        with serve_virtuoso({graph: [store]}, max_rows=max_rows, timeout_s=timeout_s or 60) as url:
            yield f"{url}?default-graph-uri={quote(graph, safe='')}"
    else:
        raise ValueError(f"engine must be oxigraph-server or virtuoso (the embedded store needs no server); "
                         f"got {engine!r}")
