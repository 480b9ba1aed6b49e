"""What the nightly audit reads, computed once: the auditor reads by it, the job's RBAC grants it.

The auditor gets and lists (never watches, never writes) the kinds in `AuditReads.cluster`
cluster-wide, its own namespaced objects in its namespace, and Secrets only in the namespaces
where the Helm releases it reads keep their release Secrets (with the job's Role there, which it
compares with git too). `load_releases` in the auditor reads release Secrets exactly in
`audit_reads(spec).release_namespaces`; the overlay's ClusterRole, Role and per-namespace Roles are
generated from the same value, so the job can never be denied a read the audit makes.
"""

from __future__ import annotations

from dataclasses import dataclass

from renderer.bases import (
    AUDIT_ALERT_READS,
    AUDIT_COZYSTACK_READS,
    AUDIT_NAMESPACE,
    AUDIT_OWN_READS,
    AUDIT_READS,
    AUDIT_RELEASE_READS,
    COZYSTACK_GPU_OPERATOR_NAMESPACE,
    COZYSTACK_KUBEVIRT_NAMESPACE,
    COZYSTACK_SYSTEM_NAMESPACE,
    GPU_OPERATOR_NAMESPACE,
)
from renderer.model import ProfileSpec

__all__ = ["AuditReads", "RbacRule", "audit_rbac_rules", "audit_reads", "secret_namespaces"]

RbacRule = tuple[str, str, str | None]
"""(apiGroup, resource, namespace); namespace None: cluster-wide. Verbs are always get and list."""
Reads = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class AuditReads:
    """(apiGroup, resource) pairs read cluster-wide and in the job's namespace, and where release
    Secrets are read."""

    cluster: Reads
    own: Reads
    release_namespaces: tuple[str, ...]


def secret_namespaces(spec: ProfileSpec) -> list[str]:
    """Where the releases the audit reads keep their release Secrets, sorted.

    The audit reads a release for the GPU objects it renders (releases_vs_live.RELEASE_KINDS):
    the platform's Packages (cozystack-platform, always on Cozystack), the KubeVirt CR (Cozystack's
    kubevirt release, with passthrough or vgpu), the ClusterPolicy (the GPU Operator's release,
    when a variant is on). No other: HAMi's chart renders none of these, and on plain Flux
    KubeVirt is no Helm release of this tool, so kube-system and the KubeVirt namespace (KubeVirt's
    CA and TLS keys) are never granted. A Role in a namespace that does not exist makes Flux's
    whole apply fail: each of these exists wherever its release does.
    """
    if spec.platform.type == "cozystack":
        wanted = [
            (COZYSTACK_SYSTEM_NAMESPACE, True),
            (COZYSTACK_GPU_OPERATOR_NAMESPACE, spec.variant != "none"),
            (COZYSTACK_KUBEVIRT_NAMESPACE, spec.variant in ("passthrough", "vgpu")),
        ]
        return sorted(ns for ns, on in wanted if on)
    return [GPU_OPERATOR_NAMESPACE] if spec.variant != "none" else []


def audit_reads(spec: ProfileSpec) -> AuditReads:
    """Everything an audit of a cluster with this profile reads."""
    cluster = AUDIT_READS + (AUDIT_COZYSTACK_READS if spec.platform.type == "cozystack" else ())
    alerts = spec.audit is not None and spec.audit.alerts
    return AuditReads(
        cluster=tuple(sorted(cluster)),
        own=tuple(sorted(AUDIT_OWN_READS + (AUDIT_ALERT_READS if alerts else ()))),
        release_namespaces=tuple(secret_namespaces(spec)),
    )


def audit_rbac_rules(spec: ProfileSpec) -> list[RbacRule]:
    """Every (apiGroup, resource, namespace) the audit job may get and list, sorted."""
    reads = audit_reads(spec)
    rules: list[RbacRule] = [(group, resource, None) for group, resource in reads.cluster]
    rules += [(group, resource, AUDIT_NAMESPACE) for group, resource in reads.own]
    for ns in reads.release_namespaces:
        rules += [(group, resource, ns) for group, resource in AUDIT_RELEASE_READS]
    return sorted(rules, key=lambda r: (r[2] or "", r[0], r[1]))
