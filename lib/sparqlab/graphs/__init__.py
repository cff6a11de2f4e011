"""The KGs the workbench names, one module each: their profiles (:mod:`.profiles`: movies, Wikidata, CK25), the
bundled movie KG's store builder (:mod:`.movies`), Wikidata's element catalogue and search API (:mod:`.wikidata`),
Freebase (its curated schema, fixture, catalogue and search), DBpedia (with its fixture and search) and ORKG. Each
registers itself on import; :mod:`sparqlab.core.plugins` lists them, so a KG is found by name. Any other KG (an RDF
file, a store folder, an endpoint) gets the profile :mod:`.derive` reads from its own data.

How a KG is reached (an embedded store, an endpoint), the ``KGProfile`` type and the views agents use are
:mod:`sparqlab.kg`'s; adding a KG: docs/adding-a-kg.md.
"""

# The KG layer imports every KG module when it loads and then fixes the prefixes queries are read with: load it
# before one of this package's modules runs, so that module is imported whole by it (not seen half-run).
import sparqlab.kg  # noqa: F401
