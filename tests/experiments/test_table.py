"""The comparison table: its numbers are each cell's metrics.json, its intervals and significance come from the
cells' predictions, and its LaTeX is booktabs that compiles (with pdflatex when one is installed)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from sparqlab.cli import main
from sparqlab.core.labels import STANDIN_BANNER
from sparqlab.eval.paired import bootstrap_ci, paired_comparison
from sparqlab.experiments.executors import run_local
from sparqlab.experiments.grid import load_grid
from sparqlab.experiments.sweep import grid_status
from sparqlab.experiments.table import build_table, cost_values, to_latex, to_markdown

GRID = """\
    name: tab
    run: {{limit: 5, cache_path: {cache}, model: standin-keyword-rules}}
    methods:
      direct: {{method: direct}}
      echo: {{method: direct, model: standin-echo}}
    datasets:
      metaqa-1hop: {{dataset: metaqa-1hop}}
      metaqa-2hop: {{dataset: metaqa-2hop, metrics: [method_scores.missing_key]}}
    """


@pytest.fixture
def finished(write_grid):
    grid = load_grid(write_grid(GRID))
    run_local(grid, grid.cells, workers=0)
    return grid


def _records(run_dir):
    return [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]


def test_table_numbers_are_the_cells_metrics(finished):
    table = build_table(finished, baseline="direct")
    assert table.rows == ["direct [standin]", "echo [standin]"]
    assert table.datasets == ["metaqa-1hop", "metaqa-2hop"]
    assert [m.key for m in table.measures][:3] == ["f1", "em", "method_scores.missing_key"]
    for status in grid_status(finished):
        metrics = json.loads((status.run_dir / "metrics.json").read_text())
        row = status.cell.row + " [standin]"
        assert table.value(row, status.cell.dataset, "f1") == pytest.approx(metrics["f1"])
        assert table.value(row, status.cell.dataset, "em") == pytest.approx(metrics["em"])
        assert table.value(row, status.cell.dataset, "empty") == pytest.approx(metrics["empty_rate"])
        for key, value in cost_values(metrics).items():
            assert table.value(row, status.cell.dataset, key) == (None if value is None else pytest.approx(value))
        assert table.value(row, status.cell.dataset, "method_scores.missing_key") is None
        records = _records(status.run_dir)
        assert table.value(row, status.cell.dataset, "model_calls") == pytest.approx(
            sum(sum(r["model_calls"].values()) for r in records) / len(records))
        line = table.frame[(table.frame["row"] == row) & (table.frame["dataset"] == status.cell.dataset)
                           & (table.frame["measure"] == "f1")].iloc[0]
        assert (line["ci_low"], line["ci_high"]) == pytest.approx(bootstrap_ci([r["f1"] for r in records]))
        assert line["ci_low"] <= metrics["f1"] <= line["ci_high"]
    # significance of echo against the baseline, from the two runs' records
    statuses = {(s.cell.row, s.cell.dataset): s.run_dir for s in grid_status(finished)}
    paired = paired_comparison(_records(statuses[("direct", "metaqa-1hop")]),
                               _records(statuses[("echo", "metaqa-1hop")]))
    assert table.value("echo [standin]", "metaqa-1hop", "flips") == len(paired.a_only) + len(paired.b_only)
    assert table.value("echo [standin]", "metaqa-1hop", "p_mcnemar") == pytest.approx(paired.mcnemar_p)
    assert table.value("echo [standin]", "metaqa-1hop", "f1_diff") == pytest.approx(paired.f1_diff)
    assert table.value("direct [standin]", "metaqa-1hop", "flips") is None  # the baseline itself


def test_latex_is_booktabs_with_the_best_value_bold_and_compiles(finished, tmp_path):
    table = build_table(finished)
    latex = to_latex(table, columns=["f1", "em", "model_calls"])
    lines = latex.splitlines()
    assert lines.index(r"\toprule") < lines.index(r"\midrule") < lines.index(r"\bottomrule")
    assert r"\begin{tabular}{lrrrrrr}" in latex
    assert r"\multicolumn{3}{c}{metaqa-1hop} & \multicolumn{3}{c}{metaqa-2hop}" in latex
    assert r"\cmidrule(lr){2-4} \cmidrule(lr){5-7}" in latex
    body = lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]
    rows = [line.removesuffix(r" \\").split(" & ") for line in body]
    assert [r[0] for r in rows] == ["direct [standin]", "echo [standin]"]
    assert all(len(r) == 7 for r in rows)
    keys = [(d, m) for d in table.datasets for m in ("f1", "em", "model_calls")]
    for column, (dataset, measure) in enumerate(keys, start=1):  # the best value bold (ties: all; constant: none)
        values = [table.value(row, dataset, measure) for row in table.rows]
        best = min(values) if measure == "model_calls" else max(values)
        expected = [v == best for v in values] if len(set(values)) > 1 else [False] * len(values)
        assert [r"\textbf" in r[column] for r in rows] == expected
    assert any(r"\textbf" in cell for r in rows for cell in r)
    f1 = table.value("direct [standin]", "metaqa-1hop", "f1")
    assert rows[0][1].replace(r"\textbf{", "").startswith(f"{100 * f1:.1f}" + r"\,$\pm$\,")
    assert re.search(r"\\caption\{.*bootstrap.*Stand-in baselines --- a pipeline check, not LLM results", latex)
    markdown = to_markdown(table, columns=["f1"]).splitlines()  # made from stand-ins, and says so first
    assert markdown[0] == f"*{STANDIN_BANNER} (standin-keyword-rules, standin-echo)*" and markdown[1] == ""
    assert markdown[2] == "| method | metaqa-1hop: F1 (%) | metaqa-2hop: F1 (%) |"
    if shutil.which("pdflatex") is None:
        pytest.skip("no pdflatex here (apt-get install texlive-latex-base texlive-latex-recommended); "
                    "structure checked above")
    (tmp_path / "table.tex").write_text(latex)
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                                      "\\input{table.tex}\n\\end{document}\n")
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-2000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 0


def test_table_cli_formats_and_a_missing_cell(finished, write_grid, capsys, tmp_path):
    path = finished.path
    assert main(["table", str(path), "--format", "csv", "--columns", "f1,em"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "row,dataset,measure,value,ci_low,ci_high,run" and len(out) == 1 + 2 * 2 * 2
    assert main(["table", str(path), "--format", "md", "--baseline", "nobody"]) == 1
    assert "baseline 'nobody' is not a row" in capsys.readouterr().err
    assert main(["table", str(path), "--columns", "f2"]) == 1
    assert "unknown column(s) f2" in capsys.readouterr().err
    extended = path.read_text().replace("datasets:", "datasets:\n  mcqa: {dataset: mcqa-movies}")
    (tmp_path / "more.yaml").write_text(extended.replace("name: tab", "name: tab\nexperiment: tab"))
    assert main(["table", str(tmp_path / "more.yaml"), "--columns", "f1", "-o", str(tmp_path / "t.tex"),
                 "--format", "latex"]) == 0
    err = capsys.readouterr().err
    assert "direct@mcqa: no finished run yet" in err
    assert "--" in (tmp_path / "t.tex").read_text()


def test_cost_quality_figure_marks_the_pareto_front(finished):
    from sparqlab import plots

    assert plots.pareto_front([1, 2, 3, 2, float("nan")], [0.5, 0.9, 0.9, 0.4, 1.0]) == \
        [True, True, False, False, False]
    points = build_table(finished).points()
    assert len(points) == 4 and {"row", "dataset", "f1", "model_calls", "tokens"} <= set(points.columns)
    ax = plots.cost_quality(points, cost="tokens")
    assert ax.get_ylabel() == "F1 (%)" and "Pareto" in ax.get_xlabel()
    step_lines = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert len(step_lines) == 2  # one front per dataset
    for line, (_, members) in zip(step_lines, points.groupby("dataset", sort=False), strict=True):
        front = plots.pareto_front(members["tokens"], members["f1"])
        assert sorted(line.get_xdata()) == sorted(members["tokens"][front])


def test_table_and_status_recompute_from_the_predictions(finished):
    """A cell whose predictions lost lines after the run is shown as its lines are (``sweep status`` and the
    table), and a hand-edited impossible F1 leaves its cell out with a note naming the file and line."""
    statuses = {(s.cell.row, s.cell.dataset): s.run_dir for s in grid_status(finished)}
    cut, edited = statuses[("direct", "metaqa-1hop")], statuses[("echo", "metaqa-2hop")]
    kept = (cut / "predictions.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)[:3]
    (cut / "predictions.jsonl").write_text("".join(kept), encoding="utf-8")
    lines = _records(edited)
    lines[1]["f1"] = 1.5
    (edited / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")

    by_cell = {(s.cell.row, s.cell.dataset): s for s in grid_status(finished)}
    assert by_cell[("direct", "metaqa-1hop")].status == "incomplete"
    assert (by_cell[("direct", "metaqa-1hop")].n_done, by_cell[("direct", "metaqa-1hop")].n_questions) == (3, 5)
    damaged = by_cell[("echo", "metaqa-2hop")]
    assert damaged.status == "unreadable" and f"{edited / 'predictions.jsonl'}:2: f1 is 1.5" in damaged.reason

    table = build_table(finished)
    f1 = [json.loads(line)["f1"] for line in kept]
    assert table.value("direct [standin]", "metaqa-1hop", "f1") == pytest.approx(sum(f1) / len(f1))
    assert "direct@metaqa-1hop: incomplete run (3/5 questions)" in table.notes
    assert table.value("echo [standin]", "metaqa-2hop", "f1") is None
    assert any(note.startswith("echo@metaqa-2hop: left out") and f"{edited / 'predictions.jsonl'}:2:" in note
               for note in table.notes)


def test_questions_whose_gold_differs_from_the_baseline_s_are_not_paired(finished):
    """A cell whose gold answers differ from the baseline's for a question (here its record edited as if the KG
    had changed between the runs) is compared on the other questions, and a note says how many and why."""
    from sparqlab.experiments.sweep import find_cell_run

    cell = next(c for c in finished.cells if c.row == "echo" and c.dataset == "metaqa-1hop")
    path = find_cell_run(cell) / "predictions.jsonl"
    records = _records(path.parent)
    records[0]["gold_answers"] = ["http://example.org/another-answer"]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    table = build_table(finished, baseline="direct")
    note = next(n for n in table.notes if n.startswith(f"{cell.key} against direct:"))
    assert f"gold answers differ for 1 of 5 paired questions (e.g. {str(records[0]['id'])!r})" in note
    assert "why: no identity field differs" in note
    flips = table.value("echo [standin]", "metaqa-1hop", "flips")
    edited = records[0]["id"]
    base = _records(find_cell_run(next(c for c in finished.cells if c.row == "direct" and c.dataset == "metaqa-1hop")))
    expected = paired_comparison([r for r in base if r["id"] != edited], [r for r in records if r["id"] != edited])
    assert flips == len(expected.a_only) + len(expected.b_only)
