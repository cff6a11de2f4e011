"""The one YAML loader of the workbench: safe tags only, and aliases bounded.

``yaml.safe_load`` refuses Python tags but not alias expansion: a 700-byte file of nested aliases (a "billion
laughs") loads as a few shared objects that expand to billions of values the moment anything walks them (a
config hash, a grid expansion, ``json.dumps``). :func:`load_yaml` counts what the document expands to before
building it and refuses more than :data:`MAX_YAML_VALUES`; anchors and aliases used for ordinary reuse stay well
under it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MAX_YAML_VALUES = 1_000_000
"""The most values (scalars, lists and mappings, each alias counted as everything it stands for) one YAML
document may expand to."""


class YamlTooLarge(yaml.YAMLError):
    """A YAML document whose aliases expand beyond :data:`MAX_YAML_VALUES` (or refer to themselves)."""


def load_yaml(text: str) -> Any:
    """The Python value of the YAML document ``text`` (``None`` for an empty one), as ``yaml.safe_load`` gives it;
    raises ``yaml.YAMLError`` (:class:`YamlTooLarge` for an alias bomb) without building anything large."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def load_yaml_file(path: str | Path) -> Any:
    """:func:`load_yaml` of a UTF-8 file; a document that is not valid YAML (or an alias bomb) is a
    ``ValueError`` naming the file."""
    try:
        return load_yaml(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not valid YAML ({error})") from None


def _check_expansion(root: yaml.Node) -> None:
    """Raise :class:`YamlTooLarge` when ``root`` expands to more than :data:`MAX_YAML_VALUES` values. Each node's
    expanded size is computed once (an alias is the same node object as its anchor), so the check is linear in
    the document's text."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        children = _children(node)
        if children_done:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[key] > MAX_YAML_VALUES:
                raise YamlTooLarge(f"the document's aliases expand to more than {MAX_YAML_VALUES:,} values "
                                   "(an alias bomb?); refused")
            continue
        if key in open_nodes:
            raise YamlTooLarge("an alias refers to a value that contains it; refused")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
