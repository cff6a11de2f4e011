"""Generator–Gate–Corrector (GGC): selective query correction (specification:
``../shared/papers/ggc-selective-query-correction.md``).

Importing the package registers the method ``ggc`` and the stand-ins ``standin-knn`` (generator) and
``standin-corrector`` (corrector).

- :mod:`sparqlab.methods.ggc.method` — the method (Algorithm 1; modes ``none`` / ``all`` / ``gated``);
- :mod:`sparqlab.methods.ggc.gate` — gate backends ``tfidf`` / ``sbert`` / ``encoder``, saved as digest-named artifacts;
- :mod:`sparqlab.methods.ggc.feedback` — KG execution feedback;
- :mod:`sparqlab.methods.ggc.data` — generator passes, labelled initial queries, corrector SFT compositions;
- :mod:`sparqlab.methods.ggc.metrics` — accuracy, item-level P/R/F1, gate metrics, τ sweeps, subset analysis, time;
- :mod:`sparqlab.methods.ggc.prompts`, :mod:`sparqlab.methods.ggc.standins`, :mod:`sparqlab.methods.ggc.template_memory`.
"""

from typing import Any

from sparqlab.methods.ggc import standins, training_data  # noqa: F401  (register standin-knn, standin-corrector, data builders)
from sparqlab.methods.ggc.data import COMPOSITIONS, LabelledQuery, compose, labelled_queries, write_corrector_data
from sparqlab.methods.ggc.feedback import KGFeedback
from sparqlab.methods.ggc.gate import Gate, GateExample, GateSettings, decide
from sparqlab.methods.ggc.method import GGC, GGCConfig
from sparqlab.methods.ggc.prompts import PROMPTS

METRICS = ("compare", "gate_metrics", "pipeline_metrics", "stage_frame", "subset_analysis", "sweep")
"""Names re-exported from :mod:`sparqlab.methods.ggc.metrics`, imported on first use (:func:`__getattr__`)."""

__all__ = [
    "COMPOSITIONS", "GGC", "PROMPTS", "Gate", "GateExample", "GateSettings", "GGCConfig", "KGFeedback",
    "LabelledQuery", "compare", "compose", "decide", "gate_metrics", "labelled_queries",
    "pipeline_metrics", "stage_frame", "subset_analysis", "sweep", "write_corrector_data",
]


def __getattr__(name: str) -> Any:
    """The metrics on first use (PEP 562): they load pandas (~0.3 s), and ``sparqlab --help`` imports this
    package for :class:`GateSettings`' flags (``sparqlab train gate``)."""
    if name in METRICS:
        from sparqlab.methods.ggc import metrics

        return getattr(metrics, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
