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
    COZYSTACK_HAMI_NAMESPACE,
    COZYSTACK_KUBEVIRT_NAMESPACE,
    COZYSTACK_SYSTEM_NAMESPACE,
    GPU_OPERATOR_NAMESPACE,
    HAMI_NAMESPACE,
    KUBEVIRT_NAMESPACE,
)
from renderer.model import ProfileSpec

__all__ = ["AuditReads", "RbacRule", "audit_rbac_rules", "audit_reads", "secret_bases"]

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


def secret_bases(spec: ProfileSpec) -> list[tuple[str, str]]:
    """(namespace of the base `audit-secrets-<ns>`, namespace it must end up in), one per
    namespace whose releases the audit reads.

    The releases the profile implies: the GPU Operator's when a variant is on, KubeVirt's with
    passthrough or vgpu, HAMi's with hami, the platform's on Cozystack. A Role in a namespace that
    does not exist makes Flux's whole apply fail, so no other namespace is listed (and a
    hand-applied release elsewhere is reported from its HelmRelease, not read).
    """
    kubevirt = spec.variant in ("passthrough", "vgpu")
    if spec.platform.type == "cozystack":
        wanted = [
            (COZYSTACK_SYSTEM_NAMESPACE, True),
            (COZYSTACK_GPU_OPERATOR_NAMESPACE, spec.variant != "none"),
            (COZYSTACK_KUBEVIRT_NAMESPACE, kubevirt),
            (COZYSTACK_HAMI_NAMESPACE, spec.hami),
        ]
        return [(ns, ns) for ns, on in wanted if on]
    out: list[tuple[str, str]] = []
    if spec.variant != "none":
        out.append((GPU_OPERATOR_NAMESPACE, GPU_OPERATOR_NAMESPACE))
    if spec.hami:
        out.append((HAMI_NAMESPACE, HAMI_NAMESPACE))
    if kubevirt and spec.kubevirt.namespace not in {ns for _, ns in out}:
        out.append((KUBEVIRT_NAMESPACE, spec.kubevirt.namespace))
    return out


def audit_reads(spec: ProfileSpec) -> AuditReads:
    """Everything an audit of a cluster with this profile reads."""
    cluster = AUDIT_READS + (AUDIT_COZYSTACK_READS if spec.platform.type == "cozystack" else ())
    alerts = spec.audit is not None and spec.audit.alerts
    return AuditReads(
        cluster=tuple(sorted(cluster)),
        own=tuple(sorted(AUDIT_OWN_READS + (AUDIT_ALERT_READS if alerts else ()))),
        release_namespaces=tuple(sorted(ns for _, ns in secret_bases(spec))),
    )


def audit_rbac_rules(spec: ProfileSpec) -> list[RbacRule]:
    """Every (apiGroup, resource, namespace) the audit job may get and list, sorted."""
    reads = audit_reads(spec)
    rules: list[RbacRule] = [(group, resource, None) for group, resource in reads.cluster]
    rules += [(group, resource, AUDIT_NAMESPACE) for group, resource in reads.own]
    for ns in reads.release_namespaces:
        rules += [(group, resource, ns) for group, resource in AUDIT_RELEASE_READS]
    return sorted(rules, key=lambda r: (r[2] or "", r[0], r[1]))
