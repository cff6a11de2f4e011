"""The connection layer reaches uvicorn through its documented interfaces only: the public package's ``Config``
and ``Server``, never a submodule (its HTTP protocols are internals any release may change) nor a subclass whose
overrides would depend on them."""

from __future__ import annotations

import ast
from pathlib import Path

import sparqlab


def test_the_library_uses_uvicorn_s_public_package_only_and_subclasses_none_of_it():
    imported, subclasses = {}, []
    for path in Path(sparqlab.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                if name.split(".")[0] == "uvicorn":
                    imported.setdefault(name, []).append(path.name)
            if isinstance(node, ast.ClassDef):
                subclasses += [f"{path.name}:{node.name}" for base in node.bases
                               if "uvicorn" in ast.unparse(base)]
    assert set(imported) == {"uvicorn"}, imported
    assert subclasses == [], subclasses
