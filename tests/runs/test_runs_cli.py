"""`sparqlab runs list|show|compare|merge` on real run folders."""

import json

from runs_helpers import EchoChatMethod, LookupMethod, TinyKG, tiny_questions

from sparqlab.cli import main
from sparqlab.core.labels import STANDIN_BANNER
from sparqlab.runs import RunConfig, run


def make_runs(root):
    lookup = run(LookupMethod({"q0": "wrong", "q1": "malformed"}), tiny_questions(4),
                 RunConfig(experiment="cli", output_root=str(root), progress=False), kg=TinyKG(4))
    echo = run(EchoChatMethod(), tiny_questions(4),
               RunConfig(experiment="cli", output_root=str(root), model="standin-echo", progress=False),
               kg=TinyKG(4))
    return lookup, echo


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_progress_scores_and_labels_standins(root, capsys):
    lookup, echo = make_runs(root)
    code, out, _ = cli(capsys, "runs", "list", "--root", str(root))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:8] == ["experiment", "run", "date", "status", "done", "f1", "em", "empty_rate"]
    lookup_line = next(line for line in lines if lookup.run_id in line)
    echo_line = next(line for line in lines if echo.run_id in line)
    assert "complete" in lookup_line and "4/4" in lookup_line and " 50.0 " in lookup_line
    assert "[no model]" in lookup_line and "syntax_error=1" in lookup_line
    assert "standin-echo [standin]" in echo_line and " 100.0 " in echo_line

    code, out, _ = cli(capsys, "runs", "list", "--root", str(root), "--experiment", "nothing-here")
    assert code == 0 and out.strip() == "(no runs)"


def test_show_prints_metrics_and_config(root, capsys):
    _, echo = make_runs(root)
    code, out, _ = cli(capsys, "runs", "show", echo.run_id, "--root", str(root))
    assert code == 0
    assert f"run cli/{echo.run_id}  (complete)" in out
    assert "standin-echo [standin]" in out and STANDIN_BANNER in out
    assert '"generate": 4' in out and '"refine": 4' in out
    code, out, _ = cli(capsys, "runs", "show", f"cli/{echo.run_id}", "--root", str(root), "--json")
    data = json.loads(out)
    assert data["metrics"]["f1"] == 1.0 and data["config"]["run_id"] == echo.run_id

    code, _, err = cli(capsys, "runs", "show", "no-such-run", "--root", str(root))
    assert code == 1 and "no run 'no-such-run'" in err


def test_compare_puts_runs_side_by_side(root, capsys):
    lookup, echo = make_runs(root)
    code, out, _ = cli(capsys, "runs", "compare", lookup.run_id, echo.run_id, "--root", str(root))
    assert code == 0
    header, *rows = out.split("\n\n")[0].splitlines()  # the side-by-side table; the paired comparison follows
    assert header.split() == ["field", f"cli/{lookup.run_id}", f"cli/{echo.run_id}"]
    table = {row.split()[0]: row.split()[1:] for row in rows}
    assert table["f1"] == ["50.0", "100.0"]  # percent, one decimal
    assert table["model"] == ["[no", "model]", "standin-echo", "[standin]"]
    assert table["calls_per_q"] == ["0.000", "2.000"]


def test_merge_command_reports_missing_shards_then_merges(root, capsys):
    questions = tiny_questions(6)
    results = [run(LookupMethod(), questions, RunConfig(experiment="m", output_root=str(root), progress=False,
                                                        shard_index=i, num_shards=2), kg=TinyKG(6))
               for i in range(2)]
    run_id = results[0].run_id
    parked = results[1].run_dir.rename(results[1].run_dir.with_name("parked"))
    code, _, err = cli(capsys, "runs", "merge", f"m/{run_id}", "--root", str(root))
    assert code == 1 and f"shard 1 of 2 is missing (no folder {run_id}-shard1of2)" in err

    parked.rename(results[1].run_dir)
    code, out, _ = cli(capsys, "runs", "merge", run_id, "--root", str(root))
    assert code == 0 and "merged 2 of 2 shards" in out and "6 of 6 questions" in out
    code, out, _ = cli(capsys, "runs", "list", "--root", str(root))
    assert any(line.split()[1] == run_id and "6/6" in line for line in out.splitlines())


def test_experiment_slash_prefix_names_one_run_in_show_compare_and_eval(root, capsys):
    """The same run folder name in two experiments: a bare prefix is ambiguous, ``experiment/prefix`` is not."""
    config = RunConfig(output_root=str(root), model="standin-echo", progress=False)
    first = run(EchoChatMethod(), tiny_questions(4), config.replace(experiment="quick"), kg=TinyKG(4))
    second = run(EchoChatMethod(), tiny_questions(4), config.replace(experiment="try"), kg=TinyKG(4))
    assert first.run_id == second.run_id  # the experiment is not part of the run id
    prefix = first.run_id[:6]

    code, _, err = cli(capsys, "runs", "show", prefix, "--root", str(root))
    assert code == 1 and "matches 2 runs" in err and f"quick/{first.run_id}" in err

    code, out, _ = cli(capsys, "runs", "show", f"try/{prefix}", "--root", str(root), "--json")
    assert code == 0 and json.loads(out)["config"]["experiment"] == "try"
    code, out, _ = cli(capsys, "runs", "compare", f"quick/{prefix}", f"try/{prefix}", "--root", str(root))
    assert code == 0 and out.splitlines()[0].split() == ["field", f"quick/{first.run_id}", f"try/{second.run_id}"]
    code, _, err = cli(capsys, "runs", "show", f"other/{prefix}", "--root", str(root))
    assert code == 1 and f"no run 'other/{prefix}'" in err


def test_eval_takes_experiment_slash_prefix(root, capsys, monkeypatch):
    monkeypatch.setenv("SPARQLAB_RUNS", str(root))
    config = RunConfig(output_root=str(root), model="standin-echo", progress=False)
    for experiment in ("quick", "try"):
        result = run(EchoChatMethod(), tiny_questions(4), config.replace(experiment=experiment), kg=TinyKG(4))
    from sparqlab.cli.evaluate import _predictions_path

    assert _predictions_path(f"try/{result.run_id[:6]}") == result.run_dir / "predictions.jsonl"


def test_compare_shows_a_missing_query_as_no_query_not_nan(root, capsys):
    config = RunConfig(experiment="cli", output_root=str(root), progress=False)
    failing = run(LookupMethod({"q0": "raise"}), tiny_questions(4), config, kg=TinyKG(4))
    echo = run(EchoChatMethod(), tiny_questions(4), config.replace(model="standin-echo"), kg=TinyKG(4))
    code, out, _ = cli(capsys, "runs", "compare", failing.run_id, echo.run_id, "--root", str(root))
    assert code == 0
    flipped = out.split(f"exact only in cli/{echo.run_id} (1; first 1):\n")[1].splitlines()
    assert flipped[0].split()[0] == "q0" and flipped[1].strip() == f"cli/{failing.run_id}: (no query)"
    assert "nan" not in out.split()
