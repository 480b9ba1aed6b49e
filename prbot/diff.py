"""The PR bot's comparison of two built object sets: added, removed and changed objects, each
change a field path, on the one diff engine (kubedata.diff).

dyff's model: only changed paths are reported, each with its value before and after. The lists are
compared for a reader, not as server-side apply would: lists of mappings are matched by an
identifying field (LIST_KEYS), so a reorder or an insertion is not reported as every later entry
changing, or else by index; lists of scalars are compared whole (they are atomic in the manifests
this tool emits). Map keys are walked sorted. Secret values are replaced by their redaction digest
(kubedata.redact) before anything is compared or shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from kubedata.diff import POSITIONAL, Change, Differ, ListRule, Segment, show_path
from kubedata.objects import KubeObject, ObjectKey, key_of
from kubedata.redact import digest

__all__ = [
    "LIST_KEYS",
    "FieldChange",
    "ObjectChange",
    "diff_objects",
    "index_objects",
    "redact",
]

LIST_KEYS = ("name", "pciVendorSelector", "mdevNameSelector", "resourceName")
"""Fields that identify an entry of a list of mappings, tried in this order."""

_SCALARS = ListRule(keys=None, atomic=True, ordered=False)
"""Whole, and a change of order alone is shown as such."""


class FieldChange(NamedTuple):
    """One changed path of an object. `pointer` is the JSON pointer at head (base if removed);
    a reorder's `before` and `after` are the entries' identifying values in both orders."""

    path: tuple[Segment, ...]
    pointer: str
    change: Literal["added", "removed", "changed", "reordered"]
    before: Any = None
    after: Any = None

    @property
    def display(self) -> str:
        return show_path(self.path)


@dataclass(frozen=True)
class ObjectChange:
    """An object added (`after` set), removed (`before` set) or changed (`fields` set)."""

    key: ObjectKey
    change: Literal["added", "removed", "changed"]
    before: KubeObject | None = None
    after: KubeObject | None = None
    fields: tuple[FieldChange, ...] = ()


def redact(obj: KubeObject) -> KubeObject:
    """A Secret with each data/stringData value replaced by its digest; others unchanged."""
    if obj.get("kind") != "Secret" or str(obj.get("apiVersion", "")) != "v1":
        return obj
    out = dict(obj)
    for field in ("data", "stringData"):
        values = obj.get(field)
        if isinstance(values, dict):
            out[field] = {k: digest(v) for k, v in values.items()}
        elif values is not None:
            out[field] = digest(values)
    return out


def index_objects(objs: Iterable[KubeObject]) -> dict[ObjectKey, KubeObject]:
    """Objects by key, Secrets redacted."""
    return {key_of(o): redact(o) for o in objs if isinstance(o, dict)}


def _list_key(before: list[Any], after: list[Any]) -> str | None:
    """The identifying field shared by every entry of both lists, unique within each."""
    entries = before + after
    for field in LIST_KEYS:
        values = [e.get(field) for e in entries]
        if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
            continue
        if all(len({str(e[field]) for e in lst}) == len(lst) for lst in (before, after)):
            return field
    return None


class _ForReaders(Differ):
    sort_keys = True

    def list_rule(self, name: str, before: list[Any], after: list[Any]) -> ListRule:
        if not all(isinstance(e, dict) for e in (*before, *after)):
            return _SCALARS
        field = _list_key(before, after)
        return POSITIONAL if field is None else ListRule(keys=(field,), atomic=False)


def _field_change(c: Change) -> FieldChange:
    before, after = c.before, c.after
    if c.kind == "reordered" and before and isinstance(before[0], tuple):
        # a keyed list: the engine gives the entries' keys, ((field, value),) here
        before, after = [str(k[0][1]) for k in before], [str(k[0][1]) for k in after]
    change = "changed" if c.kind == "modified" else c.kind
    return FieldChange(c.segments, c.pointer, change, before, after)


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
        elif fields := _ForReaders().compare(base[key], head[key]):
            changes = tuple(map(_field_change, fields))
            out.append(ObjectChange(key, "changed", base[key], head[key], changes))
    return out
