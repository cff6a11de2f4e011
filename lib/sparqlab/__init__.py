"""sparqlab: a research workbench for LLM text-to-SPARQL over knowledge graphs."""

from importlib import metadata

try:
    __version__ = metadata.version("sparqlab")  # set from git at build time (setuptools-scm): one per commit
except metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0.1.dev0+unknown"
