"""Plug-in discovery: one list behind the method registry, the stand-in registry and the CLI, so they cannot
disagree; sparqlab's own modules are found without any installed metadata, and a third-party package adds a method
through an entry point the way docs/adding-a-method.md says. No test here lists the methods: the method packages on disk are
the list."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import sparqlab
from sparqlab.core import plugins
from sparqlab.core.plugins import (
    BUILT_IN,
    COMMAND_GROUP,
    PLUGIN_GROUP,
    PluginError,
    declared,
    load_plugins,
    method_packages,
)
from sparqlab.llm.standins import standin_names
from sparqlab.platform import method_names
from support.plugin_helpers import install_package

LIB = Path(sparqlab.__file__).parent
PROJECT = LIB.parents[1]
SPARQLAB = Path(sys.executable).with_name("sparqlab")
METHOD_PACKAGES = {p.name for p in (LIB / "methods").iterdir() if (p / "__init__.py").exists()}
"""The method packages on disk: each must register its methods (a new one is found, not listed in a test)."""


def _dist_info(folder: Path, name: str, entry_points: str) -> None:
    info = folder / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)


def test_every_standin_of_the_method_packages_is_listed():
    names = set(standin_names())
    assert {"standin-keyword-rules", "standin-schema-rules", "standin-agent", "standin-knn", "standin-corrector",
            "standin-desq", "standin-genop-script", "standin-echo", "standin-latency", "standin-reasoning",
            "standin-tiny-random"} <= names
    listed = subprocess.run([str(SPARQLAB), "models", "list"], capture_output=True, text=True, check=True).stdout
    assert {line.split()[0] for line in listed.splitlines() if line.strip()} == names


def test_the_method_packages_are_found_on_disk_and_command_modules_are_listed_in_code():
    """sparqlab's own plug-ins are not entry points: every method package on disk is found as it is, and every
    module with a ``register(subparsers)`` is one line of :data:`BUILT_IN`."""
    packages = {f"sparqlab.methods.{name}" for name in METHOD_PACKAGES}
    assert set(method_packages()) == packages
    assert {point.value for point in declared(PLUGIN_GROUP)} >= packages | set(BUILT_IN[PLUGIN_GROUP])
    commands = {f"sparqlab.cli.{p.stem}" for p in (LIB / "cli").glob("*.py") if "\ndef register(" in p.read_text()}
    assert set(BUILT_IN[COMMAND_GROUP]) == commands


def test_built_in_methods_and_commands_are_found_without_any_entry_point_metadata():
    """In a process where no installed distribution declares an entry point (as after adding a method without
    reinstalling), every method package on disk registers its methods and ``sparqlab --help`` lists every
    command module's commands."""
    code = textwrap.dedent("""
        import importlib.metadata, json, sys
        importlib.metadata.entry_points = lambda **_: []   # no installed distribution declares anything
        from sparqlab.platform import get_method, method_names
        methods = {name: get_method(name).__module__ for name in method_names()}   # before any command module
        from sparqlab.cli import build_parser
        build_parser()
        print(json.dumps({"methods": methods,
                          "modules": sorted(m for m in sys.modules if m.startswith("sparqlab.cli."))}))
    """)
    found = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                      check=True).stdout)
    packages = {".".join(module.split(".")[:3]) for module in found["methods"].values()}
    assert packages == {f"sparqlab.methods.{name}" for name in METHOD_PACKAGES} | {"sparqlab.text2sparql.external"}, \
        found["methods"]
    assert set(BUILT_IN[COMMAND_GROUP]) <= set(found["modules"])


def test_a_broken_plugin_is_an_error_naming_it(tmp_path, monkeypatch):
    (tmp_path / "broken_method_pkg.py").write_text("import module_that_does_not_exist_xyz\n")
    _dist_info(tmp_path, "broken-pkg", f"[{PLUGIN_GROUP}]\nbroken = broken_method_pkg\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(plugins, "_loaded", set(plugins._loaded))
    with pytest.raises(PluginError, match="broken_method_pkg.*module_that_does_not_exist_xyz"):
        load_plugins()
    sys.modules.pop("broken_method_pkg", None)


def test_platform_and_runner_import_no_method_package():
    code = ("import sys, sparqlab.platform, sparqlab.runs; "
            "print(sorted(m for m in sys.modules if m.startswith('sparqlab.methods')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_no_method_package_imports_another_or_the_runner():
    problems = []
    for path in sorted((LIB / "methods").rglob("*.py")):
        parts = path.relative_to(LIB / "methods").parts
        if len(parts) < 2:
            continue
        own = parts[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                module = node.module.split(".")
                if module[:2] == ["sparqlab", "methods"] and len(module) > 2 and module[2] != own:
                    problems.append(f"{path.relative_to(LIB)} imports {node.module}")
                if module[:2] in (["sparqlab", "runs"], ["sparqlab", "experiments"]):
                    problems.append(f"{path.relative_to(LIB)} imports {node.module}")
    assert not problems, problems


def test_no_method_package_names_a_kg_or_a_dataset():
    """KG knowledge lives in the KG profiles: a method package spells no KG or dataset name in its code (defaults,
    branches, tables keyed by KG) and imports no KG's own module."""
    from sparqlab.data import dataset_names
    from sparqlab.kg.profiles import PROFILES

    names = (set(PROFILES.names()) | set(dataset_names())) - set(method_names())  # "spinach" is both
    kg_modules = {f"sparqlab.kg.{name}" for name in ("movies", "wikidata", "freebase", "ck25", "dbpedia")}
    problems = []
    for path in sorted((LIB / "methods").rglob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                    and node.value.lower() in names):
                problems.append(f"{path.relative_to(LIB)}:{node.lineno} names {node.value!r}")
            if isinstance(node, ast.ImportFrom) and node.module in kg_modules:
                problems.append(f"{path.relative_to(LIB)}:{node.lineno} imports {node.module}")
    assert not problems, problems


@pytest.mark.slow
def test_a_third_party_method_package_is_found_by_methods_list_and_run(tmp_path):
    """The recipe of docs/adding-a-method.md: a package with a Method subclass and a `sparqlab.plugins` entry point, installed."""
    env = install_package(tmp_path, "toy-sparqlab-method", "toy_sparqlab_method", '''
        from dataclasses import dataclass

        from sparqlab.platform import Method, MethodConfig, MethodOutput, register_method


        @dataclass(frozen=True)
        class ToyConfig(MethodConfig):
            """Settings of the toy method."""

            relation: str = "directed_by"


        @register_method("toy-lookup")
        class ToyLookup(Method):
            """Asks the KG for every film's director: a method needing no model."""

            config_class = ToyConfig
            roles = ()

            async def answer(self, question, ctx):
                return MethodOutput(
                    f"SELECT ?d WHERE {{ ?f mrel:{self.config.relation} ?d }} LIMIT 1", None, {})
    ''', {"sparqlab.plugins": "toy"})
    env["SPARQLAB_RUNS"] = str(tmp_path / "runs")
    listed = subprocess.run([str(SPARQLAB), "methods", "list"], capture_output=True, text=True, env=env, check=True)
    assert "toy-lookup" in listed.stdout and "relation='directed_by'" in listed.stdout
    ran = subprocess.run([str(SPARQLAB), "run", "toy-lookup", "-d", "metaqa-1hop", "--limit", "2", "-e", "toy",
                          "-o", "relation=written_by"], capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stderr
    predictions = list((tmp_path / "runs" / "toy").glob("*/predictions.jsonl"))
    assert len(predictions) == 1 and "mrel:written_by" in predictions[0].read_text()
