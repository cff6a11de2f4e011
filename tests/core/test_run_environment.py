"""The run defaults taken from the environment are read in one place, :mod:`sparqlab.core.environment`; every
other module asks it (a grep over the library's syntax trees finds no other read), and the default model and
endpoint are applied by one function there, :func:`~sparqlab.core.environment.model_defaults`."""

from __future__ import annotations

import ast
from pathlib import Path

import sparqlab
from sparqlab.core import environment
from sparqlab.core.environment import VARIABLES

LIB = Path(sparqlab.__file__).parent
RESOLVER = LIB / "core" / "environment.py"
MODEL_VARIABLES = ("SPARQLAB_MODEL", "SPARQLAB_MODEL_URL")


def environment_reads(tree: ast.Module) -> list[tuple[int, str]]:
    """Reads of a run default: ``os.environ[...]``, ``os.environ.get/pop/setdefault(...)``, ``os.getenv(...)``,
    keyed by a string or by a module constant holding one."""
    constants = {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) for target in node.targets if isinstance(target, ast.Name)}
    found = []
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Subscript) and "environ" in ast.unparse(node.value):
            key = node.slice
        elif isinstance(node, ast.Call) and node.args and ("environ" in ast.unparse(node.func)
                                                           or ast.unparse(node.func).endswith("getenv")):
            key = node.args[0]
        name = key.value if isinstance(key, ast.Constant) else constants.get(key.id) if isinstance(key, ast.Name) \
            else None
        if name in VARIABLES:
            found.append((node.lineno, name))
    return found


def test_no_module_but_the_resolver_reads_a_run_default_from_the_environment():
    offenders = {}
    for path in sorted(LIB.rglob("*.py")):
        reads = environment_reads(ast.parse(path.read_text(encoding="utf-8")))
        if reads and path != RESOLVER:
            offenders[str(path.relative_to(LIB))] = reads
    assert offenders == {}
    assert environment_reads(ast.parse("import os\nos.environ.get('SPARQLAB_MODEL')")), "the grep finds a read"


def served(name: str) -> bool:
    return not name.startswith("standin-")


def test_the_resolver_reads_the_environment_at_each_call_and_refuses_unknown_names(monkeypatch):
    monkeypatch.setenv("SPARQLAB_MODEL", " my-llama ")
    monkeypatch.setenv("SPARQLAB_MODEL_URL", "")
    assert environment.model_defaults(None, None, served_over_http=served) == ("my-llama", None)
    monkeypatch.setenv("SPARQLAB_MODEL_URL", "http://gpu:8000/v1")
    assert environment.model_defaults(None, None, served_over_http=served) == ("my-llama", "http://gpu:8000/v1")
    try:
        environment.setting("SPARQLAB_MODLE")
    except KeyError as error:
        assert "not a sparqlab run default" in str(error)
    else:
        raise AssertionError("an unknown variable name must be refused")


def test_the_model_defaults_fill_only_what_is_not_given(monkeypatch):
    monkeypatch.setenv("SPARQLAB_MODEL", "my-llama")
    monkeypatch.setenv("SPARQLAB_MODEL_URL", "http://gpu:8000/v1")
    defaults = environment.model_defaults
    assert defaults("other", "http://b/v1", served_over_http=served) == ("other", "http://b/v1")
    assert defaults("other", None, served_over_http=served) == ("other", "http://gpu:8000/v1")
    assert defaults("standin-echo", None, served_over_http=served) == ("standin-echo", None)  # runs in process


def test_no_module_but_the_resolver_applies_the_model_defaults():
    """``SPARQLAB_MODEL`` / ``SPARQLAB_MODEL_URL`` are read by name only inside :mod:`sparqlab.core.environment`
    (everyone else calls :func:`~sparqlab.core.environment.model_defaults`)."""
    offenders = []
    for path in sorted(LIB.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("setting") and node.args
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value in MODEL_VARIABLES
                    and path != RESOLVER):
                offenders.append(f"{path.relative_to(LIB)}:{node.lineno}")
    assert offenders == []
