"""`runs compare` with two runs: the paired comparison (flips by question, McNemar, bootstrap); an experiment name
stands for all its runs; `runs list` shows readable names, date, selection and percent."""

import pytest

from sparqlab.cli import main
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
    assert f"only in A {len(exact)}, only in B 0" in out
    assert "McNemar exact test" in out and "paired bootstrap CI" in out
    flipped = [line for line in out.split("exact only in A")[1].splitlines()[1:] if not line.startswith("      ")]
    assert [line.split()[0] for line in flipped[:2]] == exact[:2]
    first = out.split(f"  {exact[0]}  ")[1].splitlines()
    assert "SELECT" in first[1] and first[1].strip().startswith("A: ") and first[2].strip().startswith("B: ")


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
    from sparqlab.llm.server import serve_in_background

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
