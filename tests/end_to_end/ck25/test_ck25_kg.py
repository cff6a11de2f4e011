"""The ck25 KG: store built from both Turtle files, profile, schema index with formal rdfs domains/ranges."""

from __future__ import annotations

import json

from sparqlab.graphs.profiles import CK25_VOCAB


def test_store_holds_both_turtle_files(ck25_kg):
    from sparqlab.text2sparql.ck25_store import ensure_store

    stats = json.loads((ensure_store().parent / "build.json").read_text())
    assert stats["triples"] == 26_907  # PROVENANCE.md's count for the two files
    assert stats["domain_declarations"] + stats["range_declarations"] == 58
    # the challenge metadata graph is loaded next to the product data
    assert ck25_kg.query("ASK { <https://text2sparql.aksw.org/2025/corporate/> ?p ?o }").boolean


def test_profile_prefixes_need_no_declaration(ck25_kg):
    result = ck25_kg.query("SELECT ?d WHERE { ?e rdfs:label \"Karen Brant\" ; pv:memberOf ?d }")
    assert [row["d"].value for row in result.rows] == ["http://ld.company.org/prod-instances/dept-73191"]


def test_label_search_finds_employee(ck25_kg):
    hits = ck25_kg.search("Karen Brant")
    assert hits[0].id == "http://ld.company.org/prod-instances/empl-Karen.Brant%40company.org"


def test_schema_index_reads_rdfs_domain_range_as_formal(ck25_kg, tmp_path):
    from sparqlab.methods.agents.schema import load_or_build

    index = load_or_build(ck25_kg, tmp_path / "schema", sample=10)
    member_of = CK25_VOCAB + "memberOf"
    assert index.domain_source(member_of) == "formal"
    assert index.formal_domain(member_of) == {CK25_VOCAB + "Agent"}
    assert index.range(CK25_VOCAB + "hasManager") == {CK25_VOCAB + "Manager"}
    declared = {p for p in index.properties if index.domain_source(p) == "formal"}
    assert len(declared) >= 25
