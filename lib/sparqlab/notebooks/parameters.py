"""Typed notebook parameters: ``sparqlab reproduce`` checks every override's name and type before running anything.

Each parameter is declared in the cell tagged ``parameters`` with a type annotation (``limit: int = 40  # questions
per dataset``); the annotation is read as a type and values are parsed by the same rules as method options
(:mod:`sparqlab.core.typed`), so a typo fails at once with a message naming the parameter instead of cryptically
in cell 7.
"""

from __future__ import annotations

import ast
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, get_args, get_origin

import nbformat

from sparqlab.core.config import Leaf, suggestion
from sparqlab.core.typed import coerce, is_optional, parse_text, plain, type_name


def parse_parameter(text: str) -> Any:
    """An untyped command-line parameter value: a Python literal (``8``, ``None``, ``['a']``) or a plain string."""
    return parse_text(text, Any, "parameter")


class ParameterError(ValueError):
    """A notebook parameter override that does not match the notebook's declaration (name or type)."""


@dataclass(frozen=True)
class NotebookParameter:
    """One assignment of a notebook's ``parameters`` cell: ``name: annotation = default  # help``.

    ``type`` is the annotation read as a type: ``int``, ``float``, ``str``, ``bool``, ``dict``, ``list[X]`` and
    ``X | None`` (also written ``Optional[X]``, the form ``papermill --help-notebook`` can display); anything else
    is ``Any``. A parameter without annotation takes the type of its default. ``kind`` is its readable name.
    """

    name: str
    type: Any
    default: Any
    help: str = ""
    annotation: str = ""

    @property
    def kind(self) -> str:
        return type_name(self.type)

    def coerce(self, value: Any) -> Any:
        """``value`` (a command-line string or a YAML value) as this parameter's type, or :class:`ParameterError`.

        Strings are parsed by the declared type: ``None``/``null`` for optional parameters, ``true``/``false`` for
        booleans, and lists either comma-separated (``metaqa-1hop,mcqa-movies``) or as a ``[...]`` literal.
        """
        try:
            return coerce(parse_text(value, self.type, self.name), self.type, self.name)
        except ValueError as error:
            raise ParameterError(f"parameter {self.name!r} expects {self.kind}, got {value!r}: {error}") from None


_SCALARS = {"int": int, "float": float, "str": str, "bool": bool, "dict": dict}


def annotation_type(annotation: ast.expr | None, default: Any) -> Any:
    """The type an annotation names (see :class:`NotebookParameter`); ``Any`` for what the vocabulary lacks."""
    if annotation is None:
        if isinstance(default, list | tuple):
            inner = {type(v).__name__ for v in default}
            return list[_SCALARS[inner.pop()]] if len(inner) == 1 and next(iter(inner)) in _SCALARS else list[Any]
        return _SCALARS.get(type(default).__name__, Any) if default is not None else Any
    if isinstance(annotation, ast.Name) and annotation.id in _SCALARS:
        return _SCALARS[annotation.id]
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        rest = [s for s in (annotation.left, annotation.right) if not (isinstance(s, ast.Constant) and s.value is None)]
        if len(rest) == 1:
            inner = annotation_type(rest[0], None)
            return inner if inner is Any else Optional[inner]  # noqa: UP045
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
        if annotation.value.id == "Optional":
            inner = annotation_type(annotation.slice, None)
            return inner if inner is Any else Optional[inner]  # noqa: UP045
        if annotation.value.id in ("list", "tuple"):
            element = annotation.slice.elts[0] if isinstance(annotation.slice, ast.Tuple) else annotation.slice
            return list[annotation_type(element, None)]
        if annotation.value.id == "dict":
            return dict
    return Any


def notebook_parameters(notebook: Path) -> dict[str, NotebookParameter]:
    """The parameters a notebook declares in its cell tagged ``parameters`` (empty when it has none)."""
    nb = nbformat.read(notebook, as_version=4)
    cell = next((c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])), None)
    if cell is None:
        return {}
    lines = cell.source.splitlines()
    found = {}
    for node in ast.parse(cell.source).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name, annotation, value = node.target.id, node.annotation, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, annotation, value = node.targets[0].id, None, node.value
        else:
            continue
        try:
            default = ast.literal_eval(value) if value is not None else None
        except (ValueError, SyntaxError):  # an expression (e.g. a computed path): shown as written
            default = ast.unparse(value)
        comment = lines[node.end_lineno - 1].partition("#")[2].strip() if "#" in lines[node.end_lineno - 1] else ""
        found[name] = NotebookParameter(name, annotation_type(annotation, default), default, comment,
                                        ast.unparse(annotation) if annotation is not None else "")
    return found


def check_parameters(notebooks: list[Path], parameters: dict[str, Any]) -> dict[Path, dict[str, Any]]:
    """Per notebook, the overrides it declares, coerced to the declared types.

    A name no chosen notebook declares is a :class:`ParameterError` listing the declared ones; a name only some
    notebooks declare goes only to those (so one ``-p model_url ...`` serves a whole reproduction).
    """
    declared = {path: notebook_parameters(path) for path in notebooks}
    known = sorted({name for params in declared.values() for name in params})
    unknown = sorted(set(parameters) - set(known))
    if unknown:
        hints = [name + (f" (did you mean {close!r}?)" if (close := suggestion(name, known)) else "")
                 for name in unknown]
        raise ParameterError(f"unknown parameter(s) {', '.join(hints)}; the chosen notebook(s) declare: "
                             f"{', '.join(known) or '(none)'}")
    return {path: {name: params[name].coerce(value) for name, value in parameters.items() if name in params}
            for path, params in declared.items()}




DECLARED_DEFAULT = "(declared default: {})"
"""How a parameter's comment says that the notebook's default differs from the declaration's."""


def setting_help(text: str) -> str:
    """A setting's help as a one-line comment: its first clause (up to ``; ``), without reST and without the
    parenthesised details."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", re.sub(r"``([^`]+)``", r"\1", text))
    while re.search(r"\s\([^()]*\)", text):  # "s(0)" is a name, " (e.g. ...)" a detail
        text = re.sub(r"\s\([^()]*\)", "", text)
    return " ".join(text.split("; ")[0].split()).rstrip(".")


def setting_annotation(kind: Any) -> str:
    """The parameter annotation of a setting's type, in the vocabulary :func:`annotation_type` reads (``Literal``
    choices as ``str``; ``Optional[...]``, the form ``papermill --help-notebook`` shows)."""
    optional, inner = is_optional(kind)
    origin = get_origin(inner)
    if origin is typing.Literal:
        text = type(get_args(inner)[0]).__name__
    elif origin in (tuple, list):
        text = f"list[{setting_annotation(get_args(inner)[0])}]"
    elif origin is dict or inner is dict:
        text = "dict"
    else:
        text = getattr(inner, "__name__", "str")
    return f"Optional[{text}]" if optional else text


def source_literal(value: Any) -> str:
    """A default as Python source, strings in double quotes (as a parameter line writes it)."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(source_literal(v) for v in value) + "]"
    return repr(value)


def mirror_problems(notebook: Path, settings: dict[str, Leaf]) -> list[str]:
    """How the parameters of ``notebook`` that mirror a config's settings (``settings``: by parameter name) differ
    from their declaration, one line each (empty: none).

    A mirroring parameter has the setting's name, the annotation of its type (:func:`setting_annotation`), a
    comment starting with its help (:func:`setting_help`; the notebook may add words after it) and its declared
    default, or a default of its own with the comment ending ``(declared default: X)``: a changed declaration
    is then seen as a difference, never silently kept as a stale copy in the notebook."""
    problems = []
    for name, parameter in notebook_parameters(notebook).items():
        leaf = settings.get(name)
        if leaf is None:
            continue
        wanted = setting_annotation(leaf.type)
        if parameter.annotation != wanted:
            problems.append(f"{name}: annotated {parameter.annotation or '(nothing)'}, the setting is {wanted}")
        if not parameter.help.startswith(setting_help(leaf.help)):
            problems.append(f"{name}: the comment does not start with the setting's help {setting_help(leaf.help)!r}")
        declared = plain(leaf.default)
        if plain(parameter.default) != declared and not parameter.help.endswith(
                DECLARED_DEFAULT.format(source_literal(declared))):
            problems.append(f"{name}: default {parameter.default!r} is neither the declared {declared!r} nor says "
                            f"{DECLARED_DEFAULT.format(source_literal(declared))!r} at the end of its comment")
    return problems
