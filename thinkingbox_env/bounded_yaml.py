"""YAML from files a user did not write, read within bounds and refused by name.

Task specs, a published benchmark's scenario and test files and run configurations may come
from anywhere. YAML lets a kilobyte describe a structure of billions of nodes through
aliases (each alias is one shared object while loading, but validation, copying and JSON
writing expand it), nests deeper than the parser's recursion, and may not be UTF-8 at all.
:func:`load_bounded_yaml` composes the document first, measures it as it would be once
expanded (nodes counted with each alias at its full size) and its depth, and only then
builds the Python values; every refusal names the source and what was wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

__all__ = ["MAX_YAML_BYTES", "MAX_YAML_DEPTH", "MAX_YAML_NODES", "BoundedYAMLError", "load_bounded_yaml", "read_bounded_yaml"]

MAX_YAML_BYTES = 16 * 1024 * 1024
MAX_YAML_DEPTH = 64          # the deepest frozen task spec is under 12
MAX_YAML_NODES = 2_000_000   # counted with every alias expanded; the largest file shipped has about 40,000

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml is about 10x faster


class BoundedYAMLError(ValueError):
    """A YAML source that is malformed or over a bound; the message names the source and the problem."""


def read_bounded_yaml(path: Path | str, what: str = "file") -> Any:
    """The YAML document in ``path``, bounded (see the module docstring)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_YAML_BYTES:
            raise BoundedYAMLError(f"{path}: the {what} is too large ({size:,} bytes; the limit is {MAX_YAML_BYTES:,})")
        raw = path.read_bytes()
    except OSError as exc:
        raise BoundedYAMLError(f"{path}: the {what} cannot be read: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BoundedYAMLError(f"{path}: the {what} is not UTF-8 text (byte {exc.start} is 0x{raw[exc.start]:02x})") from exc
    return load_bounded_yaml(text, str(path))


def load_bounded_yaml(text: str, source: str) -> Any:
    """The YAML document in ``text`` (``source`` names it in errors), bounded in size, depth and expanded nodes."""
    if len(text) > MAX_YAML_BYTES:
        raise BoundedYAMLError(f"{source}: the YAML is too large ({len(text):,} characters; the limit is {MAX_YAML_BYTES:,})")
    loader = _LOADER(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.YAMLError as exc:
            raise BoundedYAMLError(f"{source}: not valid YAML: {exc}") from exc
        if node is None:
            return None
        _check_shape(node, source)
        try:
            return loader.construct_document(node)
        except (yaml.YAMLError, RecursionError, ValueError, TypeError) as exc:
            raise BoundedYAMLError(f"{source}: not valid YAML: {exc}") from exc
    finally:
        loader.dispose()


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_shape(root: yaml.Node, source: str) -> None:
    """Refuse a document deeper than :data:`MAX_YAML_DEPTH` or larger than :data:`MAX_YAML_NODES` once expanded.

    An iterative post-order walk (no recursion, whatever the depth): each distinct node's
    expanded size once, an alias counted at the full size of what it names. A node that
    contains itself never finishes its walk and is refused by the depth bound.
    """
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, children_done = stack.pop()
        if id(node) in size:
            continue
        if children_done:
            total = 1 + sum(size[id(child)] for child in _children(node))
            if total > MAX_YAML_NODES:
                raise BoundedYAMLError(f"{source}: the YAML expands to more than {MAX_YAML_NODES:,} values "
                                       "(aliases repeating aliases); refused")
            size[id(node)] = total
            continue
        if depth > MAX_YAML_DEPTH:
            line = node.start_mark.line + 1 if node.start_mark else "?"
            raise BoundedYAMLError(f"{source}: the YAML nests deeper than {MAX_YAML_DEPTH} levels (at line {line})")
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in _children(node) if id(child) not in size)
