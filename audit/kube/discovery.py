"""Discovery: which plural, scope and version serve a kind.

Pure parsers of the documents the API server returns for `/api`, `/apis` and `/api(s)/.../{v}`,
and `Discovery`, which asks for them lazily (through the `fetch` it is given: `KubeApi.fetch`) and
caches them for the life of one client: a group's versions are fetched only when a kind of it is
resolved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from audit.errors import IncompleteReadError, KubeApiError

__all__ = [
    "ApiResource",
    "Discovery",
    "GroupVersions",
    "find_kind",
    "parse_core_versions",
    "parse_groups",
    "parse_resources",
]


@dataclass(frozen=True)
class ApiResource:
    """One resource type as the server serves it at one version."""

    group: str
    """API group, "" for the core group."""
    version: str
    kind: str
    plural: str
    """The URL segment (`kubevirts`), also what Status details call `kind`."""
    namespaced: bool
    verbs: tuple[str, ...] = ()
    short_names: tuple[str, ...] = ()
    singular: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """`plural.group` as kubectl and Status messages name it (`kubevirts.kubevirt.io`)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(self, namespace: str = "", name: str = "") -> str:
        """URL path of the collection, or of one object; across namespaces if `namespace` is ""."""
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        scope = f"/namespaces/{namespace}" if self.namespaced and namespace else ""
        tail = f"/{name}" if name else ""
        return f"{prefix}{scope}/{self.plural}{tail}"


@dataclass(frozen=True)
class GroupVersions:
    """A group from `/apis`: its versions in the server's order, the preferred one first."""

    name: str
    versions: tuple[str, ...]


def parse_core_versions(doc: Mapping[str, Any]) -> GroupVersions:
    """`/api` (APIVersions) -> the core group's versions."""
    versions = tuple(str(v) for v in doc.get("versions") or ())
    if not versions:
        raise ValueError("APIVersions lists no versions")
    return GroupVersions("", versions)


def parse_groups(doc: Mapping[str, Any]) -> list[GroupVersions]:
    """`/apis` (APIGroupList) -> groups in the server's priority order, preferred version first."""
    if doc.get("kind") != "APIGroupList":
        raise ValueError(f"expected APIGroupList, got {doc.get('kind')!r}")
    groups = []
    for group in doc.get("groups") or ():
        name = str(group["name"])
        versions = [str(v["version"]) for v in group.get("versions") or ()]
        preferred = (group.get("preferredVersion") or {}).get("version")
        if preferred in versions:
            versions.remove(preferred)
            versions.insert(0, preferred)
        groups.append(GroupVersions(name, tuple(versions)))
    return groups


def parse_resources(doc: Mapping[str, Any], group: str, version: str) -> list[ApiResource]:
    """An APIResourceList -> its resources, without subresources (`kubevirts/status`)."""
    expected = f"{group}/{version}" if group else version
    if doc.get("groupVersion") != expected:
        raise ValueError(f"expected groupVersion {expected!r}, got {doc.get('groupVersion')!r}")
    return [
        ApiResource(
            group=group,
            version=version,
            kind=str(entry["kind"]),
            plural=str(entry["name"]),
            namespaced=bool(entry.get("namespaced")),
            verbs=tuple(entry.get("verbs") or ()),
            short_names=tuple(entry.get("shortNames") or ()),
            singular=str(entry.get("singularName") or ""),
        )
        for entry in doc.get("resources") or ()
        if "/" not in str(entry.get("name", "/"))
    ]


def find_kind(resources: Iterable[ApiResource], kind: str) -> ApiResource | None:
    """The first resource serving `kind` (a kind can be served by one plural per version)."""
    return next((r for r in resources if r.kind == kind), None)


class Discovery:
    """Lazily fetched, cached discovery of one API server."""

    def __init__(self, fetch: Callable[[str, str], Any]) -> None:
        self._fetch = fetch
        self._groups: list[GroupVersions] | None = None
        self._resources: dict[tuple[str, str], list[ApiResource]] = {}
        self._failed: dict[tuple[str, str], str] = {}

    def groups(self) -> list[GroupVersions]:
        """The core group then every API group, in the server's priority order."""
        if self._groups is None:
            try:
                core = parse_core_versions(self._fetch("/api", "discovery /api"))
                groups = parse_groups(self._fetch("/apis", "discovery /apis"))
            except (KeyError, TypeError, ValueError) as exc:
                raise IncompleteReadError(
                    f"discovery: the server's answer is malformed ({exc}); is it an API server?"
                ) from None
            self._groups = [core, *groups]
        return self._groups

    def resources(self, group: str, version: str) -> list[ApiResource]:
        """What a group-version listed by /api or /apis serves. Its discovery failing (404
        included: listed but not answered, as an aggregated API whose backend is gone) raises
        IncompleteReadError: "serves nothing" would let the audit call absent what it could not
        read. The failure is remembered: each later resolve reports it without asking again."""
        key = (group, version)
        if key in self._failed:
            raise IncompleteReadError(self._failed[key])
        if key not in self._resources:
            path = f"/apis/{group}/{version}" if group else f"/api/{version}"
            try:
                found = parse_resources(self._fetch(path, f"discovery {path}"), group, version)
            except KubeApiError as exc:
                if exc.status == 401:
                    raise
                self._failed[key] = (
                    f"discovery {path}: 404, though the server lists {group or 'core'}/{version}; "
                    "the kinds it serves could not be read"
                    if exc.status == 404
                    else str(exc)
                )
                raise IncompleteReadError(self._failed[key]) from None
            except IncompleteReadError as exc:
                self._failed[key] = str(exc)
                raise
            except (KeyError, TypeError, ValueError) as exc:
                self._failed[key] = f"discovery {path}: malformed answer ({exc})"
                raise IncompleteReadError(self._failed[key]) from None
            self._resources[key] = found
        return self._resources[key]

    def resolve(self, kind: str, group: str | None = None) -> ApiResource | None:
        """Plural, scope and version serving `kind` (preferred version first); None if not served.

        Without a group, the first group serving the kind in the server's priority order wins.
        A group whose discovery fails makes this raise rather than answer "not served".
        """
        for candidate in self.groups():
            if group is not None and candidate.name != group:
                continue
            for version in candidate.versions:
                if found := find_kind(self.resources(candidate.name, version), kind):
                    return found
        return None

    def resolve_all(
        self, wanted: Iterable[tuple[str, str]]
    ) -> tuple[dict[tuple[str, str], ApiResource], list[tuple[str, str]]]:
        """(group, kind) pairs -> ({pair: resource}, [pairs the server does not serve])."""
        found: dict[tuple[str, str], ApiResource] = {}
        missing: list[tuple[str, str]] = []
        for group, kind in wanted:
            resource = self.resolve(kind, group)
            if resource is None:
                missing.append((group, kind))
            else:
                found[(group, kind)] = resource
        return found, missing
