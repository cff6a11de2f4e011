"""sparqlab: a research workbench for LLM text-to-SPARQL over knowledge graphs."""

__version__ = "0.1.0"
