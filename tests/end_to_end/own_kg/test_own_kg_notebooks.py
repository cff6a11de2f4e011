"""Every bundled notebook on a KG and dataset the project does not ship, given as parameters (an RDF file and a
folder of ``<split>.jsonl``): the university KG of test_own_kg.py and a music catalogue with another vocabulary
(``music/``: its own ``mo:``/``mr:`` prefixes, a class hierarchy, skos:altLabels, 40 train and 12 test questions).

Each notebook runs headless with its smallest parameters (groups side by side: the university KG's notebooks, the
music KG's in two — the GGC, training and CK25 ones, and the generative-SPARQL one, so that no group runs much
longer than the others — and the grid notebook) and must complete; nothing it shows — outputs, figure texts, figure
and output file names — may hold an absolute path or the name of a bundled KG or dataset, since none was given.
Library warnings printed from installed packages (``site-packages``) are not the notebooks' text and are left out."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from support.notebooks import reproduce

HERE = Path(__file__).parent
UNIVERSITY, MUSIC = HERE / "university", HERE / "music"

SMALL = {"limit": "2", "sample": "None", "split": "test", "train_limit": "8", "test_limit": "2",
         "concurrency": "2"}
"""Parameters shared by the notebooks that declare them (the smallest sensible run)."""

MUSIC_PARAMETERS = {
    **SMALL, "kg": str(MUSIC / "music.ttl"), "dataset": str(MUSIC), "datasets": str(MUSIC),
    "gate_backends": "tfidf", "thresholds": "[0.5]", "threshold": "0.5", "examples": "example1", "demo_query": "",
    "compositions": "W1.0", "max_steps": "1", "train_generator": "false", "limit": "16",
    "methods": "direct", "standins": "standin-schema-rules", "gold_source": "execute",
    "standin_training": "None"}
"""The music KG's notebooks' parameters."""

GROUPS = {
    "university": (["00_quickstart", "01_agent_runs", "02_schema_coverage", "03_ablations", "07_uri_correction"], {
        **SMALL, "kg": str(UNIVERSITY / "university.ttl"), "dataset": str(UNIVERSITY),
        "datasets": str(UNIVERSITY), "showcase_question": "None", "include_spinach": "false",
        "coverages": "[0.0, 1.0]", "seeds": "[0]", "embedder": "hashing", "train_limit": "4",
        "wikidata_sets": "[]", "lcquad2_limit": "0", "freebase_sets": "[]"}),
    "music": (["04_ggc_main", "05_gate_threshold_sweep", "06_error_categorisation",
               "09_corrector_data_composition", "10_text2sparql_ck25"], MUSIC_PARAMETERS),
    "music-generative": (["08_generative_sparql"], MUSIC_PARAMETERS),
    "grid": (["11_all_methods"], {"datasets": "None", "repeats_baseline": "direct"}),
}
"""Per group: its notebooks and their parameters (a name goes only to the notebooks declaring it). 09's ``limit``
is its training split's questions (half of them the gate's); 11 runs the grid of :func:`grid_file` (music KG),
also as its repeats grid."""


def grid_file(folder: Path) -> Path:
    """A grid of two methods on the music KG for notebook 11."""
    path = folder / "catalogue.yaml"
    path.write_text(f"""name: catalogue
run: {{limit: 2, concurrency: 2}}
methods:
  direct: {{method: direct, model: standin-schema-rules}}
  saga: {{method: saga, model: standin-agent}}
datasets:
  songs: {{dataset: {MUSIC}, split: test, kg: {MUSIC / 'music.ttl'}}}
""", encoding="utf-8")
    return path


def bundled_names() -> list[str]:
    """The bundled KGs' and datasets' names, but those that also name a method (``spinach``)."""
    from sparqlab.data.registry import DATASETS
    from sparqlab.kg.profiles import PROFILES
    from sparqlab.platform.registry import method_names

    names = (set(DATASETS.names()) | set(PROFILES.names())) - set(method_names())
    return sorted(names, key=len, reverse=True)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """Both groups executed side by side; the folder holding their runs, figures and executed notebooks."""
    root = tmp_path_factory.mktemp("own-kg-notebooks")
    GROUPS["grid"][1]["grid"] = GROUPS["grid"][1]["repeats_grid"] = str(grid_file(root))
    with ThreadPoolExecutor(len(GROUPS)) as pool:
        done = list(pool.map(lambda item: reproduce(root / item[0], *item[1][0], timeout=900,
                                                    parameters=declared(item[1][0], item[1][1])), GROUPS.items()))
    return root, done


def declared(notebooks: list[str], parameters: dict[str, str]) -> dict[str, str]:
    """The ``parameters`` one of ``notebooks`` declares (``sparqlab reproduce`` refuses any other)."""
    from sparqlab.notebooks import NOTEBOOKS_DIR, notebook_parameters

    names = {name for notebook in notebooks for name in notebook_parameters(NOTEBOOKS_DIR / f"{notebook}.ipynb")}
    return {name: value for name, value in parameters.items() if name in names}


def problems_in(text: str, roots: list[str], names: list[str]) -> list[str]:
    """Absolute paths under ``roots`` and bundled ``names`` (as whole words, any case) in ``text``."""
    lines = [line for line in text.splitlines() if "site-packages" not in line]
    text = "\n".join(lines)
    found = [root for root in roots if root in text]
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])", re.IGNORECASE)
    found += sorted({match.group(0) for match in pattern.finditer(text)})
    return found


def shown_text(notebook) -> str:
    """Every output of the notebook's code cells but the injected parameters (images left out: their texts are
    checked through the figures' sidecars)."""
    parts = []
    for cell in notebook.cells:
        if cell.cell_type != "code" or "injected-parameters" in cell.metadata.get("tags", []):
            continue
        for output in cell.get("outputs", []):
            data = {key: value for key, value in output.get("data", {}).items() if not key.startswith("image/")}
            parts.append(json.dumps({**{k: v for k, v in output.items() if k != "data"}, "data": data}))
    return "\n".join(parts)


@pytest.mark.slow
def test_every_notebook_runs_on_an_own_kg_and_shows_only_short_names(executed):
    from sparqlab.core.paths import PROJECT_ROOT

    root, done = executed
    roots = [str(root), str(HERE), str(PROJECT_ROOT), "end_to_end_own_kg", root.name]
    names = bundled_names()
    ran = []
    for (group, (notebooks, _)), result in zip(GROUPS.items(), done, strict=True):
        for name in notebooks:
            notebook = result.notebook(name)
            code = [cell for cell in notebook.cells if cell.cell_type == "code"]
            assert all(cell.execution_count for cell in code), f"{name}: not every cell ran"
            assert problems_in(shown_text(notebook), roots, names) == [], f"{name} on {group} shows these"
            ran.append(name)
        figures = sorted((root / group / "figures").rglob("*.json"))
        assert figures, f"the {group} notebooks drew figures"
        for sidecar in figures:
            record = json.loads(sidecar.read_text())
            shown = "\n".join(record["texts"] + record["files"] + [json.dumps(record["params"])])
            assert problems_in(shown, roots, names) == [], f"figure {sidecar.name} shows these"
        written = [path.relative_to(root / group).as_posix() for path in (root / group).rglob("*")
                   if "notebooks" not in path.parts and ".reproduce" not in path.parts]
        assert problems_in("\n".join(written), roots, names) == [], f"files written by the {group} notebooks"
    assert sorted(ran) == sorted(path.stem for path in (PROJECT_ROOT / "notebooks").glob("*.ipynb"))
