"""The queries the agents write themselves run alike on every engine: SAGA's subclass closure (a ``*`` path from
each class) is the same on oxigraph's server and on Virtuoso, which refuses a path whose start comes from VALUES."""

from __future__ import annotations


def test_the_subclass_closure_is_the_same_on_each_engine(wd_endpoint, wd_store):
    from sparqlab.kg import open_kg
    from sparqlab.methods.agents.schema.index import superclasses

    local = open_kg(wd_store, profile="wikidata", cache=False)
    served = open_kg(wd_endpoint, profile="wikidata", cache=False)
    classes = {row["c"].value for row in local.query("SELECT DISTINCT ?c WHERE { ?c wdt:P279 ?d } LIMIT 3").rows}
    closure = superclasses(local, classes)
    assert classes and closure > classes
    assert superclasses(served, classes) == closure
    local.close()
