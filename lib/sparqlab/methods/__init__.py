"""The methods wing: one package per method, each holding everything that is only its own.

- :mod:`sparqlab.methods.direct` — the one-shot / few-shot baseline (and the ``standin-keyword-rules`` model);
- :mod:`sparqlab.methods.agents` — the SPINACH-style ReAct agent and SAGA (schema index, type state, filter);
- :mod:`sparqlab.methods.ggc` — Generator–Gate–Corrector (gate, gate training, corrector data);
- :mod:`sparqlab.methods.desq` — DeSQ (decomposition, assembler, KB memory, URI correction);
- :mod:`sparqlab.methods.genop` — generative SPARQL (typed algebra, dependency analysis, fixpoint semantics).

Each package is found on disk as it is (:func:`sparqlab.core.plugins.method_packages`; a third-party method
package is an entry point of the ``sparqlab.plugins`` group); no method package imports another. The baseline is importable from here for the quick start.
"""

from sparqlab.methods.direct import DirectConfig, DirectSparql
from sparqlab.platform.registry import get_method, make_method, method_names

__all__ = ["DirectConfig", "DirectSparql", "get_method", "make_method", "method_names"]
