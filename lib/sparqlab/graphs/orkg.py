"""The Open Research Knowledge Graph (ORKG): the KG profile of SciQA (GGC appendix D.2, Table 13).

ORKG is not bundled and has no default endpoint (its dump is on Zenodo, not in the workbench); a researcher points
the workbench at a SPARQL endpoint serving it (``--kg orkg --kg-url URL``, ``RunConfig.kg_url``), and opening
``orkg`` without one stops with an error naming that option. Registered on import: the profile, with SciQA's
prefixes — ``orkgp:`` predicates, ``orkgc:`` classes, ``orkgr:`` resources — names as ``rdfs:label`` literals and
answers compared by IRI (SciQA's gold queries select resources and their labels).
"""

from __future__ import annotations

from sparqlab.kg.profiles import (
    STANDARD_PREFIXES,
    ConstraintScheme,
    KGProfile,
    PromptConventions,
    register_profile,
)
from sparqlab.kg.vocab import RDF, RDFS

ORKG = "http://orkg.org/orkg/"

ORKG_PROFILE = KGProfile(
    name="orkg",
    type_predicate=RDF + "type",
    label_predicate=RDFS + "label",
    description_predicate=RDFS + "comment",
    prefixes={**STANDARD_PREFIXES, "orkgp": ORKG + "predicate/", "orkgc": ORKG + "class/",
              "orkgr": ORKG + "resource/"},
    entity_id_pattern=r"^http://orkg\.org/orkg/resource/R[0-9]+$",
    entity_id_example="orkgr:R117327",
    property_id_pattern=r"^http://orkg\.org/orkg/predicate/\S+$",
    constraints=ConstraintScheme("rdfs", domain_predicate=RDFS + "domain", range_predicate=RDFS + "range"),
    answer_key="iri",
    conventions=PromptConventions(topic="research contributions, benchmarks and their results",
                                  relation_word="predicates"),
    prompt_notes="""\
ORKG (Open Research Knowledge Graph): resources `orkgr:` (<http://orkg.org/orkg/resource/>, e.g. orkgr:R117327),
classes `orkgc:` (orkgc:Dataset, orkgc:Metric), predicates `orkgp:` (orkgp:HAS_DATASET, orkgp:HAS_BENCHMARK,
orkgp:P31); names are rdfs:label literals, matched with FILTER(str(?label) = "...").""",
)
"""ORKG behind a user's SPARQL endpoint (no default endpoint: pass ``--kg-url``)."""

register_profile(ORKG_PROFILE)
