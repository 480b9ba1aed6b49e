"""Discovery documents -> API resources: which plural, scope and version serve a kind.

Pure functions over the JSON the API server returns for `/api`, `/apis` and `/api(s)/.../{version}`;
`kube_api.KubeApi` does the fetching.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ApiResource",
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
        """URL path of the collection (or of one object), across namespaces when `namespace` is ""."""
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
