"""Typed terms, lexicalisation, Sim and variable-indexed compatibility (Defs 4–9)."""

from __future__ import annotations

import pytest

from sparqlab.core.event_loops import run_sync
from sparqlab.methods.genop.terms import Compatibility, Lexicaliser, Mu, TypedTerm, iri_fallback, normalise_text

EX = "http://example.org/"
ART = TypedTerm.rdf("uri", EX + "Art")
ART2 = TypedTerm.rdf("uri", EX + "Art2")
GEN_ART = TypedTerm.gen("art")


def compat(similarity="normalised", thresholds=None, labels=None) -> Compatibility:
    labels = labels if labels is not None else {EX + "Art": [("Art", "")], EX + "Art2": [("ART", "en")]}

    async def fetch(iris):
        return {i: labels[i] for i in iris if i in labels}

    return Compatibility(Lexicaliser(fetch), similarity, thresholds)


def test_typed_terms_keep_their_origin_and_plain_literals_drop_xsd_string():
    assert TypedTerm.gen("Paris") != TypedTerm.rdf("literal", "Paris")
    assert TypedTerm.rdf("literal", "x", "http://www.w3.org/2001/XMLSchema#string") == TypedTerm.rdf("literal", "x")
    assert TypedTerm.rdf("literal", "x", lang="EN").lang == "en"
    assert sorted([GEN_ART, ART]) == [ART, GEN_ART]          # ⪯ puts RDF terms first
    with pytest.raises(ValueError):
        TypedTerm.rdf("gen", "x")


def test_lexicalisation_prefers_labels_then_a_stable_iri_rendering():
    lex = Lexicaliser(None)
    run_sync(lex.prefetch([TypedTerm.rdf("uri", "http://x.org/entity/Person/Ridley%20Scott")]))
    assert lex.canon(TypedTerm.rdf("uri", "http://x.org/entity/Person/Ridley%20Scott")) == "Ridley Scott"
    assert iri_fallback("http://x.org/ns#Thing") == "Thing"
    c = compat(labels={EX + "Art": [("Kunst", "de"), ("Art", "en"), ("Art plain", "")]})
    run_sync(c.lex.prefetch([ART]))
    assert c.lex.canon(ART) == "Art plain"                    # "" ranks before "en" by default
    assert c.lex.canon(TypedTerm.rdf("literal", "42")) == "42"


def test_rdf_terms_are_compatible_only_when_equal():
    c = compat()
    run_sync(c.observe("v", [ART, ART2]))
    assert c.compat("v", ART, ART) and not c.compat("v", ART, ART2)


def test_generated_term_matches_an_rdf_term_by_its_label_at_theta_one():
    c = compat()
    run_sync(c.observe("v", [ART, GEN_ART]))
    assert c.sim(ART, GEN_ART) == 1.0 and c.compat("v", ART, GEN_ART)
    assert c.rep("v", GEN_ART) == ART                          # the ⪯-minimal member represents the class
    assert c.union(Mu({"v": GEN_ART}), Mu({"v": ART, "w": GEN_ART}))["v"] == ART
    exact = compat("exact")
    run_sync(exact.observe("v", [ART, GEN_ART]))
    assert not exact.compat("v", ART, GEN_ART)                 # "Art" != "art" under exact similarity


def test_compatibility_is_variable_indexed():
    c = compat()
    run_sync(c.observe("v", [ART, GEN_ART]))
    run_sync(c.observe("w", [ART]))
    assert c.compat("v", ART, GEN_ART)
    assert c.compatible(Mu({"v": ART}), Mu({"v": GEN_ART}))


def test_the_closure_of_similarity_links_rdf_terms_through_a_generated_term():
    c = compat()
    run_sync(c.observe("v", [ART, ART2]))
    assert not c.compat("v", ART, ART2)
    run_sync(c.observe("v", [GEN_ART]))                        # "Art" ≈ "art" ≈ "ART" (Def. 7 closure)
    assert c.compat("v", ART, ART2)


def test_thresholds_below_one_use_the_similarity_value():
    near = TypedTerm.gen("Florenz")
    far = TypedTerm.gen("Tokyo")
    florence = TypedTerm.gen("Florence")
    c = compat("ratio", {"v": 0.8})
    run_sync(c.observe("v", [near, far, florence]))
    assert c.compat("v", near, florence) and not c.compat("v", far, florence)
    strict = compat("ratio")
    run_sync(strict.observe("v", [near, florence]))
    assert not strict.compat("v", near, florence)
    with pytest.raises(ValueError):
        compat(thresholds={"v": 0})


def test_similarities_are_symmetric():
    from sparqlab.methods.genop.terms import SIMILARITIES

    for fn in SIMILARITIES.values():
        assert fn("Blade Runner", "blade runner 2049") == fn("blade runner 2049", "Blade Runner")
    assert normalise_text("  The  Matrix! ") == "the matrix"


def test_mappings_are_hashable_and_restrictable():
    m = Mu({"x": ART, "y": GEN_ART})
    assert m.restrict(["y", "z"]) == Mu({"y": GEN_ART}) and hash(m) == hash(Mu({"y": GEN_ART, "x": ART}))
    assert len({m, Mu({"x": ART, "y": GEN_ART})}) == 1
