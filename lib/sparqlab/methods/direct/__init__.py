"""The one-shot / few-shot text-to-SPARQL baseline (``direct``) and its offline stand-in ``standin-keyword-rules``.
Importing the package registers both."""

from sparqlab.methods.direct import keyword_rules  # noqa: F401  (registers standin-keyword-rules)
from sparqlab.methods.direct.method import DirectConfig, DirectSparql

__all__ = ["DirectConfig", "DirectSparql"]
