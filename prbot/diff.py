"""Comparing two built object sets: added, removed and changed objects, changes as field paths.

Pure. dyff's model: only changed paths are reported, each with its value before and after; lists of
mappings are matched by an identifying field so a reorder or an insertion is not reported as every
later entry changing; lists of scalars are compared whole (they are atomic in the manifests this
tool emits). Secret values are replaced by a digest before anything is compared or shown.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kubedata.objects import KubeObject, ObjectKey, json_pointer, key_of

__all__ = [
    "LIST_KEYS",
    "Change",
    "FieldChange",
    "ListKey",
    "ObjectChange",
    "diff_objects",
    "display_path",
    "index_objects",
    "json_pointer",
    "redact",
    "same",
]

LIST_KEYS = ("name", "pciVendorSelector", "mdevNameSelector", "resourceName")
"""Fields that identify an entry of a list of mappings, tried in this order."""

Change = Literal["added", "removed", "changed", "reordered"]
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True, order=True)
class ListKey:
    """A list entry found by an identifying field, e.g. name=gpu-operator."""

    field: str
    value: str

    def __str__(self) -> str:
        return f"[{self.field}={self.value}]"


Segment = str | int | ListKey


@dataclass(frozen=True)
class FieldChange:
    """One changed path of an object. `pointer` is the JSON pointer at head (base if removed)."""

    path: tuple[Segment, ...]
    pointer: str
    change: Change
    before: Any = None
    after: Any = None

    @property
    def display(self) -> str:
        return display_path(self.path)


@dataclass(frozen=True)
class ObjectChange:
    """An object added (`after` set), removed (`before` set) or changed (`fields` set)."""

    key: ObjectKey
    change: Literal["added", "removed", "changed"]
    before: KubeObject | None = None
    after: KubeObject | None = None
    fields: tuple[FieldChange, ...] = ()


def display_path(path: Iterable[Segment]) -> str:
    """dyff-style dotted path: spec.devices[pciVendorSelector=10DE:2BB5].resourceName."""
    out = ""
    for seg in path:
        if isinstance(seg, int):
            out += f"[{seg}]"
        elif isinstance(seg, ListKey):
            out += str(seg)
        elif _PLAIN_KEY.fullmatch(seg):
            out += f".{seg}" if out else seg
        else:
            out += '["' + seg.replace("\\", "\\\\").replace('"', '\\"') + '"]'
    return out


def _digest(value: Any) -> dict[str, str]:
    raw = value if isinstance(value, str) else repr(value)
    return {"redacted": "sha256:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()}


def _is_redacted(value: dict[str, Any]) -> bool:
    """A digest stands for one value: compared and shown whole, never walked into."""
    return value.keys() == {"redacted"}


def redact(obj: KubeObject) -> KubeObject:
    """A Secret with each data/stringData value replaced by its sha256 digest; others unchanged."""
    if obj.get("kind") != "Secret" or str(obj.get("apiVersion", "")) != "v1":
        return obj
    out = dict(obj)
    for field in ("data", "stringData"):
        values = obj.get(field)
        if isinstance(values, dict):
            out[field] = {k: _digest(v) for k, v in values.items()}
        elif values is not None:
            out[field] = _digest(values)
    return out


def index_objects(objs: Iterable[KubeObject]) -> dict[ObjectKey, KubeObject]:
    """Objects by key, Secrets redacted."""
    return {key_of(o): redact(o) for o in objs if isinstance(o, dict)}


def _list_key(before: list[Any], after: list[Any]) -> str | None:
    """The identifying field shared by every entry of both lists, unique within each."""
    entries = before + after
    if not entries or not all(isinstance(e, dict) for e in entries):
        return None
    for field in LIST_KEYS:
        values = [e.get(field) for e in entries]
        if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
            continue
        if all(len({str(e[field]) for e in lst}) == len(lst) for lst in (before, after)):
            return field
    return None


def same(a: Any, b: Any) -> bool:
    """Deep equality that tells true from 1 and 1 from 1.0, as YAML does."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


_Path = tuple[Segment, ...]
_Pointer = tuple[str | int, ...]
_ABSENT: Any = object()
"""The side of a key or index that one list or mapping does not have."""


class _Walker:
    def __init__(self) -> None:
        self.out: list[FieldChange] = []

    def emit(
        self, path: _Path, ptr: _Pointer, change: Change, before: Any = None, after: Any = None
    ) -> None:
        self.out.append(FieldChange(path, json_pointer(ptr), change, before, after))

    def walk(self, before: Any, after: Any, path: _Path, ptr: _Pointer) -> None:
        if same(before, after):
            return
        if (
            isinstance(before, dict)
            and isinstance(after, dict)
            and not (_is_redacted(before) or _is_redacted(after))
        ):
            for k in sorted(set(before) | set(after)):
                self.step(before.get(k, _ABSENT), after.get(k, _ABSENT), (*path, k), (*ptr, k))
        elif isinstance(before, list) and isinstance(after, list):
            self.walk_list(before, after, path, ptr)
        else:
            self.emit(path, ptr, "changed", before, after)

    def step(self, before: Any, after: Any, path: _Path, ptr: _Pointer) -> None:
        """One key or index of both sides: removed, added, or compared further."""
        if after is _ABSENT:
            self.emit(path, ptr, "removed", before=before)
        elif before is _ABSENT:
            self.emit(path, ptr, "added", after=after)
        else:
            self.walk(before, after, path, ptr)

    def walk_list(self, before: list[Any], after: list[Any], path: _Path, ptr: _Pointer) -> None:
        field = _list_key(before, after)
        if field is None:
            if all(isinstance(e, dict) for e in before + after):
                for i in range(max(len(before), len(after))):
                    was = before[i] if i < len(before) else _ABSENT
                    now = after[i] if i < len(after) else _ABSENT
                    self.step(was, now, (*path, i), (*ptr, i))
            elif sorted(map(repr, before)) == sorted(map(repr, after)):
                self.emit(path, ptr, "reordered", before, after)
            else:
                self.emit(path, ptr, "changed", before, after)
            return
        old = {str(e[field]): (i, e) for i, e in enumerate(before)}
        new = {str(e[field]): (i, e) for i, e in enumerate(after)}
        for value, (i, entry) in new.items():
            seg = ListKey(field, value)
            if value not in old:
                self.emit((*path, seg), (*ptr, i), "added", after=entry)
            else:
                self.walk(old[value][1], entry, (*path, seg), (*ptr, i))
        for value, (i, entry) in old.items():
            if value not in new:
                self.emit((*path, ListKey(field, value)), (*ptr, i), "removed", before=entry)
        common_old = [v for v in old if v in new]
        common_new = [v for v in new if v in old]
        if common_old != common_new:
            self.emit(path, ptr, "reordered", common_old, common_new)


def diff_objects(
    base: Mapping[ObjectKey, KubeObject], head: Mapping[ObjectKey, KubeObject]
) -> list[ObjectChange]:
    """Every added, removed and changed object, in key order; field changes in path order."""
    out: list[ObjectChange] = []
    for key in sorted(set(base) | set(head)):
        if key not in head:
            out.append(ObjectChange(key, "removed", before=base[key]))
        elif key not in base:
            out.append(ObjectChange(key, "added", after=head[key]))
        elif not same(base[key], head[key]):
            walker = _Walker()
            walker.walk(base[key], head[key], (), ())
            out.append(ObjectChange(key, "changed", base[key], head[key], tuple(walker.out)))
    return out
