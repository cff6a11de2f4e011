"""The one-shot / few-shot text-to-SPARQL baseline (``direct``) and its offline stand-ins ``standin-keyword-rules``
(label-keyed KGs such as the movie KG) and ``standin-schema-rules`` (IRI-keyed KGs such as CK25). Importing the
package registers all three."""

from sparqlab.methods.direct import keyword_rules, schema_rules  # noqa: F401  (register the stand-ins)
from sparqlab.methods.direct.method import DirectConfig, DirectSparql

__all__ = ["DirectConfig", "DirectSparql"]
