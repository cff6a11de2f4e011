"""The schema index: formal domain/range from Wikidata P2302+P2308 and rdfs:domain/range, empirical fallback,
unknown = unconstrained, coverage masking."""

import pytest

from sparqlab.kg import open_kg
from sparqlab.methods.agents.schema import PropertySchema, SchemaIndex, build_schema_index

RDFS_TTL = """\
@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:knows rdfs:label "knows" ; rdfs:domain ex:Person ; rdfs:range ex:Person .
ex:Person rdfs:label "Person" .
ex:alice a ex:Person ; ex:knows ex:bob ; ex:likes ex:tea .
ex:bob a ex:Person ; ex:likes ex:coffee .
ex:tea a ex:Drink . ex:coffee a ex:Drink .
"""


def wd(local: str) -> str:
    """Full IRI of a ``wd:`` item (``Q5``) or a ``wdt:`` direct-claim predicate (``P17``)."""
    base = "http://www.wikidata.org/prop/direct/" if local.startswith("P") else "http://www.wikidata.org/entity/"
    return base + local


def test_wikidata_constraints_give_formal_domain_and_range(wd_index):
    p17 = wd_index.describe(wd("P17"))
    assert set(p17["domain"]) == {wd("Q515"), wd("Q486972"), wd("Q2221906"), wd("Q82794")}
    assert p17["range"] == [wd("Q6256")] and p17["source"] == "formal"
    assert wd_index.domain(wd("P27")) == {wd("Q5")} and wd_index.range(wd("P27")) == {wd("Q6256")}
    assert wd_index.label(wd("P27")) == "country of citizenship" and wd_index.label(wd("Q5")) == "human"
    # infrastructure predicates (type, subclass, constraint statements) are not indexed as properties
    assert wd("P31") not in wd_index.properties and wd("P279") not in wd_index.properties


def test_undeclared_properties_get_sampled_types_or_stay_unconstrained(wd_index):
    assert wd_index.domain(wd("P106")) == {wd("Q5")} and wd_index.domain_source(wd("P106")) == "empirical"
    assert wd_index.range(wd("P106")) == {wd("Q28640")}
    assert wd_index.domain(wd("P577")) == {wd("Q7725634")}
    assert wd_index.range(wd("P577")) == set() and wd_index.range_source(wd("P577")) == "none"  # literal values
    without = wd_index.with_empirical_fallback(False)
    assert without.domain(wd("P106")) == set() and without.describe(wd("P106"))["source"] == "none"
    assert without.domain(wd("P17")) == wd_index.domain(wd("P17"))  # formal ones unaffected
    assert wd_index.domain("http://example.org/not-indexed") == set()


def test_rdfs_domain_and_range(tmp_path):
    path = tmp_path / "small.ttl"
    path.write_text(RDFS_TTL, encoding="utf-8")
    with open_kg(path, cache=False) as kg:
        index = build_schema_index(kg, progress=False)
    knows, likes = "http://example.org/knows", "http://example.org/likes"
    assert index.domain(knows) == {"http://example.org/Person"} and index.domain_source(knows) == "formal"
    assert index.range(likes) == {"http://example.org/Drink"} and index.range_source(likes) == "empirical"
    assert "http://www.w3.org/2000/01/rdf-schema#domain" not in index.properties


def _declared(n: int) -> SchemaIndex:
    props = {f"p{i}": PropertySchema(f"p{i}", formal_domain=(f"C{i}",), empirical_domain=(f"E{i}",))
             for i in range(n)}
    props["free"] = PropertySchema("free")
    return SchemaIndex("test", props)


def test_masking_keeps_the_requested_fraction_reproducibly_and_differently_per_seed():
    index = _declared(20)
    half = index.with_coverage(0.5, seed=1)
    assert len(half.masked) == 10 and "free" not in half.masked
    assert half.masked == index.with_coverage(0.5, seed=1).masked
    assert len({index.with_coverage(0.5, seed=s).masked for s in range(5)}) == 5
    assert len(index.with_coverage(0.25, seed=0).masked) == 15
    assert index.with_coverage(1.0).masked == frozenset() and len(index.with_coverage(0.0).masked) == 20
    # not cumulative: masking a masked view starts from the full formal schema again
    assert half.with_coverage(1.0).masked == frozenset()
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        index.with_coverage(1.5)


def test_a_masked_property_falls_back_like_an_undeclared_one():
    view = _declared(4).with_coverage(0.0)
    assert view.domain("p0") == {"E0"} and view.domain_source("p0") == "empirical"
    assert view.formal_domain("p0") == frozenset()
    assert view.with_empirical_fallback(False).domain("p0") == set()
    assert view.describe("p0")["masked"] is True and _declared(4).describe("p0")["masked"] is False


def test_index_round_trips_through_json(tmp_path, wd_index):
    path = tmp_path / "schema.json"
    wd_index.save(path)
    loaded = SchemaIndex.load(path)
    assert loaded.properties == wd_index.properties and loaded.class_labels == wd_index.class_labels
