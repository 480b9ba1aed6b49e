"""Resource types the test server serves, and its discovery documents.

Built-in types come from a small table (names, scopes and short names as kube-apiserver 1.32
reports them); custom types come from CustomResourceDefinition objects stored in the server, so a
group appears in discovery once its CRD is stored, as on a real cluster.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BUILTINS",
    "Resource",
    "api_versions",
    "group_list",
    "resource_list",
    "version_sort_key",
]

_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class Resource:
    group: str
    versions: tuple[str, ...]
    """Served versions; objects are stored at `storage_version` and served at any of these."""
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    storage_version: str = ""
    builtin: bool = True
    status_subresource: bool = False
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False, repr=False)
    """openAPIV3Schema per version (custom resources only): used for defaulting and pruning."""
    verbs: tuple[str, ...] = _VERBS

    @property
    def storage(self) -> str:
        return self.storage_version or self.versions[0]

    def api_version(self, version: str | None = None) -> str:
        version = version or self.storage
        return f"{self.group}/{version}" if self.group else version

    @property
    def qualified(self) -> str:
        """`plural.group`, as Status messages name it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _builtin(group: str, kind: str, plural: str, namespaced: bool, *short: str) -> Resource:
    verbs = _VERBS if kind != "Namespace" else tuple(v for v in _VERBS if v != "deletecollection")
    return Resource(
        group=group,
        versions=("v1",),
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=namespaced,
        short_names=short,
        categories=("all",) if kind in ("Service", "Deployment", "Pod") else (),
        status_subresource=kind in ("Namespace", "Node", "Service", "Deployment", "Pod"),
        verbs=verbs,
    )


BUILTINS: tuple[Resource, ...] = (
    _builtin("", "ConfigMap", "configmaps", True, "cm"),
    _builtin("", "Namespace", "namespaces", False, "ns"),
    _builtin("", "Node", "nodes", False, "no"),
    _builtin("", "Pod", "pods", True, "po"),
    _builtin("", "Secret", "secrets", True),
    _builtin("", "Service", "services", True, "svc"),
    _builtin("", "ServiceAccount", "serviceaccounts", True, "sa"),
    _builtin("apps", "Deployment", "deployments", True, "deploy"),
    _builtin("batch", "CronJob", "cronjobs", True, "cj"),
    _builtin("rbac.authorization.k8s.io", "ClusterRole", "clusterroles", False),
    _builtin("rbac.authorization.k8s.io", "ClusterRoleBinding", "clusterrolebindings", False),
    _builtin("rbac.authorization.k8s.io", "Role", "roles", True),
    _builtin("rbac.authorization.k8s.io", "RoleBinding", "rolebindings", True),
    _builtin(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        False,
        "crd",
        "crds",
    ),
)


def version_sort_key(version: str) -> tuple[int, int, int, str]:
    """Kubernetes version priority: GA before beta before alpha, higher numbers first."""
    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not match:
        return (3, 0, 0, version)  # not kube-like: after all kube-like versions, alphabetical
    major, stage, minor = int(match[1]), match[2], int(match[3] or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -major, -minor, "")


def _hash(resource: Resource) -> str:
    return hashlib.sha256(f"{resource.group}/{resource.plural}".encode()).hexdigest()[:11]


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


def _group_doc(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def group_versions(resources: Iterable[Resource]) -> dict[str, list[str]]:
    """group -> served versions in priority order; groups in first-seen order, core excluded."""
    out: dict[str, set[str]] = {}
    for r in resources:
        if r.group:
            out.setdefault(r.group, set()).update(r.versions)
    return {g: sorted(vs, key=version_sort_key) for g, vs in out.items()}


def group_list(resources: Iterable[Resource]) -> dict[str, Any]:
    groups = [_group_doc(g, vs) for g, vs in group_versions(resources).items()]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def group_doc(resources: Iterable[Resource], group: str) -> dict[str, Any] | None:
    versions = group_versions(resources).get(group)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_doc(group, versions)}


def resource_list(resources: Iterable[Resource], group: str, version: str) -> dict[str, Any] | None:
    """The APIResourceList of one group version, or None when nothing is served there."""
    entries: list[dict[str, Any]] = []
    for r in sorted(resources, key=lambda r: r.plural):
        if r.group != group or version not in r.versions:
            continue
        entry: dict[str, Any] = {
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": list(r.verbs),
        }
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        entry["storageVersionHash"] = _hash(r)
        entries.append(entry)
        if r.status_subresource:
            entries.append(
                {
                    "name": f"{r.plural}/status",
                    "singularName": "",
                    "namespaced": r.namespaced,
                    "kind": r.kind,
                    "verbs": ["get", "patch", "update"],
                }
            )
    if not entries:
        return None
    doc: dict[str, Any] = {"kind": "APIResourceList"}
    if group:
        doc["apiVersion"] = "v1"  # the real /api/v1 document has no apiVersion; group ones do
    doc["groupVersion"] = f"{group}/{version}" if group else version
    doc["resources"] = entries
    return doc


def resource_from_crd(crd: dict[str, Any]) -> Resource:
    """The served type a CustomResourceDefinition defines."""
    spec = crd["spec"]
    names = spec["names"]
    served = [v for v in spec["versions"] if v.get("served")]
    versions = tuple(sorted((v["name"] for v in served), key=version_sort_key))
    storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
    return Resource(
        group=spec["group"],
        versions=versions,
        kind=names["kind"],
        plural=names["plural"],
        singular=names.get("singular") or names["kind"].lower(),
        namespaced=spec.get("scope") == "Namespaced",
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        storage_version=storage,
        builtin=False,
        status_subresource=any("status" in (v.get("subresources") or {}) for v in served),
        schemas={v["name"]: (v.get("schema") or {}).get("openAPIV3Schema") or {} for v in served},
    )
