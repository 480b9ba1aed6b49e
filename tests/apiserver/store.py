"""The test server's storage: objects, a global resourceVersion, and list snapshots.

Like etcd behind kube-apiserver: every write takes the next resourceVersion; a paginated list reads
a snapshot at the resourceVersion of its first page, so later pages are consistent whatever is
written meanwhile; `compact()` drops old snapshots, and a continue token pointing at one gets 410
Expired with a fresh token (rv -1) that continues after the same key at the latest state, as the
real server's Status carries in metadata.continue. At most `max_snapshots` are kept (older ones
are compacted away).

Server-set metadata on write: uid, resourceVersion, creationTimestamp, generation (custom resources
and Deployments: bumped when anything outside metadata and status changes), managedFields. Objects
loaded as fixtures (`keep_server_fields=True`) keep the uid, creationTimestamp, generation and
managedFields they were recorded with; an object without managedFields gets one plausible Update
entry, whose fieldsV1 treats every list as atomic (the real server would need structured-merge-diff
and the schemas' list keys to do better; this emulator does not claim to).
"""

from __future__ import annotations

import bisect
import copy
import json
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tests.apiserver.defaults import apply_builtin_defaults, default_custom, prune_custom
from tests.apiserver.meta import (
    InvalidContinue,
    decode_token,
    encode_token,
    ordered_meta,
    timestamp,
    update_entry,
)
from tests.apiserver.resources import BUILTINS, Resource, resource_from_crd

__all__ = ["Expired", "InvalidContinue", "Page", "Store", "Stored"]

_GENERATION_BUILTINS = frozenset({"Deployment", "CustomResourceDefinition"})
LATEST = -1
"""resourceVersion of a continue token that reads the latest state (etcd3 store.go
handleCompactedErrorForPaging: rv 0 would be a bad token)."""


class Expired(Exception):
    """The continue token's snapshot was compacted: 410, with `fresh_token`, which continues after
    the same key at the latest resourceVersion (rv -1, as kube-apiserver encodes it)."""

    def __init__(self, rv: int, start: tuple[str, str]) -> None:
        super().__init__(rv)
        self.fresh_token = encode_token(LATEST, start)


@dataclass
class Stored:
    """An object as stored (never mutated after storing) with its encodings cached."""

    resource: Resource
    obj: dict[str, Any]
    _json: dict[tuple[str, bool], bytes] = field(default_factory=dict, repr=False)

    def encode(self, version: str, bare: bool = False) -> bytes:
        """JSON at a served version; `bare` leaves out apiVersion and kind (built-in list items)."""
        cached = self._json.get((version, bare))
        if cached is None:
            body = {k: v for k, v in self.obj.items() if k not in ("apiVersion", "kind")}
            if not bare:
                body = {
                    "apiVersion": self.resource.api_version(version),
                    "kind": self.resource.kind,
                    **body,
                }
            cached = self._json[(version, bare)] = json.dumps(body, separators=(",", ":")).encode()
        return cached


Key = tuple[str, str]  # (namespace, name) within one resource


@dataclass(frozen=True)
class Page:
    items: list[Stored]
    resource_version: int
    continue_token: str
    remaining: int | None


@dataclass
class _Snapshot:
    objects: dict[tuple[str, str, str, str], Stored]
    sorted_keys: dict[tuple[str, str], list[Key]] = field(default_factory=dict)


class Store:
    """Thread-safe object storage. Public methods take and return plain dicts."""

    def __init__(
        self, *, clock: Callable[[], float] = time.time, seed: int = 0, max_snapshots: int = 64
    ) -> None:
        self._lock = threading.RLock()
        self._clock = clock
        self._rng = random.Random(seed)
        self._rv = 1000
        self._resources: dict[tuple[str, str], Resource] = {
            (r.group, r.plural): r for r in BUILTINS
        }
        self._objects: dict[tuple[str, str, str, str], Stored] = {}
        self._snapshots: dict[int, _Snapshot] = {}
        self.max_snapshots = max_snapshots

    # -- types ------------------------------------------------------------------------------

    def resources(self) -> list[Resource]:
        """Built-in types first, then custom ones by group, as the real /apis orders them."""
        with self._lock:
            values = list(self._resources.values())
        return [r for r in values if r.builtin] + sorted(
            (r for r in values if not r.builtin), key=lambda r: (r.group, r.plural)
        )

    def resource(self, group: str, plural: str) -> Resource | None:
        return self._resources.get((group, plural))

    def resource_for_kind(self, group: str, kind: str) -> Resource | None:
        return next((r for r in self.resources() if r.group == group and r.kind == kind), None)

    # -- writes -----------------------------------------------------------------------------

    def _uid(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def put(
        self,
        obj: dict[str, Any],
        *,
        keep_server_fields: bool = True,
        manager: str = "kubectl-create",
    ) -> dict[str, Any]:
        """Create or replace an object; returns it as stored."""
        obj = copy.deepcopy(obj)
        group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
        resource = self.resource_for_kind(group, str(obj.get("kind", "")))
        if resource is None or version not in resource.versions:
            raise ValueError(
                f"{obj.get('apiVersion')} {obj.get('kind')} is not served: store its CRD first"
            )
        meta = obj.setdefault("metadata", {})
        if not meta.get("name"):
            raise ValueError(f"{resource.kind} without metadata.name")
        if not resource.namespaced:
            meta.pop("namespace", None)
        elif not meta.get("namespace"):
            raise ValueError(f"{resource.kind} {meta['name']} is namespaced and has no namespace")
        if not resource.builtin:
            schema = resource.schemas.get(version) or {}
            obj = default_custom(prune_custom(obj, schema), schema)
            obj["apiVersion"] = resource.api_version()
        apply_builtin_defaults(obj)
        key = (resource.group, resource.plural, str(meta.get("namespace") or ""), str(meta["name"]))
        with self._lock:
            if resource.namespaced and ("", "namespaces", "", key[2]) not in self._objects:
                raise ValueError(f"namespace {key[2]} does not exist: store it first")
            old = self._objects.get(key)
            now = self._clock()
            keep = keep_server_fields
            meta = obj["metadata"]
            if old is not None:
                meta["uid"] = old.obj["metadata"]["uid"]
                meta["creationTimestamp"] = old.obj["metadata"]["creationTimestamp"]
            else:
                meta["uid"] = meta.get("uid") if keep and meta.get("uid") else self._uid()
                if not (keep and meta.get("creationTimestamp")):
                    meta["creationTimestamp"] = timestamp(now)
            if not resource.builtin or resource.kind in _GENERATION_BUILTINS:
                if old is None:
                    meta["generation"] = (
                        meta.get("generation") if keep and meta.get("generation") else 1
                    )
                else:
                    changed = _body(old.obj) != _body(obj)
                    meta["generation"] = old.obj["metadata"].get("generation", 1) + int(changed)
            else:
                meta.pop("generation", None)
            if not (keep and meta.get("managedFields")):
                meta["managedFields"] = [update_entry(obj, manager, timestamp(now))]
            self._rv += 1
            meta["resourceVersion"] = str(self._rv)
            obj["metadata"] = ordered_meta(meta)
            self._objects[key] = Stored(resource, obj)
            if resource.kind == "CustomResourceDefinition":
                crd_type = resource_from_crd(obj)
                self._resources[(crd_type.group, crd_type.plural)] = crd_type
            return copy.deepcopy(obj)

    def put_all(self, objects: Iterable[dict[str, Any]], **kwargs: Any) -> None:
        """Store many: CRDs and Namespaces first, so the rest finds its type and namespace."""
        rank = {"CustomResourceDefinition": 0, "Namespace": 1}
        for obj in sorted(objects, key=lambda o: rank.get(str(o.get("kind")), 2)):
            self.put(obj, **kwargs)

    def delete(self, group: str, plural: str, namespace: str, name: str) -> bool:
        with self._lock:
            gone = self._objects.pop((group, plural, namespace, name), None)
            if gone is not None:
                self._rv += 1
            return gone is not None

    def compact(self) -> None:
        """Another write happens, then etcd compacts: every outstanding continue token expires."""
        with self._lock:
            self._rv += 1
            self._snapshots.clear()

    # -- reads ------------------------------------------------------------------------------

    def get(self, resource: Resource, namespace: str, name: str) -> Stored | None:
        with self._lock:
            return self._objects.get((resource.group, resource.plural, namespace, name))

    @property
    def revision(self) -> int:
        """The store's resourceVersion: it changes with every write."""
        return self._rv

    def objects_of(self, group: str, plural: str) -> list[dict[str, Any]]:
        """Every stored object of one resource (copies)."""
        with self._lock:
            return [
                copy.deepcopy(s.obj)
                for (g, p, _, _), s in self._objects.items()
                if (g, p) == (group, plural)
            ]

    def all_objects(self) -> list[dict[str, Any]]:
        with self._lock:
            return [copy.deepcopy(s.obj) for s in self._objects.values()]

    def _snapshot(self, rv: int) -> _Snapshot:
        snap = self._snapshots.get(rv)
        if snap is None:
            snap = self._snapshots[rv] = _Snapshot(dict(self._objects))
            while len(self._snapshots) > self.max_snapshots:
                del self._snapshots[min(self._snapshots)]
        return snap

    def list_page(
        self,
        resource: Resource,
        namespace: str,
        match: Callable[[dict[str, Any]], bool] | None,
        limit: int,
        token: str,
    ) -> Page:
        with self._lock:
            if token:
                rv, start = decode_token(token)
                if rv == LATEST:  # a token from a 410: the rest of the list as it is now
                    rv = self._rv
                    snap = self._snapshot(rv)
                elif rv not in self._snapshots:
                    raise Expired(rv, start)
                else:
                    snap = self._snapshots[rv]
            else:
                rv, start = self._rv, None
                snap = self._snapshot(rv) if limit else _Snapshot(dict(self._objects))
            sort_id = (resource.group, resource.plural)
            keys = snap.sorted_keys.get(sort_id)
            if keys is None:
                keys = snap.sorted_keys[sort_id] = sorted(
                    (ns, name) for g, p, ns, name in snap.objects if (g, p) == sort_id
                )
        lo, hi = 0, len(keys)
        if namespace:  # keys sort by (namespace, name): one namespace is one slice
            lo = bisect.bisect_left(keys, (namespace, ""))
            hi = bisect.bisect_left(keys, (namespace + "\x00", ""))
        index = max(lo, bisect.bisect_right(keys, start)) if start else lo
        items: list[Stored] = []
        while index < hi and (not limit or len(items) < limit):
            stored = snap.objects[(resource.group, resource.plural, *keys[index])]
            index += 1
            if match is None or match(stored.obj):
                items.append(stored)
        if not limit or index >= hi:
            return Page(items, rv, "", None)
        # Like etcd3: with selectors the remaining count is unknown and left out.
        remaining = None if match is not None else hi - index
        return Page(items, rv, encode_token(rv, keys[index - 1]), remaining)


def _body(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}
