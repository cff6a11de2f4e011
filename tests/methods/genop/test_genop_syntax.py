"""The concrete GENOP syntax, its translation to the paper's algebra, and well-formedness errors (Def. 3)."""

from __future__ import annotations

import pytest

from sparqlab.methods.genop import GenOpSyntaxError, parse_genop_query
from sparqlab.methods.genop.algebra import Join, Minus, Opt, Proj, Union, show

P = "PREFIX : <http://example.org/>\n"


def test_genop_with_several_outputs_model_and_thresholds():
    q = parse_genop_query(P + 'SELECT * WHERE { ?s :p ?x . genop("Name and year of ?x" AS (?n, ?year), '
                          '"gpt-oss-120b", THETA(?n = 0.8)) }')
    (g,) = q.genops
    assert g.outputs == ("n", "year") and g.inputs == {"x"} and g.model == "gpt-oss-120b"
    assert q.thresholds == {"n": 0.8}
    assert q.projection == ("n", "s", "x", "year")


def test_algebra_keeps_group_structure_and_operators():
    q = parse_genop_query(P + """SELECT ?s ?y WHERE {
        ?s :p ?x . { ?s :q ?z . GENOP("about $x" AS ?y, my model) }
        OPTIONAL { ?s :r ?o } { ?s :a ?b } UNION { ?s :c ?b } MINUS { ?s :d ?x } }""")
    top = q.pattern
    assert isinstance(top, Proj) and isinstance(top.pattern, Minus)
    text = show(q.pattern)
    assert 'g1=GenOp("about $x" AS ?y, my model)' in text
    inner = top.pattern.left
    assert isinstance(inner, Join) and isinstance(inner.right, Union) and isinstance(inner.left, Opt)


def test_genop_inside_strings_iris_and_comments_is_not_a_genop():
    q = parse_genop_query(P + 'SELECT ?s WHERE { ?s :p "GENOP(\\"x\\" AS ?y)" . ?s :q <http://e.org/GENOP(> # GENOP(\n }')
    assert q.genops == []


@pytest.mark.parametrize(("text", "message"), [
    ('SELECT ?y WHERE { GENOP("about ?x" AS ?y) }', r"Def. 3 \(i\)"),
    ('SELECT ?x WHERE { ?x :p ?y . GENOP("about ?x" AS ?x) }', "both a placeholder and an output"),
    ('SELECT ?x WHERE { ?x :p ?o . FILTER(?zz = 1) }', r"Def. 3 \(ii\)"),
    ('SELECT ?nope WHERE { ?x :p ?o }', r"Def. 3 \(iii\)"),
    ('SELECT ?x WHERE { ?x :p ?o } ORDER BY ?x', "ORDER BY"),
    ('SELECT ?x WHERE { ?x :p ?o . BIND(1 AS ?b) }', "BIND"),
    ('SELECT ?x WHERE { ?x :p ?o . FILTER(?o > 3) }', "outside the GenOp fragment"),
    ('SELECT ?x WHERE { ?x :p ?o . GENOP("a ?o" AS ?y, THETA(?y = 1.5)) }', "outside"),
    ('SELECT ?x WHERE { ?x :p ?o . GENOP("a ?o" AS ?y, THETA(?q = 0.5)) }', "not an output"),
    ('SELECT ?x WHERE { ?x :p ?o . GENOP("a ?o" AS ?y, THETA(?y = 0.5)) . GENOP("b ?o" AS ?y, THETA(?y = 0.7)) }',
     "already has threshold"),
    ('SELECT ?x WHERE { ?x :p ?o . GENOP(?o AS ?y) }', "string literal"),
    ('SELECT ?x WHERE { ?x :p ?o . GENOP("a ?o" ?y) }', "AS"),
    ('SELECT ?x WHERE { ?x :p ?o . GENOP("a ?o AS ?y) }', "unterminated"),
    ('SELECT ?x WHERE { ?x :p ?o ', "syntax error"),
    ('ASK { ?x :p ?o }', "only SELECT"),
    ("   ", "empty query"),
])
def test_malformed_queries_get_clear_errors(text, message):
    with pytest.raises(GenOpSyntaxError, match=message):
        parse_genop_query(P + text if text.strip() else text)


def test_profile_prefixes_are_predefined():
    q = parse_genop_query('SELECT ?f WHERE { ?f mrel:directed_by ?d }',
                          {"mrel": "http://sparqlab.org/movies/relation/"})
    assert "<http://sparqlab.org/movies/relation/directed_by>" in show(q.pattern)
