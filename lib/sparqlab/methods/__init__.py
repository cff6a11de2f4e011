"""Text-to-SPARQL methods: the shared protocol, the one-shot baseline and its stand-in.

Importing this package registers every method's stand-in models, so ``sparqlab serve-model`` and
``sparqlab.llm.get_model`` know them by name.
"""

from sparqlab.methods import keyword_rules  # noqa: F401  (registers standin-keyword-rules)
from sparqlab.methods.base import Method, MethodOutput, QuestionContext
from sparqlab.methods.direct import DirectSparql
from sparqlab.methods.parsing import extract_sparql

METHODS = {DirectSparql.name: DirectSparql}
"""Methods by name, for configs and the command line."""


def make_method(name: str, **options) -> Method:
    """A method by its registered name; ``ValueError`` listing the known names otherwise."""
    try:
        return METHODS[name](**options)
    except KeyError:
        raise ValueError(f"unknown method {name!r}; known: {', '.join(sorted(METHODS))}") from None


__all__ = ["METHODS", "DirectSparql", "Method", "MethodOutput", "QuestionContext", "extract_sparql", "make_method"]
