"""Kubernetes objects as plain dicts, the key that identifies one, JSON pointers into one, and the
canonical JSON that tells equal values apart from unequal ones."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, NamedTuple

__all__ = ["KubeObject", "ObjectKey", "canonical", "json_pointer", "key_of", "pointer_tokens"]

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
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def pointer_tokens(pointer: str) -> tuple[str, ...]:
    """RFC 6901 pointer -> its reference tokens (the inverse of json_pointer)."""
    if not pointer:
        return ()
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:])


def canonical(value: Any) -> str:
    """Canonical JSON: equal values, equal strings (map key order never matters, `true` is not
    `1`)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
