"""The differ: two normalized objects -> the changes between them, with JSON pointers.

Why this exists: a pair that differs must say where and how, so that each finding points at one
field that can be attributed to its manager and classified. Equal canonical JSON settles the
common case (no drift) first; otherwise both trees are walked side by side into changes:

- `removed`: declared in git, absent live (an empty list git declares is not, normalize.py);
- `modified`: different values, or an atomic list (known_types.LIST_RULES) that differs in any
  item: reported once, on the list, with item-level details;
- `added`: present live only (server-populated fields and injected labels/annotations excepted:
  they count only when git declares them);
- `reordered`: only the order of a list whose order carries no meaning changed; this is noise
  and is reported as a note, never as a finding.

Items of keyed lists (containers by name, pciHostDevices by pciVendorSelector...) are matched by
key, not by index, so a reorder never reads as drift. Types are kept: `8080` is not `"8080"`,
`true` is not `1`; `1` and `1.0` are the same number.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from kubedata.objects import KubeObject, json_pointer

from audit.compare.known_types import (
    INJECTED_ANNOTATIONS,
    INJECTED_LABELS,
    is_injected,
    list_rule,
    server_populated,
)
from audit.compare.patterns import Pattern, matches
from audit.findings.finding import Item, Segment, SetValue

__all__ = ["Change", "ChangeKind", "canonical", "compare_normalized"]

ChangeKind = Literal["modified", "added", "removed", "reordered"]


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    segments: tuple[Segment, ...]
    pointer: str
    field_path: tuple[str, ...]
    """Field names with `*` for list items: what the rule tables match against."""
    desired: Any = None
    live: Any = None
    details: tuple[str, ...] = field(default=())


def canonical(value: Any) -> str:
    """Canonical JSON: equal values, equal strings (map key order never matters)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _same_scalar(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def _item_label(item: Any, keys: tuple[str, ...] | None) -> str:
    if keys and isinstance(item, dict):
        head = "/".join(str(item.get(k, "")) for k in keys)
        rest = item.get("resourceName")
        return f"{head} -> {rest}" if rest and "resourceName" not in keys else head
    return canonical(item) if not isinstance(item, str) else item


class _Differ:
    def __init__(self, group: str, kind: str, scope: Sequence[Pattern] | None) -> None:
        self.live_only_ignored = server_populated(group, kind)
        self.scope = scope
        self.out: list[Change] = []

    # -- filters ----------------------------------------------------------------------------

    def in_scope(self, fpath: tuple[str, ...]) -> bool:
        if self.scope is None:
            return True
        # a path is in scope when it lies under a scope pattern, or leads to one
        return any(
            matches(p[: len(fpath)], fpath) or matches(p, fpath[: len(p)]) for p in self.scope
        )

    def ignored_addition(self, fpath: tuple[str, ...]) -> bool:
        if len(fpath) == 3 and fpath[0] == "metadata":
            if fpath[1] == "labels" and is_injected(fpath[2], INJECTED_LABELS):
                return True
            if fpath[1] == "annotations" and is_injected(fpath[2], INJECTED_ANNOTATIONS):
                return True
        return any(matches(p, fpath) for p in self.live_only_ignored)

    def ignores_below(self, fpath: tuple[str, ...]) -> bool:
        """Whether some ignored live-only path lies strictly below `fpath`."""
        if fpath in (("metadata",), ("metadata", "labels"), ("metadata", "annotations")):
            return True
        n = len(fpath)
        return any(len(p) > n and matches(p[:n], fpath) for p in self.live_only_ignored)

    def emit(self, change: Change) -> None:
        if not self.in_scope(change.field_path):
            return
        if change.kind == "added" and self.ignored_addition(change.field_path):
            return
        self.out.append(change)

    # -- walk -------------------------------------------------------------------------------

    def walk(
        self,
        d: Any,
        l: Any,  # noqa: E741 - d(esired) and l(ive) read best side by side
        segs: tuple[Segment, ...],
        ptr: tuple[str | int, ...],
        fpath: tuple[str, ...],
    ) -> None:
        if not self.in_scope(fpath):
            return
        if (
            isinstance(d, dict | list)
            and type(d) is type(l)
            and d == l
            and canonical(d) == canonical(l)
        ):
            return  # the same value (== in C first; canonical JSON keeps true apart from 1)
        if isinstance(d, dict) and isinstance(l, dict):
            for key, dv in d.items():
                sub = (*fpath, key)
                if key in l:
                    self.walk(dv, l[key], (*segs, key), (*ptr, key), sub)
                elif dv == []:
                    continue  # declared empty, live empty or absent: the same (normalize.py)
                else:
                    self.emit(
                        Change("removed", (*segs, key), json_pointer((*ptr, key)), sub, dv, None)
                    )
            for key, lv in l.items():
                if key not in d:
                    sub = (*fpath, key)
                    if isinstance(lv, dict) and self.ignores_below(sub):
                        self.walk({}, lv, (*segs, key), (*ptr, key), sub)
                    else:
                        seg, at = (*segs, key), json_pointer((*ptr, key))
                        self.emit(Change("added", seg, at, sub, None, lv))
        elif isinstance(d, list) and isinstance(l, list):
            self.walk_list(d, l, segs, ptr, fpath)
        elif isinstance(d, dict | list) or isinstance(l, dict | list) or not _same_scalar(d, l):
            self.emit(Change("modified", segs, json_pointer(ptr), fpath, d, l))

    def walk_list(
        self,
        d: list[Any],
        l: list[Any],  # noqa: E741
        segs: tuple[Segment, ...],
        ptr: tuple[str | int, ...],
        fpath: tuple[str, ...],
    ) -> None:
        name = next((s for s in reversed(fpath) if s != "*"), "")
        rule = list_rule(name, d, l)
        here = json_pointer(ptr)
        cd, cl = [canonical(x) for x in d], [canonical(x) for x in l]
        if cd == cl:
            return
        same_items = Counter(cd) == Counter(cl)
        if rule.atomic or (rule.keys is None and rule.ordered):
            if same_items and not rule.ordered:
                self.emit(Change("reordered", segs, here, fpath, d, l))
                return
            details = _list_details(d, l, cd, cl, rule.keys, same_items)
            self.emit(Change("modified", segs, here, fpath, d, l, details))
            return
        items = (*fpath, "*")
        if rule.keys is None:  # a set: items are their own identity
            for value, text in zip(d, cd, strict=True):
                if text not in cl:
                    at = (*ptr, cd.index(text))
                    self.emit(
                        Change("removed", (*segs, SetValue(value)), json_pointer(at), items, value)
                    )
            for index, (value, text) in enumerate(zip(l, cl, strict=True)):
                if text not in cd:
                    seg = (*segs, SetValue(value))
                    self.emit(Change("added", seg, json_pointer((*ptr, index)), items, None, value))
            if same_items:
                self.emit(Change("reordered", segs, here, fpath, d, l))
            return
        defaults = dict(rule.key_defaults)

        def key_of(item: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
            return tuple((k, item.get(k, defaults.get(k))) for k in rule.keys or ())

        dk, lk = [key_of(x) for x in d], [key_of(x) for x in l]
        if len(set(dk)) != len(dk) or len(set(lk)) != len(lk):
            # duplicate keys: the server would refuse a real map list; compare it whole
            details = _list_details(d, l, cd, cl, rule.keys, same_items)
            self.emit(Change("modified", segs, here, fpath, d, l, details))
            return
        live_index = {k: i for i, k in enumerate(lk)}
        for i, k in enumerate(dk):
            seg = (*segs, Item(k))
            if k in live_index:
                j = live_index[k]
                self.walk(d[i], l[j], seg, (*ptr, j), items)
            else:
                self.emit(Change("removed", seg, json_pointer((*ptr, i)), items, d[i]))
        desired_keys = set(dk)
        for j, k in enumerate(lk):
            if k not in desired_keys:
                self.emit(
                    Change("added", (*segs, Item(k)), json_pointer((*ptr, j)), items, None, l[j])
                )
        common_d = [k for k in dk if k in live_index]
        common_l = [k for k in lk if k in desired_keys]
        if common_d != common_l:
            self.emit(Change("reordered", segs, here, fpath, d, l))


def _list_details(
    d: list[Any],
    l: list[Any],  # noqa: E741
    cd: list[str],
    cl: list[str],
    keys: tuple[str, ...] | None,
    same_items: bool,
) -> tuple[str, ...]:
    """What changed inside an atomic list, item by item (by key where the list has one)."""
    if same_items:
        return ("same items, different order",)
    out: list[str] = []
    if keys and all(isinstance(x, dict) for x in (*d, *l)):
        dmap, lmap = _by_key(d, keys), _by_key(l, keys)
        for side, groups in (("git", dmap), ("live", lmap)):
            out += [
                f"duplicate {_item_label(items[0], keys).partition(' -> ')[0]}: {side} lists it "
                f"{len(items)} times ({'; '.join(_item_label(i, keys) for i in items)})"
                for items in groups.values()
                if len(items) > 1
            ]
        for k, items in lmap.items():
            if k not in dmap:
                out += [f"added {_item_label(item, keys)}" for item in items]
            elif len(items) == len(dmap[k]) == 1 and canonical(items[0]) != canonical(dmap[k][0]):
                out.append(
                    f"changed {_item_label(dmap[k][0], keys)} to {_item_label(items[0], keys)}"
                )
        out += [
            f"removed {_item_label(item, keys)}"
            for k, items in dmap.items()
            if k not in lmap
            for item in items
        ]
        return tuple(out)
    missing = Counter(cd) - Counter(cl)
    extra = Counter(cl) - Counter(cd)
    out += [f"added {_item_label(json.loads(t), None)}" for t in extra.elements()]
    out += [f"removed {_item_label(json.loads(t), None)}" for t in missing.elements()]
    return tuple(out) or ("different order",)


def _by_key(items: list[Any], keys: tuple[str, ...]) -> dict[tuple[Any, ...], list[Any]]:
    """Items grouped by their key fields, every item kept (a key may repeat)."""
    out: dict[tuple[Any, ...], list[Any]] = {}
    for item in items:
        out.setdefault(tuple(item.get(k) for k in keys), []).append(item)
    return out


def compare_normalized(
    desired: KubeObject, live: KubeObject, scope: Sequence[Pattern] | None = None
) -> list[Change]:
    """Changes between two normalized objects; `scope` limits them to these field paths."""
    # Python's == first (C speed, stops at the first difference): values that differ for it
    # differ canonically too; only those equal for it (True == 1) need the canonical check.
    if desired == live and canonical(desired) == canonical(live):
        return []
    group = str(live.get("apiVersion") or desired.get("apiVersion", "")).rpartition("/")[0]
    kind = str(live.get("kind") or desired.get("kind", ""))
    differ = _Differ(group, kind, scope)
    # apiVersion is not identity (the same object is served at several versions) and kind is.
    d = {k: v for k, v in desired.items() if k != "apiVersion"}
    lv = {k: v for k, v in live.items() if k != "apiVersion"}
    differ.walk(d, lv, (), (), ())
    return differ.out
