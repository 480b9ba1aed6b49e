"""Live state behind one interface: the API server (KubeApi) or a snapshot folder.

`Live` remembers every object it read and every read that failed. A failed read (403, a list that
could not be completed, a server that stopped answering) does not stop the audit: it is recorded,
and the audit is then reported incomplete (never clean). A 401 stops it: nothing can be read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from audit.errors import IncompleteReadError, KubeApiError
from audit.kube_api import KubeApi
from renderer.objects import KubeObject, ObjectKey, key_of

__all__ = ["ApiReader", "Live", "Reader", "SnapshotReader"]


class Reader(Protocol):
    def list(
        self, group: str, kind: str, namespace: str | None = None, labels: str | None = None
    ) -> list[KubeObject] | None:
        """Objects of a kind; None when the kind is not served (its CRD is not installed)."""

    def get(self, key: ObjectKey) -> KubeObject | None:
        """One object, None when absent (or its kind is not served)."""


def _label_match(selector: str, obj: KubeObject) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in (t.strip() for t in selector.split(",") if t.strip()):
        key, _, value = term.partition("=")
        if labels.get(key.strip()) != value.strip():
            return False
    return True


class SnapshotReader:
    """A snapshot folder's objects: what was dumped is what exists."""

    def __init__(self, objects: Iterable[KubeObject]) -> None:
        self.by_key: dict[ObjectKey, KubeObject] = {}
        self.by_kind: dict[tuple[str, str], list[KubeObject]] = {}
        for obj in objects:
            key = key_of(obj)
            self.by_key[key] = obj
            self.by_kind.setdefault((key.group, key.kind), []).append(obj)

    def list(
        self, group: str, kind: str, namespace: str | None = None, labels: str | None = None
    ) -> list[KubeObject] | None:
        out = []
        for obj in self.by_kind.get((group, kind), ()):
            if namespace and (obj.get("metadata") or {}).get("namespace") != namespace:
                continue
            if labels and not _label_match(labels, obj):
                continue
            out.append(obj)
        return out

    def get(self, key: ObjectKey) -> KubeObject | None:
        found = self.by_key.get(key)
        if found is None and not key.namespace:
            # a render may leave out the namespace of a namespaced object: match by name
            same = [
                o
                for o in self.by_kind.get((key.group, key.kind), ())
                if (o.get("metadata") or {}).get("name") == key.name
            ]
            found = same[0] if len(same) == 1 else None
        return found


class ApiReader:
    def __init__(self, api: KubeApi) -> None:
        self.api = api

    def list(
        self, group: str, kind: str, namespace: str | None = None, labels: str | None = None
    ) -> list[KubeObject] | None:
        if self.api.resolve(kind, group) is None:
            return None
        return self.api.list(kind, group, namespace=namespace, label_selector=labels)

    def get(self, key: ObjectKey) -> KubeObject | None:
        resource = self.api.resolve(key.kind, key.group)
        if resource is None:
            return None
        if resource.namespaced and not key.namespace:
            return None
        return self.api.get(key if resource.namespaced else key._replace(namespace=""))


class Live:
    """Reads through a Reader, caching, and turning read failures into recorded problems."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.problems: list[str] = []
        self._lists: dict[tuple[str, str, str | None, str | None], list[KubeObject]] = {}
        self._gets: dict[ObjectKey, KubeObject | None] = {}
        self.unread: set[ObjectKey] = set()
        """Objects whose read failed: their absence proves nothing."""

    def _failed(self, exc: Exception) -> None:
        message = str(exc)
        if message not in self.problems:
            self.problems.append(message)

    def list(
        self, group: str, kind: str, namespace: str | None = None, labels: str | None = None
    ) -> list[KubeObject]:
        cache = (group, kind, namespace, labels)
        if cache not in self._lists:
            try:
                found = self.reader.list(group, kind, namespace, labels)
            except KubeApiError as exc:
                if exc.status == 401:
                    raise
                self._failed(exc)
                found = []
            except IncompleteReadError as exc:
                self._failed(exc)
                found = []
            self._lists[cache] = found or []
            for obj in found or ():
                self._gets.setdefault(key_of(obj), obj)
        return self._lists[cache]

    def get(self, key: ObjectKey) -> KubeObject | None:
        if key not in self._gets:
            try:
                self._gets[key] = self.reader.get(key)
            except KubeApiError as exc:
                if exc.status == 401:
                    raise
                self._failed(exc)
                self._gets[key] = None
                self.unread.add(key)
            except IncompleteReadError as exc:
                self._failed(exc)
                self._gets[key] = None
                self.unread.add(key)
        return self._gets[key]

    @property
    def complete(self) -> bool:
        return not self.problems
