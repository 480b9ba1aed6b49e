"""Kubernetes objects as plain dicts, the key that identifies one, JSON pointers into one, and the
canonical JSON that tells equal values apart from unequal ones."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, NamedTuple

__all__ = [
    "KubeObject",
    "ObjectKey",
    "canonical",
    "copy_data",
    "json_pointer",
    "key_of",
    "pointer_token",
    "pointer_tokens",
    "same_value",
]

KubeObject = dict[str, Any]


class ObjectKey(NamedTuple):
    """Identity of an object: API group (no version), kind, namespace ("" if cluster-scoped), name.

    Sorting keys gives the stable order every output uses.
    """

    group: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{kind} {where}{self.name}"


def key_of(obj: KubeObject) -> ObjectKey:
    """The key of an object that carries apiVersion and kind."""
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.rpartition("/")[0]
    meta = obj.get("metadata") or {}
    return ObjectKey(
        group, str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", ""))
    )


def json_pointer(parts: Iterable[str | int]) -> str:
    """RFC 6901 pointer."""
    return "".join(["/" + pointer_token(p) for p in parts])


def pointer_token(part: str | int) -> str:
    """One reference token of a JSON pointer: `~` and `/` escaped (RFC 6901)."""
    return str(part).replace("~", "~0").replace("/", "~1")


def pointer_tokens(pointer: str) -> tuple[str, ...]:
    """RFC 6901 pointer -> its reference tokens (the inverse of json_pointer)."""
    if not pointer:
        return ()
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:])


def copy_data(value: Any) -> Any:
    """A deep copy of plain data (dicts, lists, scalars), several times faster than
    copy.deepcopy, which also keeps shared and cyclic references that plain data does not have."""
    if isinstance(value, dict):
        return {k: copy_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_data(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """Canonical JSON: equal values, equal strings (map key order never matters, `true` is not
    `1`)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def same_value(b: Any, a: Any) -> bool:
    """Whether two plain-JSON values are the same: equal, and of one type at every place (`true`
    is not `1`, and here `1.0` is not `1` either), as their canonical JSON would say.

    == first, in C, stopping at the first difference; then only the types, which == does not
    ask (True == 1 == 1.0), strings (most leaves) passed over. Several times cheaper than
    canonical JSON, which matters on the many small equal maps a diff meets. Map keys are
    compared by == alone: an object's keys are strings."""
    return b == a and _same_types(b, a)


def _same_types(b: Any, a: Any) -> bool:
    if type(b) is not type(a):
        return False
    if not isinstance(b, dict | list):
        return True
    for k, x in b.items() if isinstance(b, dict) else enumerate(b):
        if type(x) is not str and not _same_types(x, a[k]):
            return False
    return True
