"""The P2309 relation qualifier of type constraints ("instance of", "subclass of", "instance or
subclass of") decides which classes of an entity a declared domain is matched against; matching itself stays the
exact intersection of Eq. (3), with subclass closure an option."""

from sparqlab.graphs.profiles import WIKIDATA
from sparqlab.methods.agents.schema import (
    PropertySchema,
    SchemaIndex,
    TypeState,
    domain_conflicts,
    triple_patterns,
    type_filter,
)

WD, WDT = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"
CITY, SETTLEMENT, SECOND_ORDER, HUMAN = WD + "Q515", WD + "Q486972", WD + "Q24017414", WD + "Q5"
STUDIED, SUB_ONLY, PLAIN = WDT + "P2579", WDT + "P9001", WDT + "P19"
INDEX = SchemaIndex("test", {
    STUDIED: PropertySchema(STUDIED, formal_domain=(SETTLEMENT,), domain_relation="either"),
    SUB_ONLY: PropertySchema(SUB_ONLY, formal_domain=(SETTLEMENT,), domain_relation="subclass"),
    PLAIN: PropertySchema(PLAIN, formal_domain=(HUMAN,)),
})
PROPS = [STUDIED, SUB_ONLY, PLAIN]


def test_the_index_reads_the_relation_qualifier(wd_index):
    assert wd_index.relation(STUDIED) == "either" and wd_index.domain(STUDIED) == {SETTLEMENT}
    assert wd_index.relation(PLAIN) == "instance"  # explicit "instance of"
    assert wd_index.relation(WDT + "P17") == "instance"  # no qualifier: "instance of"
    assert wd_index.relation(WDT + "P106") == "instance"  # sampled evidence has no relation
    assert wd_index.describe(STUDIED)["domain_relation"] == "either"


def test_a_class_is_matched_through_its_superclasses_when_the_relation_allows_it():
    # the class "city": instance of "second-order class", subclass of "human settlement"
    city_class = type_filter(PROPS, {SECOND_ORDER}, INDEX, superclasses={CITY, SETTLEMENT})
    assert city_class.kept == [STUDIED, SUB_ONLY] and city_class.removed == [PLAIN]
    # ignoring the relation (instance types only) would remove both: the earlier behaviour
    assert type_filter(PROPS, {SECOND_ORDER}, INDEX).removed == [STUDIED, PLAIN]
    # an instance (a city): "instance or subclass of" matches its types exactly as Eq. (3) writes it, so a
    # domain on the superclass needs the closure; "subclass of" knows nothing about an instance and keeps it
    london = type_filter(PROPS, {CITY}, INDEX)
    assert london.removed == [STUDIED, PLAIN] and SUB_ONLY in london.kept
    assert type_filter(PROPS, {CITY, SETTLEMENT}, INDEX).removed == [PLAIN]  # τ closed under subclass-of


def test_blocked_check_uses_the_superclasses_of_a_looked_up_class():
    state = TypeState()
    state.add(CITY, {SECOND_ORDER})
    triples = triple_patterns("SELECT ?s WHERE { wd:Q515 wdt:P2579 ?s . wd:Q515 wdt:P19 ?p }", WIKIDATA.prefixes)
    assert [t.predicate for t, _, _ in domain_conflicts(triples, state, INDEX)] == [STUDIED, PLAIN]
    state.superclasses[CITY] = {CITY, SETTLEMENT}
    assert [t.predicate for t, _, _ in domain_conflicts(triples, state, INDEX)] == [PLAIN]
