"""The kinds the audit looks up by name, and object keys as the live cluster knows them.

Why this exists: every step of the audit (git, releases, wiring, VMs, inventory) reads the same
few Flux, Cozystack, KubeVirt and GPU Operator kinds, and pairs a desired object with the live one
by key; renders may set a namespace on cluster-scoped objects, which the live side never has.
"""

from __future__ import annotations

from typing import Any

from kubedata.objects import KubeObject, ObjectKey, key_of

__all__ = [
    "BUILTIN_GROUPS",
    "CLUSTER_POLICY",
    "CLUSTER_SCOPED",
    "CRD",
    "FLUX_KINDS",
    "GIT_REPOSITORY",
    "HELM_RELEASE",
    "KUBEVIRT",
    "KUSTOMIZATION",
    "PACKAGE",
    "RESOURCES",
    "VIRTUAL_MACHINE",
    "in_namespace",
    "live_key",
    "meta",
    "ns_name",
    "resource_name",
]

KUSTOMIZATION = ("kustomize.toolkit.fluxcd.io", "Kustomization")
GIT_REPOSITORY = ("source.toolkit.fluxcd.io", "GitRepository")
HELM_RELEASE = ("helm.toolkit.fluxcd.io", "HelmRelease")
PACKAGE = ("cozystack.io", "Package")
KUBEVIRT = ("kubevirt.io", "KubeVirt")
CLUSTER_POLICY = ("nvidia.com", "ClusterPolicy")
VIRTUAL_MACHINE = ("kubevirt.io", "VirtualMachine")
FLUX_KINDS = (
    KUSTOMIZATION,
    GIT_REPOSITORY,
    ("source.toolkit.fluxcd.io", "OCIRepository"),
    ("source.toolkit.fluxcd.io", "HelmRepository"),
    HELM_RELEASE,
)
CLUSTER_SCOPED = frozenset(
    {
        ("cozystack.io", "Package"),
        ("cozystack.io", "PackageSource"),
        ("nvidia.com", "ClusterPolicy"),
        ("", "Namespace"),
        ("", "Node"),
        ("", "PersistentVolume"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("storage.k8s.io", "StorageClass"),
    }
)


RESOURCES: dict[tuple[str, str], str] = {
    ("", "Node"): "nodes",
    ("", "Namespace"): "namespaces",
    ("", "Secret"): "secrets",
    KUSTOMIZATION: "kustomizations.kustomize.toolkit.fluxcd.io",
    GIT_REPOSITORY: "gitrepositories.source.toolkit.fluxcd.io",
    HELM_RELEASE: "helmreleases.helm.toolkit.fluxcd.io",
    PACKAGE: "packages.cozystack.io",
    KUBEVIRT: "kubevirts.kubevirt.io",
    CLUSTER_POLICY: "clusterpolicies.nvidia.com",
    VIRTUAL_MACHINE: "virtualmachines.kubevirt.io",
}
"""The `kubectl get` resource name of the kinds the audit looks up, for the command that
captures one a snapshot lacks (other kinds: the lower-case kind, dotted with its group)."""


def resource_name(group: str, kind: str) -> str:
    """`kubectl get` resource name of a kind (`virtualmachines.kubevirt.io`)."""
    found = RESOURCES.get((group, kind))
    if found:
        return found
    name = kind.lower()
    if name.endswith("y") and name[-2:-1] not in ("a", "e", "o", "u"):
        plural = name[:-1] + "ies"
    else:
        plural = name + ("es" if name.endswith(("s", "x", "ch")) else "s")
    return f"{plural}.{group}" if group else plural


BUILTIN_GROUPS = frozenset(
    {
        "",
        "apps",
        "batch",
        "policy",
        "autoscaling",
        "networking.k8s.io",
        "rbac.authorization.k8s.io",
        "storage.k8s.io",
        "scheduling.k8s.io",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "node.k8s.io",
        "certificates.k8s.io",
    }
)
"""API groups built into kube-apiserver: no CustomResourceDefinition describes their kinds."""
CRD = ObjectKey("apiextensions.k8s.io", "CustomResourceDefinition", "", "")


def meta(obj: KubeObject) -> dict[str, Any]:
    """The object's metadata ({} when it has none)."""
    found = obj.get("metadata")
    return found if isinstance(found, dict) else {}


def ns_name(obj: KubeObject) -> str:
    """`namespace/name`, as Flux and kubectl print an object."""
    found = meta(obj)
    return f"{found.get('namespace', '')}/{found.get('name', '')}"


def live_key(obj: KubeObject) -> ObjectKey:
    """The key the live object has: no namespace for a cluster-scoped kind."""
    key = key_of(obj)
    if (key.group, key.kind) in CLUSTER_SCOPED:
        return key._replace(namespace="")
    return key


def in_namespace(obj: KubeObject, namespace: str) -> KubeObject:
    """A namespaced object rendered without a namespace, placed in `namespace` (as Helm does for
    the release's objects); any other object as it is."""
    key = key_of(obj)
    if (key.group, key.kind) not in CLUSTER_SCOPED and not key.namespace:
        return {**obj, "metadata": {**meta(obj), "namespace": namespace}}
    return obj
