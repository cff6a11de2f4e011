"""P_tau(e) (Eq. 3), the persistent type state and the execute-time conflict check, pinned on a hand-made index."""

from sparqlab.graphs.profiles import WIKIDATA
from sparqlab.methods.agents.schema import (
    PropertySchema,
    SchemaIndex,
    TypeState,
    domain_conflicts,
    triple_patterns,
    type_filter,
)
from sparqlab.methods.agents.schema.patterns import RDF_TYPE, type_patterns

WD, WDT = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"
HUMAN, CITY, COUNTRY, SETTLEMENT = WD + "Q5", WD + "Q515", WD + "Q6256", WD + "Q486972"
INDEX = SchemaIndex("test", {
    WDT + "P19": PropertySchema(WDT + "P19", "place of birth", formal_domain=(HUMAN,), formal_range=(CITY,)),
    WDT + "P17": PropertySchema(WDT + "P17", "country", formal_domain=(CITY, COUNTRY), formal_range=(COUNTRY,)),
    WDT + "P1082": PropertySchema(WDT + "P1082", "population", formal_domain=(SETTLEMENT,)),
    WDT + "P106": PropertySchema(WDT + "P106", "occupation", empirical_domain=(HUMAN,)),
    WDT + "P999": PropertySchema(WDT + "P999", "unconstrained"),
})
PROPS = [WDT + "P19", WDT + "P17", WDT + "P1082", WDT + "P106", WDT + "P999", WDT + "P5000"]


def test_filter_keeps_unknown_and_compatible_properties_and_removes_conflicting_ones():
    human = type_filter(PROPS, {HUMAN}, INDEX)
    assert human.kept == [WDT + "P19", WDT + "P106", WDT + "P999", WDT + "P5000"]
    assert human.removed == [WDT + "P17", WDT + "P1082"]
    city = type_filter(PROPS, {CITY}, INDEX)
    assert city.removed == [WDT + "P19", WDT + "P1082"]  # P1082's domain is a superclass of city
    assert type_filter(PROPS, {CITY, SETTLEMENT}, INDEX).removed == [WDT + "P19"]  # closed types


def test_sampled_evidence_is_soft_and_filters_only_in_the_empirical_filter_view():
    """P106's domain is only sampled (human): a hint for a city, never a removal (SAGA "Schema index": soft
    evidence); the ``empirical_filter`` view is the earlier reading that removed it."""
    assert INDEX.domain(WDT + "P106") == {HUMAN} and INDEX.filter_classes(WDT + "P106") == frozenset()
    assert WDT + "P106" in type_filter(PROPS, {CITY}, INDEX).kept
    hard = INDEX.with_empirical_filter(True)
    assert type_filter(PROPS, {CITY}, hard).removed == [WDT + "P19", WDT + "P1082", WDT + "P106"]
    # at 0 % coverage only sampled evidence is left: nothing is removed by default, P106 and more otherwise
    assert type_filter(PROPS, {CITY}, INDEX.with_coverage(0.0)).removed == []
    assert type_filter(PROPS, {CITY}, hard.with_coverage(0.0)).removed == [WDT + "P106"]


def test_filter_removes_nothing_without_types_and_uses_range_for_incoming_edges():
    assert type_filter(PROPS, set(), INDEX).removed == []
    incoming = type_filter([WDT + "P19", WDT + "P17"], {COUNTRY}, INDEX, side="range")
    assert incoming.kept == [WDT + "P17"] and incoming.removed == [WDT + "P19"]


def test_masking_and_fallback_change_what_the_filter_knows():
    masked = INDEX.with_coverage(0.0)
    assert type_filter(PROPS, {HUMAN}, masked).removed == []
    assert type_filter(PROPS, {CITY}, INDEX.with_empirical_fallback(False)).removed == [WDT + "P19", WDT + "P1082"]


def test_type_state_persists_across_steps_and_reads_variable_types_from_queries():
    theta = TypeState()
    assert theta.add(WD + "Q42", {HUMAN}, label="Douglas Adams", class_labels={HUMAN: "human"})
    assert not theta.add(WD + "Q42", {HUMAN})  # nothing new
    query = ("SELECT ?c WHERE { ?x wdt:P31 wd:Q515 ; wdt:P17 ?c . ?c a wd:Q6256 . "
             "FILTER(?x != wd:Q1) VALUES ?y { wd:Q2 } }")
    learnt = theta.observe_query(triple_patterns(query, WIKIDATA.prefixes), WIKIDATA.type_predicate)
    assert learnt == [("?x", CITY), ("?c", COUNTRY)]
    later = "SELECT ?p WHERE { ?p wdt:P31/wdt:P279* wd:Q5 }"
    theta.observe_query(triple_patterns(later, WIKIDATA.prefixes), WIKIDATA.type_predicate)
    assert theta.get(WD + "Q42") == {HUMAN} and theta.get("?x") == {CITY} and theta.get("?p") == {HUMAN}
    assert [term for term, _ in theta.recent(2)] == ["?c", "?p"]
    assert "Douglas Adams (wd:Q42): human" in theta.render(5, WIKIDATA.shorten)


def test_conflict_only_when_a_known_formal_domain_excludes_the_known_subject_type():
    theta = TypeState()
    theta.add(WD + "Q42", {HUMAN})

    def conflicts(query, state=theta, index=INDEX, closure=None):
        triples = triple_patterns(query, WIKIDATA.prefixes)
        state.observe_query(triples, WIKIDATA.type_predicate)
        return [t.predicate for t, _, _ in domain_conflicts(triples, state, index, closure)]

    assert conflicts("SELECT ?c WHERE { wd:Q42 wdt:P17 ?c }") == [WDT + "P17"]
    assert conflicts("SELECT ?c WHERE { wd:Q42 wdt:P19 ?c }") == []                # compatible
    assert conflicts("SELECT ?c WHERE { wd:Q7 wdt:P17 ?c }") == []                 # subject type unknown
    assert conflicts("SELECT ?c WHERE { wd:Q42 wdt:P999 ?c }") == []               # no declared domain
    assert conflicts("SELECT ?o WHERE { ?x wdt:P31 wd:Q515 . ?x wdt:P106 ?o }") == []  # empirical only
    assert conflicts("SELECT ?c WHERE { ?x wdt:P31 wd:Q515 . ?x wdt:P19 ?c }") == [WDT + "P19"]  # variable type
    assert conflicts("SELECT ?c WHERE { wd:Q42 wdt:P17 ?c }", index=INDEX.with_coverage(0.0)) == []  # masked
    city = TypeState()
    city.add(WD + "Q1", {CITY})
    assert conflicts("SELECT ?n WHERE { wd:Q1 wdt:P1082 ?n }", state=city) == [WDT + "P1082"]
    assert conflicts("SELECT ?n WHERE { wd:Q1 wdt:P1082 ?n }", state=city, closure={CITY: {SETTLEMENT}}) == []


def test_triple_patterns_follow_abbreviations_and_skip_expressions():
    query = """PREFIX ex: <http://ex/> SELECT ?x (COUNT(?y) AS ?n) WHERE {
      ?x wdt:P31/wdt:P279* wd:Q5 ; wdt:P19 ?y , ?z . FILTER(regex(str(?x), "a b c"))
      BIND(str(?x) AS ?s) VALUES ?q { wd:Q1 wd:Q2 wd:Q3 } OPTIONAL { ?y wdt:P17 wd:Q30 }
      { SELECT ?a ?b ?c WHERE { ?a a ex:Thing } } } GROUP BY ?x ORDER BY DESC(?n) LIMIT 5"""
    triples = [(t.subject, t.predicate, t.object) for t in triple_patterns(query, WIKIDATA.prefixes)]
    assert triples == [
        ("?x", f"<{WDT}P31>/<{WDT}P279>*", HUMAN), ("?x", WDT + "P19", "?y"), ("?x", WDT + "P19", "?z"),
        ("?y", WDT + "P17", WD + "Q30"), ("?a", RDF_TYPE, "http://ex/Thing"),
    ]
    assert type_patterns(triple_patterns(query, WIKIDATA.prefixes), WIKIDATA.type_predicate) == [
        ("?x", HUMAN), ("?a", "http://ex/Thing")]


def test_triple_patterns_skip_comments_read_spaced_paths_and_what_a_broken_draft_holds():
    """The [BLOCKED] check sees a draft before the KG does: a comment is no pattern, a path written with spaces is
    one predicate, and a pattern the parser cannot read (here one without its object) leaves the others checked."""
    draft = """SELECT ?c WHERE { # wd:Q42 wdt:P1082 ?n is only a comment
      ?x wdt:P31 / wdt:P279 * wd:Q515 . ?x wdt:P19 . wd:Q42 wdt:P17 ?c"""
    triples = triple_patterns(draft, WIKIDATA.prefixes)
    assert [(t.subject, t.predicate, t.object) for t in triples] == [
        ("?x", f"<{WDT}P31>/<{WDT}P279>*", CITY), (WD + "Q42", WDT + "P17", "?c")]
    theta = TypeState()
    theta.add(WD + "Q42", {HUMAN})
    assert [t.predicate for t, _, _ in domain_conflicts(triples, theta, INDEX)] == [WDT + "P17"]
