"""Serving at the edge of the library: the HTTP servers others reach, on one guarded uvicorn server.

- :mod:`sparqlab.serving.guard` — uvicorn on its documented settings for the local case (connection bound,
  keep-alive, head-size limit) and an ASGI wrapper (body deadline, one framing); a reverse proxy for public
  exposure (docs/security.md);
- :mod:`sparqlab.serving.model_server` — ``sparqlab serve-model``: any model of the workbench (stand-ins, a
  fine-tuned adapter) behind an OpenAI-compatible API, for tests, offline runs and jobs.

A method as a TEXT2SPARQL challenge endpoint (``sparqlab serve``) is served by the TEXT2SPARQL wing
(:mod:`sparqlab.text2sparql.endpoint`) on this guarded server.

Nothing below this layer imports it: the runner, the methods and the models are the same whether served or not.
"""
