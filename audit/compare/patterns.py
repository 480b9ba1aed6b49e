"""Field-path patterns, and where they match in an object tree.

Why this exists: the rule tables (known_types.py, severity.py, redact.py, wiring.py) name fields
by pattern, and normalize.py, defaults.py and differ.py apply those patterns to objects. A
pattern is a tuple of field names; `*` matches one segment (a map key or a list item), `**` any
number of segments. List items appear as `*` in the paths patterns are matched against.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

__all__ = ["Pattern", "children", "compile_pattern", "matches", "select"]

Pattern = tuple[str, ...]


def compile_pattern(text: str) -> Pattern:
    return tuple(text.strip("/").split("/")) if text else ()


@lru_cache(maxsize=1 << 16)
def matches(pattern: Pattern, path: tuple[str, ...]) -> bool:
    """Glob match of a field path against a pattern (`*` one segment, `**` any number)."""
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(matches(rest, path[i:]) for i in range(len(path) + 1))
    if not path:
        return False
    return (head == "*" or head == path[0]) and matches(rest, path[1:])


def select(node: Any, pattern: Pattern) -> Iterator[tuple[Any, str | int]]:
    """(container, key) of every value at `pattern` below `node` (containers are dicts or lists)."""
    if not pattern:
        return
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        yield from select(node, rest)
        for _, child in children(node):
            yield from select(child, pattern)
        return
    for key, child in children(node):
        if head == "*" or head == key:
            if rest:
                yield from select(child, rest)
            else:
                yield node, key


def children(node: Any) -> list[tuple[Any, Any]]:
    """(key, child) of a map, (index, item) of a list; nothing for a scalar."""
    if isinstance(node, dict):
        return list(node.items())
    if isinstance(node, list):
        return list(enumerate(node))
    return []
