"""Generative SPARQL (GenOp): SPARQL extended with model calls that bind typed, generated values
(specification: ``generative-sparql-semantics.md``, Sects 3–7 and Apps A–D).

>>> from sparqlab.methods.genop import Oracle, ScriptedModel, run_genop
>>> result = run_genop('SELECT ?x ?y WHERE { ?x a mclass:Genre . GENOP("A film genre close to ?x" AS ?y) }',
...                    open_kg("movies"), Oracle.for_model(get_model("openai/gpt-oss-120b", base_url=URL)))
>>> result.to_json()     # {"class": "acyclic", "model_calls": N, "rows": [{"x": {"value", "origin"}, ...}]}

Modules, in dependency order:

- :mod:`~sparqlab.methods.genop.terms`: typed terms and mappings, lexicalisation, Str≃ / Sim / rep / compatibility.
- :mod:`~sparqlab.methods.genop.algebra`: the operators of grammar (1), occurrences, surrounding patterns, Def. 3.
- :mod:`~sparqlab.methods.genop.syntax`: the concrete ``GENOP(...)`` syntax over rdflib's SPARQL parser and algebra.
- :mod:`~sparqlab.methods.genop.dependency`: signed dependency graph, SCCs, stratification, query class.
- :mod:`~sparqlab.methods.genop.oracle`: Propose / Validate over any chat model, memoisation, call counting, prompts
  (:data:`PROMPTS`), the scripted model ``standin-genop-script``.
- :mod:`~sparqlab.methods.genop.semantics`: one-step evaluation, single pass / lfp / stratified / well-founded, EvalSCC.
- :mod:`~sparqlab.methods.genop.method`: the ``genop`` method for ``sparqlab run``.

Every implementation policy (lexicalisation, similarity, context supply, validation aggregation) is stated in the
docstring of the module that implements it and summarised in ``docs/genop.md``.
"""

import sparqlab.methods.genop.method  # noqa: F401  (registers the "genop" method)
from sparqlab.methods.genop.algebra import GenOpSyntaxError
from sparqlab.methods.genop.dependency import Dependencies, analyse
from sparqlab.methods.genop.oracle import PROMPTS, Oracle, ScriptedModel, load_script
from sparqlab.methods.genop.semantics import (
    SEMANTICS,
    EvalSettings,
    Evaluation,
    GenOpEvaluationError,
    GenResult,
    evaluate,
    kg_query_fn,
    run_genop,
)
from sparqlab.methods.genop.syntax import GenQuery, parse_genop_query
from sparqlab.methods.genop.terms import Mu, TypedTerm

__all__ = [
    "PROMPTS", "SEMANTICS", "Dependencies", "EvalSettings", "Evaluation", "GenOpEvaluationError",
    "GenOpSyntaxError", "GenQuery", "GenResult", "Mu", "Oracle", "ScriptedModel", "TypedTerm", "analyse",
    "evaluate", "kg_query_fn", "load_script", "parse_genop_query", "run_genop",
]
