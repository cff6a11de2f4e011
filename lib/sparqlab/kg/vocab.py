"""Constants shared by the KG modules: standard RDF vocabularies, Wikidata's namespace root, the HTTP user
agent (``rdf:`` and ``xsd:``, which the SPARQL language fixes, come from :mod:`sparqlab.sparql.tree`). A leaf module
(it imports nothing from ``sparqlab.kg``), so profiles, results, the movie builder, search
and endpoints can all use these without importing each other."""

from __future__ import annotations

from sparqlab import __version__
from sparqlab.sparql.tree import RDF, XSD

RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
SCHEMA = "http://schema.org/"

STANDARD_PREFIXES = {"rdf": RDF, "rdfs": RDFS, "xsd": XSD, "owl": OWL}
"""Prefixes every profile predefines; any SPARQL 1.1 endpoint understands their IRIs."""

WD = "http://www.wikidata.org/"
"""Wikidata's namespace root: its entities, properties and statements, and the prefixes its query service
predefines (:data:`sparqlab.kg.profiles.WDQS_PREFIXES`) are below it."""

USER_AGENT = f"sparqlab/{__version__} (text-to-SPARQL research workbench; SPARQLWrapper)"
"""What the workbench sends to public SPARQL and search services (Wikimedia asks for an identifying agent)."""
