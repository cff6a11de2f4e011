"""RDFS domains mean what RDFS says: on an rdfs:domain / rdfs:range schema a property declared on a class applies
to the instances of every subclass (Professor ⊑ Person keeps memberOf), while Wikidata's P2302 reading stays exact."""

import json
from pathlib import Path

from sparqlab.cli import main
from sparqlab.kg import open_kg
from sparqlab.kg.profiles import get_profile
from sparqlab.methods.agents.features import SagaFeatures

TTL = Path(__file__).resolve().parents[2] / "end_to_end" / "own_kg" / "university" / "university.ttl"
UO = "http://uni.example.org/ontology#"


def _filter(*flags, capsys):
    assert main(["schema", "filter", "--kg", str(TTL), "--entity", "ur:GraceHopper", "--format", "json",
                 "--properties", "uo:memberOf,uo:authorOf,uo:teaches,uo:enrolledIn", *flags]) == 0
    report = json.loads(capsys.readouterr().out)
    return [p.removeprefix(UO) for p in report["kept"]], [p.removeprefix(UO) for p in report["removed"]]


def test_a_professor_keeps_the_properties_declared_on_person(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path / "cache"))
    assert _filter(capsys=capsys) == (["memberOf", "authorOf", "teaches"], ["enrolledIn"])
    exact = _filter("--no-subclass-closure", capsys=capsys)  # the earlier exact match, still one flag away
    assert exact == (["teaches"], ["memberOf", "authorOf", "enrolledIn"])


def test_saga_reads_subclass_semantics_from_the_kg_s_declarations():
    with open_kg(TTL, cache=False) as kg:
        university = kg.profile
    assert university.constraints.subclass_semantics
    assert SagaFeatures().for_kg(university).subclass_closure is True
    wikidata = get_profile("wikidata")
    assert not wikidata.constraints.subclass_semantics and SagaFeatures().for_kg(wikidata).subclass_closure is False
    assert SagaFeatures(subclass_closure=False).for_kg(university).subclass_closure is False
    assert SagaFeatures(subclass_closure=True).for_kg(wikidata).subclass_closure is True
