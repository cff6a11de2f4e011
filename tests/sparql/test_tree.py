"""The one SPARQL parser (:mod:`sparqlab.sparql.tree`): the SERVICE decision, blank-node labels, and the tolerant
mode that reads what it can of a broken or cut-off draft (SAGA checks an agent's query before the KG sees it)."""

import pytest

from sparqlab.sparql.tree import RDF, Group, SparqlParseError, Term, Triple, parse_query, parts_of, uses_service

WD, WDT = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"
PREFIXES = {"wd": WD, "wdt": WDT}


def _triples(query) -> list[tuple[str, str, str]]:
    """Every triple pattern of a parsed query as ``(subject, predicate, object)`` values, group by group."""
    return [(t.subject.value, " ".join(p.value if isinstance(p, Term) else p for p in t.predicate), t.object.value)
            for part in parts_of(query) if isinstance(part, Group) for t in part.elements if isinstance(t, Triple)]


def test_service_decision_comes_from_the_algebra():
    """The algebra sees SERVICE where a tokenizer would be fooled, and not where it is only a name or a string."""
    assert uses_service("ASK { {} .SERVICE <http://127.0.0.1:9/x> {?a ?b ?c} }")
    assert uses_service("SELECT * { ?s ?p ?o FILTER EXISTS { service <http://x/> { ?a ?b ?c } } }")
    assert not uses_service("SELECT ?service WHERE { ?service <http://x#SERVICE> 'SERVICE' }")
    assert not uses_service('SELECT * WHERE { ?s <http://example.org/service> "SERVICE <http://x> {}" }')


def test_a_blank_node_label_ends_before_the_dot_that_ends_its_pattern():
    query = parse_query("SELECT ?v WHERE { wd:Q1 wdt:P1 _:st. _:st wdt:P2 ?v }", PREFIXES)
    assert _triples(query) == [(WD + "Q1", WDT + "P1", "st"), ("st", WDT + "P2", "v")]


VALID = [
    "SELECT ?x WHERE { ?x wdt:P31 wd:Q5 ; wdt:P19 ?y , ?z . FILTER(?y != wd:Q1) } ORDER BY ?x LIMIT 3",
    "PREFIX ex: <http://ex/> ASK { { ?a a ex:T } UNION { ?a ex:p [ ex:q 1 ] } OPTIONAL { ?a ex:r ?b } }",
    "SELECT ?n WHERE { { SELECT (COUNT(?x) AS ?n) WHERE { ?x wdt:P31/wdt:P279* wd:Q5 } } MINUS { ?n ?p ?o } }",
]


@pytest.mark.parametrize("text", VALID)
def test_the_tolerant_mode_reads_a_valid_query_as_the_strict_one(text):
    strict, tolerant = parse_query(text, PREFIXES), parse_query(text, PREFIXES, tolerant=True)
    assert tolerant.where == strict.where and tolerant.form == strict.form and _triples(tolerant)


@pytest.mark.parametrize(("draft", "readable"), [
    # a pattern without its object: passed over to its '.'; the next pattern still counts
    ("SELECT ?c WHERE { wd:Q42 wdt:P19 . wd:Q42 wdt:P17 ?c }", [(WD + "Q42", WDT + "P17", "c")]),
    # cut off inside an OPTIONAL: the groups end with the text
    ("SELECT ?c WHERE { wd:Q42 wdt:P17 ?c . OPTIONAL { ?c wdt:P31 wd:Q6256 . ?c wdt:P36",
     [(WD + "Q42", WDT + "P17", "c"), ("c", WDT + "P31", WD + "Q6256")]),
    # a projection the grammar refuses: the first group is still read
    ("SELECT ?x, ?y WHERE { ?x wdt:P31 wd:Q5 }", [("x", WDT + "P31", WD + "Q5")]),
    # a misspelt modifier and a stray backtick
    ("SELECT ?x WHERE { ?x wdt:P31 wd:Q5 ` } LIMT 3", [("x", WDT + "P31", WD + "Q5")]),
    # an unreadable FILTER between two patterns
    ("SELECT ?x WHERE { ?x wdt:P31 wd:Q5 . FILTER ?x > . ?x a wd:Q1 }",
     [("x", WDT + "P31", WD + "Q5"), ("x", RDF + "type", WD + "Q1")]),
])
def test_the_tolerant_mode_reads_what_it_can_of_a_broken_draft(draft, readable):
    with pytest.raises(SparqlParseError):
        parse_query(draft, PREFIXES)
    assert _triples(parse_query(draft, PREFIXES, tolerant=True)) == readable


@pytest.mark.parametrize("text", ["", "   ", "SELECT ?x WHERE " + "{" * 65 + "}" * 65])
def test_the_tolerant_mode_still_refuses_an_empty_or_too_deep_query(text):
    with pytest.raises(SparqlParseError, match="empty query|nested 65 deep"):
        parse_query(text, tolerant=True)
