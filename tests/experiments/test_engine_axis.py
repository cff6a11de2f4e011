"""The store as an axis: a grid's ``engines`` runs every row on each SPARQL engine (the KG served on 127.0.0.1 for
the run), and the table says how much each method's score depends on the store."""

from __future__ import annotations

import pytest

from sparqlab.experiments.grid import GridError, expand_grid, load_grid
from support.engines import require_engine

GRID = """\
    name: stores
    run: {{limit: 3, cache_path: {cache}}}
    methods:
      direct: {{method: direct, model: standin-schema-rules}}
    datasets:
      ck25: {{dataset: ck25, kg: ck25, kg_options: {{timeout_s: 20}}}}
    engines: [embedded, oxigraph-server, virtuoso]
    """


def test_engines_multiply_the_rows_and_set_the_kg_option():
    grid = expand_grid({"methods": {"direct": {"method": "direct"}}, "datasets": {"m": {"dataset": "metaqa-1hop",
                        "kg_options": {"timeout_s": 5}}}, "engines": ["embedded", "virtuoso"]})
    assert grid.rows == ["direct engine=embedded", "direct engine=virtuoso"]
    assert [cell.run["kg_options"] for cell in grid.cells] == [{"timeout_s": 5}, {"timeout_s": 5, "engine": "virtuoso"}]
    with pytest.raises(GridError, match="engines must be a non-empty list"):
        expand_grid({"methods": {"d": {"method": "direct"}}, "datasets": {"m": {"dataset": "metaqa-1hop"}},
                     "engines": ["fuseki"]})


@pytest.mark.slow
def test_the_table_shows_how_much_the_score_depends_on_the_store(write_grid, capsys):
    require_engine("virtuoso")
    from sparqlab.cli import main
    from sparqlab.experiments.executors import run_local
    from sparqlab.experiments.sweep import grid_status
    from sparqlab.experiments.table import build_table, store_dependence

    path = write_grid(GRID)
    grid = load_grid(path)
    run_local(grid, grid.cells, workers=0)
    engines = {status.cell.row: status.run_dir.name for status in grid_status(grid)}
    assert len(set(engines.values())) == 3  # three engines, three runs
    table = build_table(grid)
    dependence = store_dependence(table)
    assert list(dependence.index) == [("direct [standin]", "ck25")]
    scores = dependence.loc[("direct [standin]", "ck25")]
    assert set(scores.index) == {"embedded", "oxigraph-server", "virtuoso", "spread"}
    assert scores["spread"] == pytest.approx(max(scores.drop("spread")) - min(scores.drop("spread")))
    assert main(["table", str(path)]) == 0
    assert "F1 by store: direct [standin] on ck25: embedded" in capsys.readouterr().err
