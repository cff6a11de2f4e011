"""Structural exact match (DeSQ §3.5): equal up to reordering triple patterns / filters inside a group and a
consistent renaming of variables — nothing else. Each case below is a way a careless change to the canonical form
would make two different queries equal or two equal queries different."""

from __future__ import annotations

import pytest

from sparqlab.eval.structural import canonical_form, structural_em

P = "PREFIX ex: <http://example.org/> "
BASE = P + "SELECT ?film WHERE { ?film ex:directed_by ?d . ?d ex:name 'Ridley Scott' . ?film ex:year ?y }"


@pytest.mark.parametrize("predicted", [
    # every variable renamed, consistently
    P + "SELECT ?x WHERE { ?x ex:directed_by ?who . ?who ex:name 'Ridley Scott' . ?x ex:year ?when }",
    # triple patterns reordered (and variables first seen in another order)
    P + "SELECT ?film WHERE { ?film ex:year ?y . ?d ex:name 'Ridley Scott' . ?film ex:directed_by ?d }",
    # both at once, with prefixes expanded and keywords in lower case
    "select ?a where { ?b <http://example.org/name> 'Ridley Scott' . ?a <http://example.org/year> ?c . "
    "?a <http://example.org/directed_by> ?b }",
])
def test_renamed_and_reordered_queries_match(predicted):
    assert structural_em(predicted, BASE) == 1
    assert canonical_form(predicted) == canonical_form(BASE)


@pytest.mark.parametrize("predicted, why", [
    (P + "SELECT ?film WHERE { ?film ex:directed_by ?d . ?film ex:name 'Ridley Scott' . ?film ex:year ?y }",
     "rewired: the name hangs on the film, not the director"),
    (P + "SELECT ?film WHERE { ?d ex:directed_by ?film . ?d ex:name 'Ridley Scott' . ?film ex:year ?y }",
     "direction of one pattern reversed"),
    (P + "SELECT ?y WHERE { ?film ex:directed_by ?d . ?d ex:name 'Ridley Scott' . ?film ex:year ?y }",
     "another projected variable"),
    (P + "SELECT ?film WHERE { ?film ex:directed_by ?d . ?d ex:name 'Ridley Scot' . ?film ex:year ?y }",
     "another constant"),
    (P + "SELECT ?film WHERE { ?film ex:written_by ?d . ?d ex:name 'Ridley Scott' . ?film ex:year ?y }",
     "another property"),
    (P + "SELECT ?film WHERE { ?film ex:directed_by ?d . ?d ex:name 'Ridley Scott' . ?film ex:year ?y "
         "FILTER(?y > 1990) }", "a FILTER added"),
    (P + "SELECT DISTINCT ?film WHERE { ?film ex:directed_by ?d . ?d ex:name 'Ridley Scott' . ?film ex:year ?y }",
     "DISTINCT"),
    (BASE + " ORDER BY ?y", "ORDER BY"),
    (BASE + " LIMIT 1", "LIMIT"),
    (P + "SELECT (COUNT(?film) AS ?n) WHERE { ?film ex:directed_by ?d . ?d ex:name 'Ridley Scott' . "
         "?film ex:year ?y }", "an aggregate"),
])
def test_a_real_difference_does_not_match(predicted, why):
    assert structural_em(predicted, BASE) == 0, why


def test_variables_are_renamed_consistently_not_freely():
    """Two variables swapped in one pattern but not the others is a different query, though every single pattern
    alone could be renamed to match."""
    gold = P + "SELECT ?a WHERE { ?a ex:p ?b . ?b ex:q ?c . ?c ex:r ?a }"
    cycle = P + "SELECT ?x WHERE { ?y ex:p ?z . ?z ex:q ?x . ?x ex:r ?y }"  # the same cycle, other start
    assert structural_em(cycle, gold) == 0  # the projected variable sits elsewhere on the cycle
    assert structural_em(P + "SELECT ?y WHERE { ?y ex:p ?z . ?z ex:q ?x . ?x ex:r ?y }", gold) == 1


def test_symmetric_queries_match_their_reorderings():
    """Interchangeable patterns (the hard case for canonical labelling) still match after renaming."""
    n = 12
    gold = P + "SELECT * WHERE { " + " . ".join(f"?a{i} ex:p ?b{i}" for i in range(n)) + " }"
    shuffled = P + "SELECT * WHERE { " + " . ".join(f"?x{i} ex:p ?y{i}" for i in reversed(range(n))) + " }"
    assert structural_em(shuffled, gold) == 1
    chained = P + "SELECT * WHERE { " + " . ".join(f"?a{i} ex:p ?a{i + 1}" for i in range(n)) + " }"
    assert structural_em(chained, gold) == 0


def test_scopes_count_a_pattern_moved_into_optional_is_different():
    gold = P + "SELECT ?f WHERE { ?f ex:p ?x . OPTIONAL { ?f ex:q ?y } }"
    assert structural_em(P + "SELECT ?g WHERE { OPTIONAL { ?g ex:q ?z } ?g ex:p ?w }", gold) == 1
    assert structural_em(P + "SELECT ?f WHERE { ?f ex:q ?y . OPTIONAL { ?f ex:p ?x } }", gold) == 0


def test_no_or_unparseable_prediction_scores_zero():
    assert structural_em(None, BASE) == 0
    assert structural_em("SELECT ?x WHERE { ?x", BASE) == 0
