"""Grid files: expansion into cells, validation, and `sparqlab sweep --dry-run` / `sweep status` (a cell is
found whether the sweep or a single `sparqlab run` of the same configuration made it; a failure keeps its
reason)."""

from __future__ import annotations

import pytest

from sparqlab.cli import main
from sparqlab.experiments.grid import GridError, expand_grid, load_grid
from sparqlab.experiments.sweep import cell_status, grid_status
from sparqlab.runs.config import RoleSpec

GRID = {
    "name": "g",
    "run": {"limit": 3, "seed": 7},
    "methods": {
        "direct": {"method": "direct", "model": "standin-keyword-rules"},
        "ggc": {"method": "ggc", "options": {"mode": "gated"}, "model": "standin-knn",
                "model_roles": {"corrector": {"model": "standin-corrector"}}},
    },
    "datasets": {"m1": {"dataset": "metaqa-1hop", "seed": 1},
                 "wd": {"dataset": "x.jsonl", "kg": "wikidata", "options": {"ggc": {"variant": "wikidata"}}}},
    "axes": {"sample": [2, 3], "options.threshold": [0.3]},
    "exclude": [{"method": "direct", "dataset": "wd"}],
}


def test_a_grid_expands_rows_times_axes_times_datasets_with_later_settings_winning():
    grid = expand_grid({**GRID, "axes": {"sample": [2, 3]}}, overrides={"concurrency": 2})
    assert grid.rows == ["direct sample=2", "direct sample=3", "ggc sample=2", "ggc sample=3"]
    assert grid.datasets == ["m1", "wd"]
    assert [c.key for c in grid.cells] == ["direct_sample=2@m1", "direct_sample=3@m1", "ggc_sample=2@m1",
                                           "ggc_sample=2@wd", "ggc_sample=3@m1", "ggc_sample=3@wd"]
    cell = grid.cells[3]
    assert (cell.method, cell.dataset, cell.experiment) == ("ggc", "wd", "g")
    assert cell.options == {"mode": "gated", "variant": "wikidata"}  # the dataset's options for this method
    assert cell.run["sample"] == 2 and cell.run["seed"] == 7 and cell.run["concurrency"] == 2
    assert grid.cells[0].run["seed"] == 1  # the dataset's setting over the grid's
    assert cell.run_config().model_roles == {"corrector": RoleSpec("standin-corrector")}


def test_an_option_axis_and_a_model_override_for_every_role():
    grid = expand_grid({**GRID, "axes": {"options.threshold": [0.3, 0.7]}},
                       overrides={"model": "served-model", "model_url": "http://gpu:8000/v1"})
    ggc = [c for c in grid.cells if c.method == "ggc"]
    assert [c.options["threshold"] for c in ggc] == [0.3, 0.3, 0.7, 0.7]
    assert all(c.run["model"] == "served-model" and "model_roles" not in c.run for c in grid.cells)


def test_a_dataset_sets_a_row_s_run_settings_on_it_under_the_axes_and_the_command_line():
    datasets = {**GRID["datasets"], "ck": {"dataset": "ck25", "kg": "ck25",
                                           "methods": {"direct": {"model": "standin-schema-rules"}}}}
    grid = expand_grid({**GRID, "datasets": datasets})
    models = {(c.row, c.dataset): c.run["model"] for c in grid.cells}
    assert models[("direct sample=2 threshold=0.3", "ck")] == "standin-schema-rules"
    assert models[("direct sample=2 threshold=0.3", "m1")] == "standin-keyword-rules"
    assert models[("ggc sample=2 threshold=0.3", "ck")] == "standin-knn"
    overridden = expand_grid({**GRID, "datasets": datasets}, overrides={"model": "served-model"})
    assert {c.run["model"] for c in overridden.cells} == {"served-model"}


def test_the_shipped_grid_tests_against_a_direct_baseline_that_reads_ck25_s_schema():
    """The movie keyword stand-in knows no CK25 IRI, so a baseline of it would make every row look better."""
    grid = load_grid("experiments/all_methods.yaml")
    direct = {c.dataset: c.run["model"] for c in grid.cells if c.row == "direct"}
    assert direct["ck25"] == "standin-schema-rules"
    assert direct["metaqa-1hop"] == "standin-keyword-rules"


@pytest.mark.parametrize(("change", "message"), [
    ({"methods": {"x": {"options": {}}}}, "needs 'method: NAME'"),
    ({"methods": {"x": {"method": "direct", "modle": "m"}}}, "methods.x: unknown setting 'modle' (did you mean 'model'"),
    ({"methods": {"x": {"method": "direct", "type_filter": True}}}, "methods.x: unknown setting 'type_filter'"),
    ({"run": {"questions": {"limt": 3}}}, "unknown setting 'questions.limt' (did you mean 'questions.limit'"),
    ({"datasets": {"d": {"dataset": "d", "experiment": "e"}}}, "experiment belong to the sweep"),
    ({"axes": {"colour": [1]}}, "unknown setting 'colour'"),
    ({"axes": {"seed": []}}, "non-empty list"),
    ({"run": {"concurrency": 0}}, "concurrency must be >= 1"),
    ({"exclude": [{"row": "x"}]}, "unknown key(s) row"),
    ({"executor": {"slurm": {"partitoin": "gpu"}}}, "unknown key(s) partitoin"),
    ({"datasets": {}}, "at least one entry"),
    ({"datasets": {"d": {"dataset": "d", "methods": {"dirct": {"model": "m"}}}}},
     "datasets.d.methods: no row named dirct"),
    ({"datasets": {"d": {"dataset": "d", "methods": {"direct": {"modle": "m"}}}}},
     "datasets.d.methods.direct: unknown setting 'modle'"),
])
def test_a_bad_grid_is_refused_naming_the_entry(change, message):
    with pytest.raises(GridError, match=message.replace("(", r"\(").replace(")", r"\)")):
        expand_grid({**GRID, **change})


def test_relative_paths_resolve_against_the_grid_file(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "q.jsonl").write_text("")
    (tmp_path / "grids").mkdir()
    path = tmp_path / "grids" / "g.yaml"
    path.write_text("methods: {direct: {method: direct}}\ndatasets: {q: {dataset: ../data/q.jsonl}, "
                    "m: {dataset: metaqa-1hop}}\n")
    grid = load_grid(path)
    assert grid.name == grid.experiment == "g"
    assert [c.run["dataset"] for c in grid.cells] == [str(tmp_path / "data" / "q.jsonl"), "metaqa-1hop"]
    path.write_text("methods: [direct]\n")
    with pytest.raises(GridError, match="methods must be a mapping"):
        load_grid(path)


def test_dry_run_and_status_see_runs_of_sparqlab_run_and_failures(write_grid, capsys):
    path = write_grid("""\
        name: small
        run: {{limit: 3, cache_path: {cache}, model: standin-keyword-rules}}
        methods:
          direct: {{method: direct}}
          reparse0: {{method: direct, options: {{reparse_attempts: 0}}}}
        datasets:
          metaqa-1hop: {{dataset: metaqa-1hop}}
          broken: {{dataset: no-such-dataset}}
        """)
    grid = load_grid(path)
    assert [s.status for s in grid_status(grid)] == ["missing"] * 4
    # a single `sparqlab run` of the configuration of cell direct@metaqa-1hop (sampling at the method's defaults)
    assert main(["run", "direct", "-d", "metaqa-1hop", "--limit", "3", "-m", "standin-keyword-rules",
                 "-e", "small"]) == 0
    capsys.readouterr()
    assert main(["sweep", str(path), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "done        direct@metaqa-1hop" in out and "3/3" in out
    assert "missing     reparse0@metaqa-1hop" in out and "1 done, 3 missing" in out
    # the sweep runs the rest in this process; the broken dataset fails with its reason, the others finish
    assert main(["sweep", str(path), "--workers", "0"]) == 1
    err = capsys.readouterr().err
    assert "1 cells ran, 1 skipped, 2 failed" in err
    assert main(["sweep", "status", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("done ") == 2 and out.count("failed ") == 2
    assert "unknown dataset 'no-such-dataset'" in out
    statuses = {s.cell.key: s for s in grid_status(grid)}
    assert statuses["reparse0@metaqa-1hop"].run_dir != statuses["direct@metaqa-1hop"].run_dir
    # the method config is part of the match: changing an option makes the cell missing again
    changed = load_grid(path).cells[2]
    changed.options["reparse_attempts"] = 3
    assert cell_status(grid, changed).status == "missing"
