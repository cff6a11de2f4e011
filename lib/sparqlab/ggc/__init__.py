"""Generator–Gate–Corrector (GGC): selective query correction (specification:
``../shared/papers/ggc-selective-query-correction.md``).

Importing the package registers the method ``ggc`` and the stand-ins ``standin-knn`` (generator) and
``standin-corrector`` (corrector).

- :mod:`sparqlab.ggc.method` — the method (Algorithm 1; modes ``none`` / ``all`` / ``gated``);
- :mod:`sparqlab.ggc.gate` — gate backends ``tfidf`` / ``sbert`` / ``encoder``, saved as digest-named artifacts;
- :mod:`sparqlab.ggc.feedback` — KG execution feedback;
- :mod:`sparqlab.ggc.data` — generator passes, labelled initial queries, corrector SFT compositions;
- :mod:`sparqlab.ggc.evaluate` — accuracy, item-level P/R/F1, gate metrics, τ sweeps, subset analysis, time;
- :mod:`sparqlab.ggc.experiments` — the experiments the notebooks and ``sparqlab ggc`` run;
- :mod:`sparqlab.ggc.prompts`, :mod:`sparqlab.ggc.standins`, :mod:`sparqlab.ggc.memory`.
"""

from sparqlab.ggc import standins  # noqa: F401  (registers standin-knn, standin-corrector)
from sparqlab.ggc.data import COMPOSITIONS, LabelledQuery, compose, labelled_queries, write_corrector_data
from sparqlab.ggc.evaluate import compare, gate_metrics, pipeline_metrics, stage_frame, subset_analysis, sweep
from sparqlab.ggc.experiments import gate_table, run_modes, threshold_sweep, train_gate
from sparqlab.ggc.feedback import KGFeedback
from sparqlab.ggc.gate import Gate, GateExample, GateSettings, decide
from sparqlab.ggc.method import GGC, GGCConfig
from sparqlab.ggc.prompts import PROMPTS

__all__ = [
    "COMPOSITIONS", "GGC", "PROMPTS", "Gate", "GateExample", "GateSettings", "GGCConfig", "KGFeedback",
    "LabelledQuery", "compare", "compose", "decide", "gate_metrics", "gate_table", "labelled_queries",
    "pipeline_metrics", "run_modes", "stage_frame", "subset_analysis", "sweep", "threshold_sweep", "train_gate",
    "write_corrector_data",
]
