"""YAML that would explode once read: alias bombs and pathological nesting, found before use.

PyYAML builds an alias as a reference to the anchored value, so "billion laughs" loads in
kilobytes, and then whatever walks the result (a comparison, a deep copy, JSON) walks a billion
nodes. Nesting a few hundred levels deep overflows the recursion of every walker. Kubeconfigs
may use anchors legitimately, so anchors are allowed: what is refused is a document whose
expanded size (aliases counted as what they stand for) or depth is beyond any real one.
"""

from __future__ import annotations

from typing import Any

from kubedata.yaml_lib import yaml

__all__ = ["MAX_DEPTH", "MAX_EXPANDED_NODES", "bomb_problem", "nested_too_deep"]

MAX_DEPTH = 100
MAX_EXPANDED_NODES = 1_000_000


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def bomb_problem(root: yaml.Node) -> tuple[int, str] | None:
    """(line, what is wrong) when the composed document is too deep or expands too far."""
    # depth first, iteratively: the size count below recurses
    stack = [(root, 0)]
    seen: set[int] = set()
    aliased = False
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return node.start_mark.line + 1, f"nested more than {MAX_DEPTH} levels deep"
        if id(node) in seen:
            aliased = True
            continue
        seen.add(id(node))
        stack += [(child, depth + 1) for child in _children(node)]
    if not aliased and len(seen) <= MAX_EXPANDED_NODES:
        return None  # a tree (every document without aliases): its size is its nodes, counted
    sizes: dict[int, int] = {}

    def size(node: yaml.Node) -> int:
        if id(node) not in sizes:
            sizes[id(node)] = 1 + sum(size(child) for child in _children(node))
        return sizes[id(node)]

    if size(root) > MAX_EXPANDED_NODES:
        return (
            root.start_mark.line + 1,
            f"its aliases expand to over {MAX_EXPANDED_NODES} values (an alias bomb?)",
        )
    return None


def nested_too_deep(data: Any) -> bool:
    """Whether loaded data (dicts, lists, scalars) nests deeper than bomb_problem allows: the
    same depth, counted on what a parser without aliases built (yaml-rs)."""
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(value, dict):
            stack += [(child, depth + 1) for child in value.values()]
        elif isinstance(value, list):
            stack += [(child, depth + 1) for child in value]
    return False
