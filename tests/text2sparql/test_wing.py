"""The TEXT2SPARQL wing is one package: outside it, only the CLI's command modules import it, and what the rest
of the library needs from it (its datasets, the CK25 store, the peers' methods) is found through the plug-in
tables."""

from __future__ import annotations

import ast
from pathlib import Path

import sparqlab
from sparqlab.core.plugins import BUILT_IN

LIB = Path(sparqlab.__file__).parent
WING = "sparqlab.text2sparql"


def imported_modules(path: Path) -> set[str]:
    """The ``sparqlab`` modules ``path`` imports (``from x import y`` counts as ``x`` and ``x.y``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("sparqlab.")}


def test_only_the_wing_and_the_cli_import_the_wing():
    importers = {}
    for path in sorted(LIB.rglob("*.py")):
        room = path.relative_to(LIB).parts[0]
        wing_imports = {name for name in imported_modules(path) if name == WING or name.startswith(f"{WING}.")}
        if wing_imports:
            importers.setdefault(room, set()).add(path.relative_to(LIB).as_posix())
    assert set(importers) == {"text2sparql", "cli"}, importers
    assert importers["cli"] == {"cli/evaluate.py", "cli/leaderboard.py", "cli/peers.py", "cli/serve.py"}


def test_the_wing_is_found_through_the_plug_in_tables():
    """A dataset, KG or method of the wing is reachable by name from any command without anything below the wing
    importing it."""
    from sparqlab.data.registry import DATASETS
    from sparqlab.kg.profiles import STORE_BUILDERS
    from sparqlab.platform.registry import get_method

    wing_modules = {module for group in BUILT_IN.values() for module in group if module.startswith(WING)}
    assert wing_modules == {"sparqlab.text2sparql.editions", "sparqlab.text2sparql.ck25_store",
                            "sparqlab.text2sparql.external", "sparqlab.text2sparql.metric"}
    from sparqlab.text2sparql.editions import EDITIONS

    assert {name: DATASETS[name].kg for name in EDITIONS} == {name: e.kg for name, e in EDITIONS.items()}
    assert STORE_BUILDERS.get("ck25").__module__ == "sparqlab.text2sparql.ck25_store"
    assert get_method("imported").__module__.startswith(f"{WING}.external")
    assert get_method("external").__module__.startswith(f"{WING}.external")
    from sparqlab.eval.metrics import find_metric

    assert find_metric("text2sparql").outcome.__module__ == f"{WING}.metric"
