"""Other systems as methods, so that they are rows scored by the same code as ours (docs/peers.md):

- ``external`` (:mod:`.system`): any TEXT2SPARQL system, asked each question over HTTP the way the challenge asks;
- ``imported`` (:mod:`.imported`): a peer's published output file (GRASP's JSONL, an answers file) replayed, its
  conversation and times kept in the traces.

In both the runner executes the system's final query on the run's KG and scores it like every method's.
"""

from sparqlab.text2sparql.external.imported import ImportedConfig, ImportedOutput
from sparqlab.text2sparql.external.system import ExternalConfig, ExternalSystem, ExternalUnavailable

__all__ = ["ExternalConfig", "ExternalSystem", "ExternalUnavailable", "ImportedConfig", "ImportedOutput"]
