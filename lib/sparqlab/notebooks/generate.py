"""Writing the project's notebooks from their generator scripts (``scripts/make_*.py``): the tagged parameters cell,
the parameter lines of run settings generated from their declaration, and the notebook file with the Python 3
kernelspec."""

from __future__ import annotations

import ast
import re
import typing
from pathlib import Path
from typing import Any, get_args, get_origin

import nbformat

from sparqlab.core.paths import PROJECT_ROOT
from sparqlab.core.typed import is_optional, plain

NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"


def parameters_cell(source: str) -> nbformat.NotebookNode:
    """A code cell tagged ``parameters`` (the one papermill overrides and :func:`notebook_parameters` reads).

    Every assignment must be one papermill's own reader sees: it skips a line holding a second ``=`` (e.g. in the
    comment), and ``papermill --help-notebook`` and its override check then miss that parameter."""
    from papermill.translators import PythonTranslator

    cell = nbformat.v4.new_code_cell(source, metadata={"tags": ["parameters"]})
    targets = [node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
               for node in ast.parse(source).body if isinstance(node, ast.AnnAssign | ast.Assign)]
    assigned = {target.id for target in targets if isinstance(target, ast.Name)}
    unseen = sorted(assigned - {parameter.name for parameter in PythonTranslator.inspect(cell)})
    if unseen:
        raise ValueError(f"papermill cannot read the parameter line(s) of {', '.join(unseen)}: one '=' per line "
                         "(none in the comment)")
    return cell


def write_generated_notebook(cells: list, name: str) -> Path:
    """Write ``cells`` as ``notebooks/<name>`` with the Python 3 kernelspec and say so (for ``scripts/make_*.py``)."""
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    })
    path = NOTEBOOKS_DIR / name
    nbformat.write(notebook, path)
    print(f"wrote {path}")
    return path


DECLARED_DEFAULT = "(declared default: {})"
"""How a parameter line says that the notebook's default differs from the declaration's."""

COMMENT_COLUMN = 38
"""Where a generated parameter line's comment starts (as in the hand-written lines)."""


def short_help(text: str) -> str:
    """A setting's help as a one-line comment: its first clause (up to ``; ``), without reST and without the
    parenthesised details."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", re.sub(r"``([^`]+)``", r"\1", text))
    while re.search(r"\s?\([^()]*\)", text):
        text = re.sub(r"\s?\([^()]*\)", "", text)
    return " ".join(text.split("; ")[0].split()).rstrip(".")


def annotation(kind: Any) -> str:
    """A parameter annotation for a setting's type, in the vocabulary :mod:`.parameters` reads (``Literal``
    choices as ``str``; ``Optional[...]``, the form ``papermill --help-notebook`` shows)."""
    optional, inner = is_optional(kind)
    origin = get_origin(inner)
    if origin is typing.Literal:
        text = type(get_args(inner)[0]).__name__
    elif origin in (tuple, list):
        text = f"list[{annotation(get_args(inner)[0])}]"
    elif origin is dict or inner is dict:
        text = "dict"
    else:
        text = getattr(inner, "__name__", "str")
    return f"Optional[{text}]" if optional else text


def literal(value: Any) -> str:
    """A default as Python source, strings in double quotes."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    return repr(value)


def config_parameters(config_class: Any, names: list[str], defaults: dict[str, Any] | None = None,
                      notes: dict[str, str] | None = None) -> str:
    """Parameter lines (``name: type = default  # help``) for the run settings ``names`` of ``config_class`` (a
    :class:`~sparqlab.core.config.FlatConfig`, e.g. ``RunConfig``): name, type and help from the declaration, the
    default from it too unless the notebook gives its own in ``defaults`` (the line then shows the declared one);
    ``notes`` add a few words of the notebook's own to a setting's comment."""
    defaults, notes = defaults or {}, notes or {}
    unknown = sorted((set(defaults) | set(notes)) - set(names))
    if unknown:
        raise ValueError(f"defaults or notes for settings not in names: {', '.join(unknown)}")
    lines = []
    for name in names:
        leaf = config_class.flat_names()[name]
        value = plain(defaults.get(name, leaf.default))
        comment = short_help(leaf.help) + (f" ({notes[name]})" if name in notes else "")
        if value != leaf.default:
            comment += " " + DECLARED_DEFAULT.format(literal(leaf.default))
        code = f"{name}: {annotation(leaf.type)} = {literal(value)}"
        lines.append(f"{code:<{COMMENT_COLUMN - 2}}  # {comment}")
    return "\n".join(lines)
