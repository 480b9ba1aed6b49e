"""Live state behind one interface: the API server (KubeApi) or a snapshot folder.

`Live` remembers every object it read and every read that failed. A failed read (403, a list that
could not be completed, a server that stopped answering) does not stop the audit: it is recorded,
and the audit is then reported incomplete (never clean). A 401 stops it: nothing can be read.

Many objects of one kind are read with one list rather than a GET each (`Live.prefetch`): an audit
of 20,000 git objects is then ~40 list pages, not 20,000 requests. The list is optional: where it
is refused or fails, the objects are read one by one as before, and only those reads count.
A snapshot may lack a kind altogether; the objects of such a kind are not read, not absent: a
`get` of one, or a check that `requires` the kind, records the kind and the command that captures
it, and the audit is incomplete. A snapshot that holds the cluster's CRDs says which custom kinds
are served: one whose CRD is not among them has no objects, dumped or not.

An audit that compares as it reads lets go of what it compared (`Live.released`): the objects of
a kind read inside it are dropped at its end, what was read before stays; a later read of them
reads them again. Peak memory is then that of the largest kind, not of the whole cluster. A check
that needs only a little of each object of a kind reads it with `Live.each`, keeping none.

Secrets are never listed whole: per namespace, only those labelled as applied by the audited Flux
Kustomization are listed (the Secrets git declares), and any declared one not among them is read
by name, so no Secret git does not declare is read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from kubedata.objects import KubeObject, ObjectKey, key_of

from audit.errors import IncompleteReadError, KubeApiError
from audit.kinds import BUILTIN_GROUPS, CRD, resource_name
from audit.kube.selectors import selector_matches
from audit.kube.snapshot import blank_files, empty_lists, load_snapshot

if TYPE_CHECKING:
    from audit.kube.api import KubeApi

__all__ = [
    "LABEL_LIST_MIN",
    "LISTED_BY_LABEL",
    "PREFETCH_MIN",
    "ApiReader",
    "Each",
    "Live",
    "Reader",
    "SnapshotReader",
]

PREFETCH_MIN = 16
"""A kind wanted this many times or more is listed whole (all namespaces) instead of read by GET."""
LISTED_BY_LABEL = frozenset({("", "Secret")})
"""Kinds never listed whole: only what the audited Kustomization applied, per namespace."""
LABEL_LIST_MIN = 2
"""Objects of such a kind wanted in one namespace for its labelled list to be worth a request."""
Objects = list[KubeObject]
Each = Callable[[KubeObject], None]
"""Takes each object of a list as its page arrives (ApiReader) instead of the list keeping it."""


class Reader(Protocol):
    lists_ahead: bool
    """Whether `prefetch` reads (so hands objects to `each` as they arrive) or has them all."""

    def list(
        self,
        group: str,
        kind: str,
        namespace: str | None = None,
        labels: str | None = None,
        each: Each | None = None,
    ) -> list[KubeObject] | None:
        """Objects of a kind; None when the kind is not served (its CRD is not installed). With
        `each`, they are handed to it instead and none is kept (the list returned is empty)."""

    def get(self, key: ObjectKey) -> KubeObject | None:
        """One object, None when absent (or its kind is not served)."""

    def uncaptured(self, group: str, kind: str) -> tuple[str, str] | None:
        """None when the reader can tell which objects of the kind exist; else (why it cannot,
        what captures the kind): a snapshot may lack it."""

    def crd(self, group: str, kind: str) -> KubeObject | None:
        """The CustomResourceDefinition of a custom kind, None when there is none to read."""

    def prefetch(
        self,
        group: str,
        kind: str,
        namespace: str | None = None,
        labels: str | None = None,
        each: Each | None = None,
    ) -> Objects | None:
        """`list`, ahead of gets: None when that is not worth it or the list failed (then `get`
        reads as before). Raises only on 401. Once a kind is listed whole (no namespace, no
        labels), `get` of that kind needs no request. With `each`, the objects are handed to it
        as they are read and not kept (the list returned is empty)."""

    def forget(self, group: str, kind: str) -> None:
        """Drop what the reader keeps of a kind listed whole: `get` reads it again."""


class SnapshotReader:
    """A snapshot folder's objects: what was dumped is what exists, of the kinds it holds."""

    lists_ahead = False

    def __init__(
        self, objects: Iterable[KubeObject], empty: Iterable[str] = (), blank: Iterable[str] = ()
    ) -> None:
        self.empty = frozenset(empty)
        """Resource names dumped as empty lists (snapshot.empty_lists): none exist."""
        self.blank = frozenset(blank)
        """Resource names whose dump file is empty (snapshot.blank_files): kubectl failed."""
        self.by_key: dict[ObjectKey, KubeObject] = {}
        self.by_kind: dict[tuple[str, str], list[KubeObject]] = {}
        for obj in objects:
            key = key_of(obj)
            self.by_key[key] = obj
            self.by_kind.setdefault((key.group, key.kind), []).append(obj)

    @classmethod
    def of_folder(cls, folder: Path) -> SnapshotReader:
        """The reader of a snapshot folder (SnapshotError names a bad file and line)."""
        return cls(load_snapshot(folder), empty_lists(folder), blank_files(folder))

    def list(
        self,
        group: str,
        kind: str,
        namespace: str | None = None,
        labels: str | None = None,
        each: Each | None = None,
    ) -> list[KubeObject] | None:
        out = []
        for obj in self.by_kind.get((group, kind), ()):
            meta = obj.get("metadata") or {}
            if namespace and meta.get("namespace") != namespace:
                continue
            if labels and not selector_matches(labels, meta.get("labels") or {}):
                continue
            out.append(obj)
        if each is not None:
            for obj in out:
                each(obj)
            return []
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

    def prefetch(
        self,
        group: str,
        kind: str,
        namespace: str | None = None,
        labels: str | None = None,
        each: Each | None = None,
    ) -> Objects | None:
        return None  # everything is in memory already

    def forget(self, group: str, kind: str) -> None:
        pass  # the folder's objects are the snapshot, not a cache

    def uncaptured(self, group: str, kind: str) -> tuple[str, str] | None:
        resource = resource_name(group, kind)
        if (group, kind) in self.by_kind or resource in self.empty:
            return None
        crds = resource_name(CRD.group, CRD.kind)
        has_crds = (CRD.group, CRD.kind) in self.by_kind or crds in self.empty
        served = group in BUILTIN_GROUPS or self.crd(group, kind) is not None
        if has_crds and not served:
            return None  # the cluster does not serve the kind: none exist
        dump = f"kubectl get {resource} -A --show-managed-fields -o yaml > {resource}.yaml"
        if resource not in self.blank:
            return f"the snapshot holds no {kind} ({resource})", f"capture it with `{dump}`"
        if has_crds or group in BUILTIN_GROUPS:
            return (
                f"the snapshot's {resource} file is empty although the cluster serves {kind}",
                f"kubectl failed there; run `{dump}` again and read its error",
            )
        return (
            f"the snapshot's {resource} file is empty, as kubectl leaves it when the cluster "
            f"does not serve {kind} (or the command failed)",
            f"dump the cluster's CRDs (`kubectl get {crds} -o yaml > {crds}.yaml`) so the audit "
            f"can tell whether {kind} is served",
        )

    def crd(self, group: str, kind: str) -> KubeObject | None:
        for obj in self.by_kind.get((CRD.group, CRD.kind), ()):
            spec = obj.get("spec") or {}
            if spec.get("group") == group and (spec.get("names") or {}).get("kind") == kind:
                return obj
        return None


class ApiReader:
    lists_ahead = True

    def __init__(self, api: KubeApi) -> None:
        self.api = api
        self._whole: dict[tuple[str, str], dict[tuple[str, str], KubeObject]] = {}
        """Kinds listed whole: (namespace or "" when cluster-scoped, name) -> object."""

    def list(
        self,
        group: str,
        kind: str,
        namespace: str | None = None,
        labels: str | None = None,
        each: Each | None = None,
    ) -> list[KubeObject] | None:
        resource = self.api.resolve(kind, group)
        if resource is None:
            return None
        found = self.api.list(kind, group, namespace=namespace, label_selector=labels, each=each)
        if not namespace and not labels and each is None:
            self._whole[(group, kind)] = {
                (
                    str((o.get("metadata") or {}).get("namespace") or "")
                    if resource.namespaced
                    else "",
                    str((o.get("metadata") or {}).get("name") or ""),
                ): o
                for o in found
            }
        return found

    def prefetch(
        self,
        group: str,
        kind: str,
        namespace: str | None = None,
        labels: str | None = None,
        each: Each | None = None,
    ) -> Objects | None:
        try:
            return self.list(group, kind, namespace, labels, each)
        except KubeApiError as exc:
            if exc.status == 401:
                raise
            return None
        except IncompleteReadError:
            return None

    def forget(self, group: str, kind: str) -> None:
        self._whole.pop((group, kind), None)

    def get(self, key: ObjectKey) -> KubeObject | None:
        resource = self.api.resolve(key.kind, key.group)
        if resource is None:
            return None
        if resource.namespaced and not key.namespace:
            return None
        whole = self._whole.get((key.group, key.kind))
        if whole is not None:  # listed whole: absent from the list is absent
            return whole.get((key.namespace if resource.namespaced else "", key.name))
        return self.api.get(key if resource.namespaced else key._replace(namespace=""))

    def uncaptured(self, group: str, kind: str) -> tuple[str, str] | None:
        return None  # the API answers for every kind (not served: none exist)

    def crd(self, group: str, kind: str) -> KubeObject | None:
        resource = self.api.resolve(kind, group)
        if resource is None:
            return None
        return self.api.get(CRD._replace(name=f"{resource.plural}.{group}"))


class Live:
    """Reads through a Reader, caching, and turning read failures into recorded problems."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.problems: list[str] = []
        self._lists: dict[tuple[str, str, str | None, str | None], list[KubeObject]] = {}
        self._gets: dict[ObjectKey, KubeObject | None] = {}
        self.unread: set[ObjectKey] = set()
        """Objects whose read failed: their absence proves nothing."""
        self._lacking: set[tuple[str, str]] = set()
        self._crds: dict[tuple[str, str], KubeObject | None] = {}
        self.notes: list[str] = []
        """What limited the audit without making it incomplete (a CRD it could not read)."""

    def _failed(self, exc: Exception) -> None:
        message = str(exc)
        if message not in self.problems:
            self.problems.append(message)

    def list(
        self, group: str, kind: str, namespace: str | None = None, labels: str | None = None
    ) -> list[KubeObject]:
        cache = (group, kind, namespace, labels)
        if cache not in self._lists:
            found = self._read(group, kind, namespace, labels, None)
            self._lists[cache] = found
            for obj in found:
                self._gets.setdefault(key_of(obj), obj)
        return self._lists[cache]

    def each(self, group: str, kind: str, each: Each) -> None:
        """Hand every object of a kind (all namespaces) to `each` as it is read, keeping none:
        for a check that needs a little of each object of a large kind. A kind listed already
        is handed from memory. After a list restarts, `each` is handed objects again (the API's
        list), so it must keep only the latest of each. A failed read is recorded, as `list`'s."""
        cached = self._lists.get((group, kind, None, None))
        if cached is not None:
            for obj in cached:
                each(obj)
            return
        self._read(group, kind, None, None, each)

    def _read(
        self,
        group: str,
        kind: str,
        namespace: str | None,
        labels: str | None,
        each: Each | None,
    ) -> Objects:
        """The reader's list, [] when it failed (recorded) or the kind is not served."""
        try:
            return self.reader.list(group, kind, namespace, labels, each) or []
        except KubeApiError as exc:
            if exc.status == 401:
                raise
            self._failed(exc)
        except IncompleteReadError as exc:
            self._failed(exc)
        return []

    def prefetch(
        self,
        keys: Iterable[ObjectKey],
        applied_by: str | None = None,
        minimum: int = PREFETCH_MIN,
        each: Each | None = None,
    ) -> set[tuple[str, str]]:
        """Read what `keys` name with few lists ahead of `get` (see the module docstring): a kind
        wanted `minimum` times or more is listed whole; a kind of LISTED_BY_LABEL, per namespace,
        with the label selector `applied_by` (the Kustomization's), if given. Nothing is recorded
        when such a list fails: `get` then reads.

        With `each`, what a list reads is handed to it as its pages arrive and not kept (compare
        as you list): the caller then knows each listed object, and `get` reads the others.
        Returned: the kinds listed whole by this call; with `each`, an object of one of them that
        `each` was not handed does not exist."""
        todo = [k for k in keys if k not in self._gets]
        whole: set[tuple[str, str]] = set()
        for (group, kind), count in sorted(Counter((k.group, k.kind) for k in todo).items()):
            if count < minimum or (group, kind) in LISTED_BY_LABEL:
                continue
            # else the reader has it whole
            if (group, kind, None, None) not in self._lists and self._prefetched(
                (group, kind, None, None), each
            ):
                whole.add((group, kind))
        if not applied_by:
            return whole
        per_namespace = Counter(
            (k.group, k.kind, k.namespace)
            for k in todo
            if (k.group, k.kind) in LISTED_BY_LABEL and k.namespace
        )
        for (group, kind, namespace), count in sorted(per_namespace.items()):
            if count >= LABEL_LIST_MIN and (group, kind, namespace, applied_by) not in self._lists:
                self._prefetched((group, kind, namespace, applied_by), each)
        return whole

    def _prefetched(
        self, cache: tuple[str, str, str | None, str | None], each: Each | None
    ) -> bool:
        """Whether the list was read (and, without `each`, kept)."""
        found = self.reader.prefetch(*cache, each=each)
        if found is None:
            return False
        if each is None:
            self._lists[cache] = found
            for obj in found:
                self._gets.setdefault(key_of(obj), obj)
        return True

    @contextmanager
    def released(self, group: str, kind: str) -> Iterator[None]:
        """Objects of the kind read inside this block are let go at its end (the caller keeps
        what it needs of them); those read before it stay. Failed reads stay failed."""
        lists = {c for c in self._lists if c[:2] == (group, kind)}
        gets = {k for k in self._gets if (k.group, k.kind) == (group, kind)}
        try:
            yield
        finally:
            for cache in [c for c in self._lists if c[:2] == (group, kind) and c not in lists]:
                del self._lists[cache]
                if cache[2:] == (None, None):
                    self.reader.forget(group, kind)
            for key in [
                k
                for k in self._gets
                if (k.group, k.kind) == (group, kind) and k not in gets and k not in self.unread
            ]:
                del self._gets[key]

    def crd(self, group: str, kind: str) -> KubeObject | None:
        """The served CustomResourceDefinition of a custom kind (read once); None for a built-in
        kind, one with no CRD, or a read that failed, which is noted (`notes`), not a problem:
        the audit then compares with its built-in tables."""
        if group in BUILTIN_GROUPS:
            return None
        if (group, kind) not in self._crds:
            found = None
            try:
                found = self.reader.crd(group, kind)
            except KubeApiError as exc:
                if exc.status == 401:
                    raise
                self.notes.append(
                    f"the CRD of {kind}.{group} could not be read ({exc}): its defaults and list "
                    "semantics come from the built-in tables"
                )
            except IncompleteReadError as exc:
                self.notes.append(f"the CRD of {kind}.{group} could not be read ({exc})")
            self._crds[(group, kind)] = found
        return self._crds[(group, kind)]

    def requires(self, group: str, kind: str, check: str) -> bool:
        """Whether objects of the kind can be read; if not (a snapshot without them), the check
        is not done and the audit incomplete, with the command that captures the kind."""
        lacking = self.reader.uncaptured(group, kind)
        if lacking is None:
            return True
        if (group, kind) not in self._lacking:
            self._lacking.add((group, kind))
            why, fix = lacking
            self._failed(Exception(f"{why}, so {check} was not done: {fix}"))
        return False

    def get(self, key: ObjectKey) -> KubeObject | None:
        if key not in self._gets and not self.requires(
            key.group, key.kind, "the comparison of objects of that kind"
        ):
            self._gets[key] = None
            self.unread.add(key)
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
