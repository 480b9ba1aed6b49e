"""The nightly audit job's permissions as data: exactly what its RBAC in the built output grants.

The auditor reads (get and list; never watch, never write) the kinds in `bases.AUDIT_READS`
cluster-wide (and Packages on Cozystack), its own namespaced objects in its namespace, and Secrets
only in the namespaces where Helm keeps the release Secrets of the releases the profile implies
(with the job's Role there, which it compares with git too). Tests compare these rules with the
overlay's built RBAC and with the API paths the auditor requests.
"""

from __future__ import annotations

from renderer.bases import (
    AUDIT_COZYSTACK_READS,
    AUDIT_NAMESPACE,
    AUDIT_OWN_READS,
    AUDIT_READS,
    AUDIT_RELEASE_READS,
    COZYSTACK_GPU_OPERATOR_NAMESPACE,
    COZYSTACK_HAMI_NAMESPACE,
    COZYSTACK_KUBEVIRT_NAMESPACE,
    COZYSTACK_SYSTEM_NAMESPACE,
    GPU_OPERATOR_NAMESPACE,
    HAMI_NAMESPACE,
    KUBEVIRT_NAMESPACE,
)
from renderer.model import ProfileSpec

__all__ = ["RbacRule", "audit_rbac_rules", "helm_secret_namespaces", "secret_bases"]

RbacRule = tuple[str, str, str | None]
"""(apiGroup, resource, namespace); namespace None: cluster-wide. Verbs are always get and list."""


def secret_bases(spec: ProfileSpec) -> list[tuple[str, str]]:
    """(namespace of the base `audit-secrets-<ns>`, namespace it must end up in), one per Role.

    A Role in a namespace that does not exist makes Flux's whole apply fail, so a namespace is
    listed only where the profile implies its release: the GPU Operator's when a variant is on,
    KubeVirt's with passthrough or vgpu, HAMi's with hami (on plain Flux that is kube-system,
    whose Secrets are not worth granting for nothing), cozy-system always.
    """
    kubevirt = spec.variant in ("passthrough", "vgpu")
    out: list[tuple[str, str]] = []
    if spec.platform.type == "cozystack":
        wanted = [
            (COZYSTACK_SYSTEM_NAMESPACE, True),
            (COZYSTACK_GPU_OPERATOR_NAMESPACE, spec.variant != "none"),
            (COZYSTACK_KUBEVIRT_NAMESPACE, kubevirt),
            (COZYSTACK_HAMI_NAMESPACE, spec.hami),
        ]
        return [(ns, ns) for ns, on in wanted if on]
    if spec.variant != "none":
        out.append((GPU_OPERATOR_NAMESPACE, GPU_OPERATOR_NAMESPACE))
    if spec.hami:
        out.append((HAMI_NAMESPACE, HAMI_NAMESPACE))
    if kubevirt and spec.kubevirt.namespace not in {ns for _, ns in out}:
        out.append((KUBEVIRT_NAMESPACE, spec.kubevirt.namespace))
    return out


def helm_secret_namespaces(spec: ProfileSpec) -> list[str]:
    """Namespaces where the audit job may read Secrets, sorted."""
    return sorted(ns for _, ns in secret_bases(spec))


def audit_rbac_rules(spec: ProfileSpec) -> list[RbacRule]:
    """Every (apiGroup, resource, namespace) the audit job may get and list, sorted."""
    reads = list(AUDIT_READS)
    if spec.platform.type == "cozystack":
        reads += AUDIT_COZYSTACK_READS
    rules: list[RbacRule] = [(group, resource, None) for group, resource in reads]
    rules += [(group, resource, AUDIT_NAMESPACE) for group, resource in AUDIT_OWN_READS]
    for ns in helm_secret_namespaces(spec):
        rules += [(group, resource, ns) for group, resource in AUDIT_RELEASE_READS]
    return sorted(rules, key=lambda r: (r[2] or "", r[0], r[1]))
