"""The one structural diff: two Kubernetes objects -> the changes between them, each at a path and
a JSON pointer.

Both comparisons of the project walk through here: the audit (desired in git vs live, behind its
normalize step and fast path) and the PR bot (rendered at the base ref vs at the head ref). The walk
is one; the policy is the caller's, given by a subclass of `Differ`: how each list is compared
(`list_rule`), which paths count (`in_scope`, `ignored_addition`, `ignores_below`) and whether map
keys are walked sorted (a reader's order) or as declared (cheaper).

Changes, `before` being the desired (base) side and `after` the live (head) side:
- `removed`: on the before side only;
- `added`: on the after side only;
- `modified`: different values, or an atomic list that differs in any item: reported once, on the
  list, with item-level `details`;
- `reordered`: only the order of a list changed; `before`/`after` are its items in both orders,
  or, where the list is keyed, the keys of the items both sides have (`Item.keys` tuples).

Lists follow their `ListRule`: keyed lists are matched by key (an `Item` segment), so a reorder or
an insertion never reads as every later item changing; sets by value (`SetValue`); positional lists
by index; atomic lists whole. Types are kept: `8080` is not `"8080"`, `true` is not `1`; `1` and
`1.0` are the same number. A redaction digest stands for one value and is never walked into.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal, NamedTuple

from kubedata.objects import canonical, pointer_token, same_value
from kubedata.redact import is_digest

__all__ = [
    "ATOMIC",
    "POSITIONAL",
    "Change",
    "ChangeKind",
    "Differ",
    "Item",
    "ListRule",
    "Segment",
    "SetValue",
    "show_path",
]

ChangeKind = Literal["modified", "added", "removed", "reordered"]


@dataclass(frozen=True)
class Item:
    """An item of a keyed list (listType=map), named by its key fields: `k:{...}` in FieldsV1."""

    keys: tuple[tuple[str, Any], ...]

    def __str__(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.keys)


@dataclass(frozen=True)
class SetValue:
    """An item of a set list (listType=set), named by its value: `v:...` in FieldsV1."""

    value: Any

    def __str__(self) -> str:
        return json.dumps(self.value)


Segment = str | int | Item | SetValue


@dataclass(frozen=True)
class ListRule:
    """How a list is compared.

    keys: item identity fields (listType=map); None for scalar or unkeyed lists.
    atomic: the list is one value: a difference is reported on the list, never on an item
      (server-side apply's x-kubernetes-list-type: atomic, and every unmarked CRD list).
    ordered: whether order carries meaning; of an unkeyed, non-atomic list, an ordered one is
      compared by index (POSITIONAL) and an unordered one as a set of values.
    """

    keys: tuple[str, ...] | None = None
    atomic: bool = True
    ordered: bool = True
    key_defaults: tuple[tuple[str, Any], ...] = ()


ATOMIC = ListRule()
POSITIONAL = ListRule(keys=None, atomic=False, ordered=True)


class Change(NamedTuple):
    """One change at one path (a named tuple: thousands are made per audit, cheaply)."""

    kind: ChangeKind
    segments: tuple[Segment, ...]
    pointer: str
    """JSON pointer into the after side (into the before side when only it has the path)."""
    field_path: tuple[str, ...]
    """Field names with `*` for list items: what path patterns match against."""
    before: Any = None
    after: Any = None
    details: tuple[str, ...] = ()


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


def show_path(segments: Iterable[Segment]) -> str:
    """A readable path, dyff style: `spec.containers[name=app].image`, odd keys quoted
    (`metadata.annotations["helm.sh/resource-policy"]`)."""
    out = ""
    for seg in segments:
        if not isinstance(seg, str):
            out += f"[{seg}]"
        elif _PLAIN_KEY.fullmatch(seg):
            out += f".{seg}" if out else seg
        else:
            out += '["' + seg.replace("\\", "\\\\").replace('"', '\\"') + '"]'
    return out


def _same_scalar(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


_Map = dict[str, Any]
_Segments = tuple[Segment, ...]
_FieldPath = tuple[str, ...]


class Differ:
    """One walk over two trees; a subclass sets the policy. Use once: `Differ().compare(b, a)`."""

    sort_keys = False
    """Walk map keys sorted (stable for readers) instead of before's order, then after's."""
    sides = ("before", "after")
    """What list details call the two sides."""

    def __init__(self) -> None:
        self.out: list[Change] = []

    # -- policy -------------------------------------------------------------------------------

    def list_rule(self, name: str, before: list[Any], after: list[Any]) -> ListRule:
        """The rule for a list under the field `name`; every list is atomic unless told."""
        return ATOMIC

    def in_scope(self, fpath: _FieldPath) -> bool:
        """Whether changes at or below this path count at all."""
        return True

    def ignored_addition(self, fpath: _FieldPath) -> bool:
        """Whether a path present only on the after side is no change (server-populated)."""
        return False

    def ignored_removal(self, fpath: _FieldPath, value: Any) -> bool:
        """Whether a path present only on the before side, with this value, is no change."""
        return False

    def ignores_below(self, fpath: _FieldPath) -> bool:
        """Whether an after-only map must be walked into, some path below it being ignored."""
        return False

    # -- walk ---------------------------------------------------------------------------------

    def compare(self, before: Any, after: Any) -> list[Change]:
        """Every change from `before` to `after`, in walk order."""
        self.walk(before, after, (), "", ())
        return self.out

    def emit(self, change: Change) -> None:
        if not self.in_scope(change.field_path):
            return
        if change.kind == "added" and self.ignored_addition(change.field_path):
            return
        self.out.append(change)

    def walk(self, b: Any, a: Any, segs: _Segments, ptr: str, fpath: _FieldPath) -> None:
        """`ptr` is the JSON pointer of the path so far, built as the walk descends: one token
        per step, never one per change and segment."""
        if not self.in_scope(fpath):
            return
        if isinstance(b, dict | list) and same_value(b, a):
            return
        if (
            isinstance(b, dict)
            and isinstance(a, dict)
            # `in` first: is_digest is called only for the rare map with a "redacted" key
            and not (("redacted" in b and is_digest(b)) or ("redacted" in a and is_digest(a)))
        ):
            self.walk_map(b, a, segs, ptr, fpath)
        elif isinstance(b, list) and isinstance(a, list):
            self.walk_list(b, a, segs, ptr, fpath)
        elif isinstance(b, dict | list) or isinstance(a, dict | list) or not _same_scalar(b, a):
            self.emit(Change("modified", segs, ptr, fpath, b, a))

    def walk_map(
        self,
        b: dict[str, Any],
        a: dict[str, Any],
        segs: _Segments,
        ptr: str,
        fpath: _FieldPath,
    ) -> None:
        """Before's keys in their order, then after's own; or all sorted, for readers."""
        if self.sort_keys:
            keys: Iterable[str] = sorted(b.keys() | a.keys())
        else:
            keys = chain(b, [k for k in a if k not in b])
        for key in keys:
            sub, at = (*fpath, key), f"{ptr}/{pointer_token(key)}"
            if key in b:
                if key in a:
                    self.walk(b[key], a[key], (*segs, key), at, sub)
                elif not self.ignored_removal(sub, b[key]):
                    self.emit(Change("removed", (*segs, key), at, sub, b[key]))
            elif isinstance(a[key], dict) and self.ignores_below(sub):
                self.walk({}, a[key], (*segs, key), at, sub)
            else:
                self.emit(Change("added", (*segs, key), at, sub, None, a[key]))

    def walk_list(
        self,
        b: list[Any],
        a: list[Any],
        segs: _Segments,
        ptr: str,
        fpath: _FieldPath,
    ) -> None:
        name = next((s for s in reversed(fpath) if s != "*"), "")
        rule = self.list_rule(name, b, a)
        whole = _Whole(self, b, a, segs, ptr, fpath)
        # keyed and positional lists: their items say whether they differ
        if rule.keys is not None and not rule.atomic:
            self.walk_keyed(whole, rule)
        elif not rule.atomic and rule.ordered:
            for i in range(max(len(b), len(a))):
                was = b[i] if i < len(b) else _ABSENT
                self.walk_item(whole, i, was, a[i] if i < len(a) else _ABSENT)
        elif whole.cb == whole.ca:
            return
        elif rule.atomic:
            if whole.same_items() and not rule.ordered:
                whole.emit("reordered")
            else:
                whole.emit("modified", whole.details(rule.keys))
        else:
            self.walk_set(whole)

    def walk_item(self, whole: _Whole, i: int, b: Any, a: Any) -> None:
        """Item `i` of a positional list."""
        segs, ptr, items = (*whole.segs, i), f"{whole.ptr}/{i}", (*whole.fpath, "*")
        if a is _ABSENT:
            self.emit(Change("removed", segs, ptr, items, b))
        elif b is _ABSENT:
            self.emit(Change("added", segs, ptr, items, None, a))
        else:
            self.walk(b, a, segs, ptr, items)

    def walk_set(self, whole: _Whole) -> None:
        """A set: items are their own identity."""
        items, cb, ca = (*whole.fpath, "*"), whole.cb, whole.ca
        in_b, in_a = set(cb), set(ca)
        for j, (value, text) in enumerate(zip(whole.a, ca, strict=True)):
            if text not in in_b:
                at = f"{whole.ptr}/{j}"
                self.emit(Change("added", (*whole.segs, SetValue(value)), at, items, None, value))
        for value, text in zip(whole.b, cb, strict=True):
            if text not in in_a:
                at = f"{whole.ptr}/{cb.index(text)}"
                self.emit(Change("removed", (*whole.segs, SetValue(value)), at, items, value))
        if whole.same_items():
            whole.emit("reordered")

    def walk_keyed(self, whole: _Whole, rule: ListRule) -> None:
        """A keyed list: items matched by key, after's order first, then what only before has."""
        defaults = dict(rule.key_defaults)
        names = rule.keys or ()

        def key_of(item: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
            return tuple((k, item.get(k, defaults.get(k))) for k in names)

        b, a = whole.b, whole.a
        kb, ka = [key_of(x) for x in b], [key_of(x) for x in a]
        if len(set(kb)) != len(kb) or len(set(ka)) != len(ka):
            # duplicate keys: the server would refuse a real map list; compare it whole
            whole.emit("modified", whole.details(rule.keys))
            return
        items = (*whole.fpath, "*")
        before_at = {k: i for i, k in enumerate(kb)}
        for j, k in enumerate(ka):
            seg, at = (*whole.segs, Item(k)), f"{whole.ptr}/{j}"
            if k in before_at:
                self.walk(b[before_at[k]], a[j], seg, at, items)
            else:
                self.emit(Change("added", seg, at, items, None, a[j]))
        after_keys = set(ka)
        for i, k in enumerate(kb):
            if k not in after_keys:
                gone = f"{whole.ptr}/{i}"
                self.emit(Change("removed", (*whole.segs, Item(k)), gone, items, b[i]))
        common_b = [k for k in kb if k in after_keys]
        common_a = [k for k in ka if k in before_at]
        if common_b != common_a:
            self.emit(Change("reordered", whole.segs, whole.ptr, whole.fpath, common_b, common_a))


_ABSENT: Any = object()
"""The side of an index that one list does not have."""


@dataclass(slots=True)
class _Whole:
    """A list being walked, both sides: where it is and how to report it as one value."""

    differ: Differ
    b: list[Any]
    a: list[Any]
    segs: _Segments
    ptr: str
    fpath: _FieldPath
    _canonical: tuple[list[str], list[str]] | None = None
    _same: bool | None = None

    @property
    def cb(self) -> list[str]:
        """Before's items as canonical JSON (made when first asked: keyed lists never ask)."""
        return self._items()[0]

    @property
    def ca(self) -> list[str]:
        """After's items as canonical JSON."""
        return self._items()[1]

    def _items(self) -> tuple[list[str], list[str]]:
        if self._canonical is None:
            self._canonical = [canonical(x) for x in self.b], [canonical(x) for x in self.a]
        return self._canonical

    def same_items(self) -> bool:
        """Whether only the order differs (asked only where it matters: not of keyed lists)."""
        if self._same is None:
            self._same = Counter(self.cb) == Counter(self.ca)
        return self._same

    def emit(self, kind: ChangeKind, details: tuple[str, ...] = ()) -> None:
        self.differ.emit(Change(kind, self.segs, self.ptr, self.fpath, self.b, self.a, details))

    def details(self, keys: tuple[str, ...] | None) -> tuple[str, ...]:
        """What changed inside the list, item by item (by key where it has one)."""
        if self.same_items():
            return ("same items, different order",)
        if keys and all(isinstance(x, dict) for x in (*self.b, *self.a)):
            return _keyed_details(self.b, self.a, keys, self.differ.sides)
        missing = Counter(self.cb) - Counter(self.ca)
        extra = Counter(self.ca) - Counter(self.cb)
        out = [f"added {_item_label(json.loads(t), None)}" for t in extra.elements()]
        out += [f"removed {_item_label(json.loads(t), None)}" for t in missing.elements()]
        return tuple(out) or ("different order",)


def _keyed_details(
    b: list[Any], a: list[Any], keys: tuple[str, ...], sides: tuple[str, str]
) -> tuple[str, ...]:
    bmap, amap = _by_key(b, keys), _by_key(a, keys)
    out = [
        f"duplicate {_item_label(items[0], keys).partition(' -> ')[0]}: {side} lists it "
        f"{len(items)} times ({'; '.join(_item_label(i, keys) for i in items)})"
        for side, groups in zip(sides, (bmap, amap), strict=True)
        for items in groups.values()
        if len(items) > 1
    ]
    for k, items in amap.items():
        if k not in bmap:
            out += [f"added {_item_label(item, keys)}" for item in items]
        elif len(items) == len(bmap[k]) == 1 and not same_value(items[0], bmap[k][0]):
            out.append(f"changed {_item_label(bmap[k][0], keys)} to {_item_label(items[0], keys)}")
    out += [
        f"removed {_item_label(item, keys)}"
        for k, items in bmap.items()
        if k not in amap
        for item in items
    ]
    return tuple(out)


def _by_key(items: list[Any], keys: tuple[str, ...]) -> dict[tuple[Any, ...], list[Any]]:
    """Items grouped by their key fields, every item kept (a key may repeat)."""
    out: dict[tuple[Any, ...], list[Any]] = {}
    for item in items:
        out.setdefault(tuple(item.get(k) for k in keys), []).append(item)
    return out


def _item_label(item: Any, keys: tuple[str, ...] | None) -> str:
    if keys and isinstance(item, dict):
        head = "/".join(str(item.get(k, "")) for k in keys)
        rest = item.get("resourceName")
        return f"{head} -> {rest}" if rest and "resourceName" not in keys else head
    return canonical(item) if not isinstance(item, str) else item
