"""Gold snapshots: `sparqlab data snapshot-gold` executes a dataset's gold queries once and keeps the answers; runs
score against the snapshot (found by name or given as a file) instead of a KG that drifted, say so in
metrics.json, and record its digest in the run id."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field

import pytest

from sparqlab.cli import main
from sparqlab.data import load
from sparqlab.data.gold_snapshot import GoldSnapshot, gold_snapshots_dir, snapshot_name, take_snapshot
from sparqlab.kg.embedded import LenientLoad
from sparqlab.platform import Method, MethodConfig, MethodOutput
from sparqlab.runs import RunConfig, run
from support.wikidata_fixtures import WIKIDATA_FIXTURES

WD = "http://www.wikidata.org/entity/"
GOLD = {
    "g1": "SELECT ?x WHERE { wd:Q1045540 wdt:P50 ?x }",
    "g2": "SELECT ?x WHERE { wd:Q28218 wdt:P17 ?x }",
    "g3": "SELECT ?p WHERE { wd:Q1930 wdt:P1082 ?p }",
    "g4": "SELECT ?x WHERE { wd:Q1045540 wdt:P57 ?x }",  # nothing: a gold error
    "g5": "SELECT ?x WHERE { wd:Q1045540 wdt:P50 ?x . FILTER(?x = ) }",  # does not parse: a gold error
}


@dataclass(frozen=True)
class FixedConfig(MethodConfig):
    """- ``queries``: question id -> the final query."""

    queries: dict[str, str] = field(default_factory=dict)


class FixedQueries(Method):
    """Answers each question with a given query (no model)."""

    name = "fixed"
    config_class = FixedConfig
    roles = ()
    needs_model = False

    async def answer(self, question, ctx):
        return MethodOutput(self.config.queries.get(question.id))


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "goldq.jsonl"
    path.write_text("".join(json.dumps({"id": qid, "text": f"question {qid}", "gold_sparql": sparql, "kg": "wikidata"})
                            + "\n" for qid, sparql in GOLD.items()), encoding="utf-8")
    return path


@pytest.fixture
def drifted(tmp_path):
    """The hand-written fixture after an edit: White Fang gets a second author."""
    path = tmp_path / "drifted.ttl"
    path.write_text(WIKIDATA_FIXTURES["handwritten"].read_text(encoding="utf-8")
                    + "\nwd:Q1045540 wdt:P50 wd:Q900002 .\n", encoding="utf-8")
    return path


def _run(dataset, kg_url, tmp_path, **config):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LenientLoad)
        method = FixedQueries(queries={"g1": GOLD["g1"], "g2": GOLD["g2"], "g3": GOLD["g3"]})
        return run(method, config=RunConfig(dataset=str(dataset), kg="wikidata", kg_url=str(kg_url),
                                            output_root=str(tmp_path / "runs"), progress=False,
                                            allow_gold_errors=True, **config))


def test_snapshot_gold_records_answers_digests_and_gold_errors(wikidata_shaped_endpoint, dataset, tmp_path, capsys):
    out = tmp_path / "snap.json"
    assert main(["data", "snapshot-gold", "-d", str(dataset), "--kg", "wikidata", "--kg-url",
                 wikidata_shaped_endpoint, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "5 questions" in printed and "2 gold errors" in printed
    assert "gold error  g4: empty" in printed and "gold error  g5: error: syntax_error" in printed
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["endpoint"] == f"endpoint:{wikidata_shaped_endpoint}" and data["created"][:2] == "20"
    assert data["entries"]["g1"]["answers"] == [WD + "Q45765"] and data["entries"]["g3"]["answers"] == ["1017449"]
    assert len(data["entries"]["g1"]["query_digest"]) == 16 and len(data["entries"]["g1"]["result_digest"]) == 16
    snapshot = GoldSnapshot.load(out)
    assert snapshot.digest == data["digest"] and set(snapshot.gold_errors()) == {"g4", "g5"}
    data["entries"]["g1"]["answers"] = [WD + "Q1"]  # edited by hand
    out.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="changed after it was taken"):
        GoldSnapshot.load(out)


def test_a_run_scores_against_the_snapshot_not_the_drifted_kg(dataset, drifted, tmp_path):
    kg_file = WIKIDATA_FIXTURES["handwritten"]
    from support.wikidata_fixtures import open_wikidata

    with open_wikidata(kg_file) as kg:
        snapshot = take_snapshot(load(str(dataset)), kg, dataset=str(dataset), split=None)
    path = snapshot.save(tmp_path / "snap.json")
    live = _run(dataset, drifted, tmp_path, gold_snapshot="off")
    fixed = _run(dataset, drifted, tmp_path, gold_snapshot=str(path))
    live_rows, fixed_rows = (r.predictions().set_index("id") for r in (live, fixed))
    assert sorted(live_rows.loc["g1", "gold_answers"]) == [WD + "Q45765", WD + "Q900002"]  # the KG drifted
    assert fixed_rows.loc["g1", "gold_answers"] == [WD + "Q45765"] and fixed_rows.loc["g1", "gold_source"] == \
        "gold_snapshot"
    assert fixed_rows.loc["g5", "gold_source"].endswith("(from the gold snapshot)")
    assert live.metrics["gold_snapshot"] is None
    used = fixed.metrics["gold_snapshot"]
    assert used["used"] and used["digest"] == snapshot.digest and used["questions_scored_from_it"] == 5
    assert used["endpoint"] == kg.identity and used["gold_errors"] == 2
    assert fixed.run_id != live.run_id  # the snapshot's digest is part of the run's identity
    with pytest.raises(ValueError, match="answer_match='iri'"):
        _run(dataset, drifted, tmp_path, gold_snapshot=str(path), answer_match="label")


def test_runs_find_the_snapshot_by_name(dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARQLAB_GOLD_SNAPSHOTS", str(tmp_path / "snapshots"))
    kg_file = WIKIDATA_FIXTURES["handwritten"]
    without = _run(dataset, kg_file, tmp_path)
    assert without.metrics["gold_snapshot"] is None
    assert main(["data", "snapshot-gold", "-d", str(dataset), "--kg", "wikidata", "--kg-url", str(kg_file)]) == 0
    assert (gold_snapshots_dir() / snapshot_name(str(dataset), None, "wikidata")).exists()
    found = _run(dataset, kg_file, tmp_path)
    assert found.metrics["gold_snapshot"]["used"] and found.metrics["f1"] == without.metrics["f1"]
    label_rule = _run(dataset, kg_file, tmp_path, answer_match="label")  # found, but for another rule: unused
    note = label_rule.metrics["gold_snapshot"]
    assert note["used"] is False and "answer_match='iri'" in note["reason"] and note["questions_scored_from_it"] == 0
