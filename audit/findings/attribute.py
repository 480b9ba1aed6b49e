"""Who wrote a field: managedFields (FieldsV1) -> the managers owning a path.

FieldsV1 is a trie (drift-anchors §1.11): keys are `f:<field>`, `k:<json>` (an item of a keyed
list, named by its key fields), `v:<json>` (a set item, named by its value), `i:<n>` (an index),
and `.` (the node itself). An empty node `{}` is a leaf: the manager owns that field whole, which
for an atomic list or map means every item in it.

Algorithm (drift-anchors §4.8): walk each entry's trie along the path. An entry *covers* the path
when it owns the path itself, or a leaf on its way (an atomic list the path goes into); among the
covering entries the longest owned prefix wins, and all entries owning that prefix are reported
(shared ownership). For a live-only subtree (an `added` finding) the entries owning something
inside it count as well, inside what is compared only: a child normalization removed (a default)
proves nothing about who wrote the rest. A granular map's `.` does not own its children. No
covering entry means unattributable: managedFields were cleared, or the API server's defaulting
set the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubedata.diff import Item, Segment, SetValue
from kubedata.objects import KubeObject

from audit.findings.finding import Manager

__all__ = ["Attribution", "ManagedEntry", "attribute", "managed_entries", "owned_fields"]


@dataclass(frozen=True)
class ManagedEntry:
    manager: str
    operation: str
    time: str
    subresource: str
    fields: Mapping[str, Any]

    @property
    def public(self) -> Manager:
        return Manager(self.manager, self.operation, self.time, self.subresource)


@dataclass(frozen=True)
class Attribution:
    managers: tuple[ManagedEntry, ...]
    """Owners of the path (or of its longest owned prefix, or of parts of a live-only subtree)."""
    has_managed_fields: bool
    """False when the object carries no usable managedFields: nothing can be attributed."""

    @property
    def attributed(self) -> bool:
        return bool(self.managers)


def managed_entries(obj: KubeObject) -> list[ManagedEntry]:
    """The object's FieldsV1 entries (others, and `[{}]` as left by clearing, are skipped)."""
    out = []
    for raw in (obj.get("metadata") or {}).get("managedFields") or ():
        if not isinstance(raw, dict) or raw.get("fieldsType", "FieldsV1") != "FieldsV1":
            continue
        fields = raw.get("fieldsV1")
        if not isinstance(fields, dict) or not raw.get("manager"):
            continue
        out.append(
            ManagedEntry(
                manager=str(raw["manager"]),
                operation=str(raw.get("operation", "")),
                time=str(raw.get("time") or ""),
                subresource=str(raw.get("subresource") or ""),
                fields=fields,
            )
        )
    return out


def _parse(key: str) -> Any:
    try:
        return json.loads(key[2:])
    except ValueError:
        return None


def _child(node: Mapping[str, Any], seg: Segment) -> Any:
    """The trie node for one path segment, or None."""
    if isinstance(seg, str):
        return node.get(f"f:{seg}")
    if isinstance(seg, int):
        return node.get(f"i:{seg}")
    if isinstance(seg, SetValue):
        want = seg.value
        return next((v for k, v in node.items() if k.startswith("v:") and _parse(k) == want), None)
    if isinstance(seg, Item):
        want_item = dict(seg.keys)
        return next(
            (v for k, v in node.items() if k.startswith("k:") and _parse(k) == want_item),
            None,
        )
    return None


def _is_leaf(node: Any) -> bool:
    return isinstance(node, dict) and not node


_NO_VALUE = object()
"""`within` not given: anything owned below the path counts."""


def _ownership(
    fields: Mapping[str, Any], path: tuple[Segment, ...], within: Any
) -> tuple[int, bool]:
    """(depth of the longest owned prefix, -1 if none; whether it owns something below path that
    `within`, the value there, holds)."""
    node: Any = fields
    for depth, seg in enumerate(path):
        child = _child(node, seg) if isinstance(node, dict) else None
        if child is None:
            return -1, False
        if _is_leaf(child):
            return depth + 1, False  # a scalar or an atomic value the path lies inside
        node = child
    owns_self = isinstance(node, dict) and "." in node
    return (len(path) if owns_self else -1), _owns_within(node, within)


def _owns_within(node: Any, value: Any) -> bool:
    """Whether the trie `node` owns a field that `value` holds (a field normalization removed,
    such as a default, is not in `value` and does not count)."""
    if not isinstance(node, dict):
        return False
    if value is _NO_VALUE:
        return any(k != "." for k in node)
    for key, sub in node.items():
        if not key.startswith("f:") or not isinstance(value, dict) or key[2:] not in value:
            if key.startswith(("k:", "v:", "i:")) and isinstance(value, list) and value:
                return True  # an owned item of a list that is there
            continue
        if _is_leaf(sub) or "." in sub or _owns_within(sub, value[key[2:]]):
            return True
    return False


def attribute(
    entries: Iterable[ManagedEntry],
    path: tuple[Segment, ...],
    subtree: bool = False,
    within: Any = _NO_VALUE,
) -> Attribution:
    """The managers owning `path`; with `subtree`, also those owning anything below it; given
    `within` (the live-only value at `path`, as compared), those owning something it holds."""
    entries = list(entries)
    subtree = subtree or within is not _NO_VALUE
    best = -1
    covering: list[tuple[int, ManagedEntry]] = []
    below: list[ManagedEntry] = []
    for entry in entries:
        depth, owns_below = _ownership(entry.fields, path, within)
        if depth >= 0:
            covering.append((depth, entry))
            best = max(best, depth)
        elif subtree and owns_below:
            below.append(entry)
    owners = [e for d, e in covering if d == best]
    if subtree:
        owners += [e for e in below if e not in owners]
    return Attribution(tuple(owners), bool(entries))


def owned_fields(fields: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The struct fields an entry owns, as field-name paths (list items: their list's path)."""
    out: list[tuple[str, ...]] = []
    for key, node in fields.items():
        if not key.startswith("f:"):
            if key != "." and prefix and prefix not in out:
                out.append(prefix)  # an owned item or value of the list at `prefix`
            continue
        path = (*prefix, key[2:])
        if not isinstance(node, dict) or not node or ("." in node and len(node) == 1):
            out.append(path)
        else:
            out += [p for p in owned_fields(node, path) if p not in out]
    return out
