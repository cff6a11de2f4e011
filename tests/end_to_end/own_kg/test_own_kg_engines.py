"""Your own KG on another engine: the university RDF file run as it is and, with ``kg_options: {engine: ...}``
(``sparqlab run --kg-options engine=...``), served by oxigraph's server and by Virtuoso for the run — the same
answers per question, the engine named in the run's environment and its id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "university"


def _run(engine: str | None, root: Path):
    from sparqlab.data import load
    from sparqlab.methods import make_method
    from sparqlab.runs import RunConfig, run

    config = RunConfig(experiment=f"uni-{engine or 'embedded'}", kg=str(HERE / "university.ttl"),
                       kg_options={"engine": engine} if engine else {}, model="standin-schema-rules",
                       progress=False, cache="off", output_root=str(root))
    result = run(make_method("direct"), load(str(HERE / "test.jsonl")), config)
    frame = result.predictions()
    return result.run_dir, {qid: sorted(answers or []) for qid, answers in zip(frame["id"], frame["predicted_answers"],
                                                                                 strict=True)}


@pytest.fixture(scope="module")
def embedded_run(tmp_path_factory):
    return _run(None, tmp_path_factory.mktemp("runs"))


@pytest.mark.slow
def test_a_file_kg_answers_alike_on_each_engine(endpoint_engine, embedded_run, tmp_path):
    embedded, embedded_answers = embedded_run
    served, served_answers = _run(endpoint_engine, tmp_path)
    assert served_answers == embedded_answers and any(embedded_answers.values())
    environment = json.loads((served / "environment.json").read_text())
    assert environment["kg"]["engine_name"] == endpoint_engine
    assert environment["kg"]["identity"].endswith(f" on {endpoint_engine}")
    assert served.name != embedded.name
