"""docs/adding-a-metric.md's promise: one registration in a third-party package, and the metric is in a run's
metrics.json, `sparqlab runs list`, `sparqlab table` and a figure's axis label, with nothing else edited."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import sparqlab
import sparqlab.methods.desq.metrics  # noqa: F401 - registers DeSQ's metrics
from sparqlab.eval.metrics import metric_list
from sparqlab.eval.normalise import answer_set
from support.plugin_helpers import install_package

SPARQLAB = Path(sys.executable).with_name("sparqlab")

PACKAGE = '''
    from sparqlab.eval.metrics import register_metric


    def jaccard(predicted, gold):
        return len(predicted & gold) / len(predicted | gold) if predicted else 0.0


    register_metric("answer_jaccard", "Jaccard", score=jaccard, description="answer-set Jaccard similarity")
'''

GRID = """\
name: jac
run: {{limit: 4, cache_path: {cache}, model: standin-keyword-rules}}
methods:
  direct: {{method: direct}}
datasets:
  metaqa-1hop: {{dataset: metaqa-1hop}}
"""


@pytest.mark.slow
def test_a_metric_registered_by_a_third_party_package_reaches_every_listing(tmp_path):
    env = install_package(tmp_path, "toy-sparqlab-metric", "toy_sparqlab_metric", PACKAGE,
                          {"sparqlab.plugins": "toy_metric"})
    env["SPARQLAB_RUNS"] = str(tmp_path / "runs")
    grid = tmp_path / "jac.yaml"
    grid.write_text(GRID.format(cache=tmp_path / "responses.sqlite"), encoding="utf-8")

    def sparqlab(*args: str) -> str:
        done = subprocess.run([str(SPARQLAB), *args], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return done.stdout

    sparqlab("sweep", str(grid), "--workers", "0")
    (run_dir,) = [path.parent for path in (tmp_path / "runs" / "jac").glob("*/metrics.json")]
    records = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]
    expected = []
    for record in records:  # the definition, recomputed here from the answers the run stored
        predicted, gold = answer_set(record["predicted_answers"] or ()), answer_set(record["gold_answers"])
        expected.append(len(predicted & gold) / len(predicted | gold) if predicted else 0.0)
        assert record["answer_jaccard"] == pytest.approx(expected[-1])
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["answer_jaccard"] == pytest.approx(sum(expected) / len(expected))

    listed = sparqlab("runs", "list", "-e", "jac").splitlines()
    column = listed[0].index("answer_jaccard")  # columns are left-aligned (a date holds a space)
    assert listed[1][column:].split()[0] == f"{100 * metrics['answer_jaccard']:.1f}"
    table = [line for line in sparqlab("table", str(grid), "--format", "md").splitlines() if line.startswith("|")]
    column = table[0].split(" | ").index("metaqa-1hop: Jaccard (%)")
    assert table[2].split(" | ")[column].startswith(f"{100 * metrics['answer_jaccard']:.1f} ± ")

    label = subprocess.run([sys.executable, "-c", (
        "import pandas as pd; from sparqlab import plots; "
        "ax = plots.metric_bars(pd.DataFrame({'answer_jaccard': [0.5, 1.0], 'method': ['a', 'b']}), "
        "metric='answer_jaccard'); print(ax.get_ylabel())")], capture_output=True, text=True, env=env, check=True)
    assert label.stdout.strip() == "Jaccard (%)"


def test_no_metric_key_is_spelled_in_more_than_two_library_files():
    """Issue 45's rule: a key is spelled where it is registered and in at most one more file (a documentation
    table); every other reader names it through sparqlab.eval.metrics (F1_KEY, ANSWER_METRICS, PRIMARY_METRIC ...)
    or the registry, so renaming a metric is one edit."""
    lib = Path(sparqlab.__file__).parent
    sources = {path.relative_to(lib).as_posix(): path.read_text(encoding="utf-8") for path in lib.rglob("*.py")}
    for metric in metric_list():
        spelled = sorted(path for path, text in sources.items() if f'"{metric.key}"' in text or f"'{metric.key}'" in text)
        assert len(spelled) <= 2, f"metric key {metric.key!r} is spelled in {spelled}"
