"""`runs compare` with two runs: the paired comparison (flips by question, McNemar, bootstrap); an experiment name
stands for all its runs; `runs list` shows readable names, date, selection and percent."""

import pytest

from sparqlab.cli import main
from sparqlab.core.labels import STANDIN_BANNER
from sparqlab.methods import DirectSparql
from sparqlab.runs import RunConfig, run


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, movies_store):
    """Two runs over the same 12 sampled questions (the project's KG store; runs and responses in a tmp folder)."""
    folder = tmp_path_factory.mktemp("paired")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPARQLAB_RUNS", str(folder / "runs"))
        settings = dict(experiment="pair", kg="movies", dataset="metaqa-1hop", sample=12, sample_seed=3,
                        progress=False, cache_path=str(folder / "responses.sqlite"))
        rules = run(DirectSparql(), config=RunConfig(model="standin-keyword-rules", **settings))
        echo = run(DirectSparql(), config=RunConfig(model="standin-echo", **settings))
        yield rules, echo


@pytest.fixture
def runs_env(two_runs, monkeypatch):
    monkeypatch.setenv("SPARQLAB_RUNS", str(two_runs[0].run_dir.parents[1]))
    return two_runs


def test_compare_two_runs_pairs_them_by_question(runs_env, capsys):
    rules, echo = runs_env
    exact = rules.predictions().query("em == True")["id"].tolist()
    assert exact, "the keyword baseline answers some sampled questions exactly"
    assert main(["runs", "compare", rules.run_id, echo.run_id, "--flips", "2"]) == 0
    out = capsys.readouterr().out
    assert "paired comparison on 12 questions" in out
    names = [f"pair/{rules.run_id}", f"pair/{echo.run_id}"]
    assert f"only in {names[0]} {len(exact)}, only in {names[1]} 0" in out, "named by the runs, never A/B"
    assert "McNemar exact test" in out and "paired bootstrap CI" in out
    flipped = [line for line in out.split(f"exact only in {names[0]}")[1].splitlines()[1:]
               if not line.startswith("      ")]
    assert [line.split()[0] for line in flipped[:2]] == exact[:2]
    first = out.split(f"  {exact[0]}  ")[1].splitlines()[1:]
    assert first[0].strip() == f"{names[0]}:" and "PREFIX" in first[1], "a long query on lines of its own"
    assert f"      {names[1]}: (no query)" in first, "the echo stand-in writes no query"
    record = rules.predictions().set_index("id").loc[exact[0]]
    assert all(f"        {line}" in first for line in record["predicted_sparql"].splitlines()), "the whole query"


def test_query_lines_show_long_queries_whole_as_a_diff():
    from sparqlab.cli.runs import query_lines

    prefixes = "\n".join(f"PREFIX p{i}: <http://example.org/vocabulary/{i}/>" for i in range(4))
    a, b = prefixes + "\nSELECT ?x WHERE { ?x p1:a p2:b }", prefixes + "\nSELECT ?x WHERE { ?x p1:a p3:c }"
    lines = query_lines(["exp/one", "exp/two"], [a, b])
    assert "      --- exp/one" in lines and "      +++ exp/two" in lines
    assert "      -SELECT ?x WHERE { ?x p1:a p2:b }" in lines and "      +SELECT ?x WHERE { ?x p1:a p3:c }" in lines
    assert sum("PREFIX p3:" in line for line in lines) == 1, "unchanged lines shown once"
    alone = query_lines(["exp/one", "exp/two"], [a, None])
    assert alone[-1] == "      exp/two: (no query)" and "        SELECT ?x WHERE { ?x p1:a p2:b }" in alone


def test_report_lists_every_wrong_question_with_both_queries_and_answer_sets(runs_env, tmp_path):
    import re

    rules, echo = runs_env
    assert main(["runs", "report", rules.run_id, "-o", str(tmp_path / "one.html")]) == 0
    page = (tmp_path / "one.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "[standin]" in page
    assert f'<p class="sq-standin">{STANDIN_BANNER} (standin-keyword-rules)</p>' in page, "said at the top"
    assert not re.search(r"<(script|link)\b|src=", page), "self-contained: nothing fetched, no script"
    failing = [r for r in rules.predictions().to_dict("records") if not r["em"]]
    assert failing, "the keyword baseline misses some sampled questions"
    failures = page.split("<h3>Failing questions</h3>")[1].split("questions answered exactly")[0]
    blocks = failures.split('<div class="sq-question')[1:]
    assert len(blocks) == len(failing)
    for block, record in zip(blocks, failing, strict=True):
        assert f"<b>{record['id']}</b>" in block
        assert "<b>gold SPARQL</b>" in block and "<b>predicted SPARQL</b>" in block
        assert "gold answers" in block and "predicted answers" in block and "<b>error</b>" in block
        if isinstance(record["predicted_sparql"], str):
            assert "<b>diff</b>" in block and 'class="sq-add"' in block
    assert "<th>f1</th>" in page and "the reply that led to it" in failures, "metrics, and the model reply behind a miss"


def test_report_of_two_runs_shows_the_flips_and_the_paired_test(runs_env, tmp_path):
    rules, echo = runs_env
    assert main(["runs", "report", rules.run_id, echo.run_id, "-o", str(tmp_path / "two.html")]) == 0
    page = (tmp_path / "two.html").read_text(encoding="utf-8")
    exact = rules.predictions().query("em == True")["id"].tolist()
    assert f"Exact only in pair/{rules.run_id} ({len(exact)})" in page
    assert "McNemar exact test" in page and " A " not in page.split("Paired test")[1].split("</pre>")[0]
    flips = page.split(f"Exact only in pair/{rules.run_id}")[1].split("Exact only in")[0]
    assert all(f"<b>{qid}</b>" in flips for qid in exact)
    assert f"pair/{echo.run_id} SPARQL" in flips and "gold SPARQL" in flips
    assert main(["runs", "report", rules.run_id, echo.run_id, rules.run_id, "-o", str(tmp_path / "x.html")]) == 2


def test_compare_runs_in_a_notebook_is_named_by_the_runs(runs_env):
    from sparqlab.plots.widgets import compare_runs

    rules, echo = runs_env
    comparison = compare_runs(rules.run_id, echo.run_id)
    exact = rules.predictions().query("em == True")["id"].tolist()
    assert [row["id"] for row in comparison.flipped()] == exact
    assert {row["exact in"] for row in comparison.flipped()} == {f"pair/{rules.run_id}"}
    assert comparison.paired.a == f"pair/{rules.run_id}" and "only in A" not in repr(comparison)
    assert f"Exact only in pair/{echo.run_id} (0)" in comparison._repr_html_()
    widget = comparison.widget
    picker, view = widget.children[1], widget.children[2]
    assert [value for _, value in picker.options] == exact and f"exact only in pair/{rules.run_id}" in picker.label
    picker.value = exact[-1]
    assert f"<b>{exact[-1]}</b>" in view.value and f"pair/{echo.run_id} SPARQL" in view.value
    bundle = comparison._repr_mimebundle_()
    assert "McNemar" in bundle["text/html"] and "application/vnd.jupyter.widget-view+json" in bundle


def test_experiment_name_compares_all_its_runs_and_list_is_readable(runs_env, capsys):
    rules, echo = runs_env
    assert main(["runs", "compare", "pair", "--flips", "0"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    assert sorted(header[1:]) == sorted([f"pair/{rules.run_id}", f"pair/{echo.run_id}"])
    assert rules.run_id.startswith("direct-metaqa-1hop-standin-keyword-rules-")
    assert main(["runs", "list"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if rules.run_id in x)
    assert "sample 12 (seed 3)" in line and f" {100 * rules.metrics['f1']:.1f} " in line


def test_predictions_carry_query_complexity_columns(runs_env):
    rules, _ = runs_env
    frame = rules.predictions()
    assert set(frame["gold_complexity.triples_bucket"]) <= {"1", "2", "3-4", "5+"}
    assert frame["gold_complexity.triples"].min() >= 1
    answered = frame[frame["predicted_sparql"].notna()]
    assert answered["predicted_complexity.triples"].notna().all()
    assert frame[frame["predicted_sparql"].isna()]["predicted_complexity.triples"].isna().all()


def test_environment_records_what_the_endpoint_serves(tmp_path, movies_store):
    import json

    from sparqlab.data import load
    from sparqlab.serving.model_server import serve_in_background

    questions = load("metaqa-1hop", limit=2)
    with serve_in_background("standin-keyword-rules") as url:
        result = run(DirectSparql(), questions, RunConfig(
            experiment="served", kg="movies", model="standin-keyword-rules", model_url=url, progress=False,
            output_root=str(tmp_path / "runs"), cache_path=str(tmp_path / "responses.sqlite")))
    environment = json.loads((result.run_dir / "environment.json").read_text())
    served = environment["model"]["served"]
    assert served["id"] == "standin-keyword-rules" and served["root"].startswith("standin-keyword-rules")
    assert result.metrics["model_cache_last_session"]["endpoint_note"] is None


def test_trace_browser_lists_runs_by_readable_name_grouped_by_experiment(runs_env):
    from sparqlab.plots.widgets import run_choice_label, trace_browser

    rules, _ = runs_env
    root = rules.run_dir.parents[1]
    label = run_choice_label(rules.run_dir, root)
    assert label.startswith(f"pair / {rules.run_id} · ") and "sample 12 (seed 3)" in label
    assert label.endswith(f"F1 {100 * rules.metrics['f1']:.1f}")
    labels = [text for text, _ in trace_browser(root).run_picker.options]
    assert labels == sorted(labels) and all(text.startswith("pair / ") for text in labels)
