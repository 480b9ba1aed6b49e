"""The kustomize bases the tool ships, written by `render` to overlays/base/<name>/.

Each cluster overlay lists the bases it needs and patches them (JSON 6902) with its values.
"""

from __future__ import annotations

from typing import Any

from kubedata.objects import KubeObject

from renderer.cozystack_names import (
    GPU_OPERATOR,
    GPU_OPERATOR_RELEASE,
    KUBEVIRT_RELEASE,
    PLATFORM_PACKAGE,
    PLATFORM_RELEASE,
    Release,
)
from renderer.flux_names import FLUX_GPU_OPERATOR_RELEASE, FLUX_HAMI_RELEASE

__all__ = [
    "AUDIT_ALERTS_BASE",
    "AUDIT_ALERT_READS",
    "AUDIT_COZYSTACK_READS",
    "AUDIT_JOB_BASE",
    "AUDIT_NAME",
    "AUDIT_NAMESPACE",
    "AUDIT_OWN_READS",
    "AUDIT_READS",
    "AUDIT_RELEASE_READS",
    "AUDIT_SECRETS_ROLE",
    "AUDIT_SECRET_NAMESPACES",
    "BASES",
    "COZYSTACK_BASE",
    "COZYSTACK_GPU_OPERATOR_BASE",
    "COZYSTACK_GPU_OPERATOR_NAMESPACE",
    "COZYSTACK_KUBEVIRT_NAMESPACE",
    "COZYSTACK_SYSTEM_NAMESPACE",
    "FLUX_GPU_OPERATOR_BASE",
    "FLUX_HAMI_BASE",
    "FLUX_KUBEVIRT_BASE",
    "GPU_OPERATOR_CHART_REPO",
    "GPU_OPERATOR_NAMESPACE",
    "HAMI_CHART_VERSION",
    "KUBEVIRT_NAME",
    "KUBEVIRT_NAMESPACE",
    "PRUNE_DISABLED",
    "README_URL",
    "audit_alert_rules",
    "audit_secrets_base",
    "read_rules",
    "runbook_url",
]

# The bases, by folder under overlays/base/: each cluster overlay lists those it uses.
COZYSTACK_BASE = "cozystack"
COZYSTACK_GPU_OPERATOR_BASE = "cozystack-gpu-operator-container"
FLUX_GPU_OPERATOR_BASE = "flux-gpu-operator"
FLUX_KUBEVIRT_BASE = "flux-kubevirt"
FLUX_HAMI_BASE = "flux-hami"
AUDIT_JOB_BASE = "audit-job"
AUDIT_ALERTS_BASE = "audit-alerts"


def audit_secrets_base(namespace: str) -> str:
    """The base that lets the audit job read Helm release Secrets in one namespace."""
    return f"audit-secrets-{namespace}"


GPU_OPERATOR_NAMESPACE = FLUX_GPU_OPERATOR_RELEASE.namespace
GPU_OPERATOR_CHART_REPO = "https://helm.ngc.nvidia.com/nvidia"
HAMI_CHART_VERSION = "2.10.0"
KUBEVIRT_NAME = "kubevirt"
KUBEVIRT_NAMESPACE = "kubevirt"
"""Plain Flux: the name and namespace the base gives the KubeVirt CR; overlays replace both with
spec.kubevirt's."""
_HELM_REPO_INTERVAL = "12h"
PRUNE_DISABLED = {"kustomize.toolkit.fluxcd.io/prune": "disabled"}
"""On every object the tool adopts or merges into rather than creates: Flux's garbage collection
skips it, so neither a profile change nor a deleted Kustomization deletes the object itself."""

# The nightly audit job (DESIGN §6): a CronJob, read-only RBAC on exactly what the auditor reads.
AUDIT_NAMESPACE = "gpu-gitops"
AUDIT_NAME = "gpu-gitops-audit"
AUDIT_SECRETS_ROLE = "gpu-gitops-audit-helm-releases"
AUDIT_READS: tuple[tuple[str, str], ...] = (
    ("", "namespaces"),
    # the CRDs of the custom kinds compared: their served defaults and list semantics
    # (audit.sources.live.Live.crd)
    ("apiextensions.k8s.io", "customresourcedefinitions"),
    ("", "nodes"),
    ("helm.toolkit.fluxcd.io", "helmreleases"),
    ("kubevirt.io", "kubevirts"),
    ("kubevirt.io", "virtualmachines"),
    ("kustomize.toolkit.fluxcd.io", "kustomizations"),
    ("nvidia.com", "clusterpolicies"),
    ("rbac.authorization.k8s.io", "clusterrolebindings"),
    ("rbac.authorization.k8s.io", "clusterroles"),
    ("source.toolkit.fluxcd.io", "gitrepositories"),
    ("source.toolkit.fluxcd.io", "helmrepositories"),
    ("source.toolkit.fluxcd.io", "ocirepositories"),
)
"""(apiGroup, resource) the auditor gets and lists cluster-wide on every platform: the live
inventory it checks (Flux objects and sources, KubeVirt, ClusterPolicies, Nodes, VMs), the
cluster-scoped kinds it compares with git (Namespaces, this job's ClusterRole and its binding) and
the CustomResourceDefinitions of the custom kinds it compares."""
AUDIT_COZYSTACK_READS: tuple[tuple[str, str], ...] = (("cozystack.io", "packages"),)
"""...and on Cozystack (the kind does not exist on plain Flux)."""
AUDIT_OWN_READS: tuple[tuple[str, str], ...] = (
    ("", "serviceaccounts"),
    ("batch", "cronjobs"),
    ("rbac.authorization.k8s.io", "rolebindings"),
    ("rbac.authorization.k8s.io", "roles"),
)
"""In AUDIT_NAMESPACE: the job's own objects, which the auditor compares with git like any other."""
AUDIT_ALERT_READS: tuple[tuple[str, str], ...] = (("monitoring.coreos.com", "prometheusrules"),)
"""...and the job's PrometheusRule, when the profile asks for alerts."""
AUDIT_RELEASE_READS: tuple[tuple[str, str], ...] = (
    ("", "secrets"),
    ("rbac.authorization.k8s.io", "rolebindings"),
    ("rbac.authorization.k8s.io", "roles"),
)
"""In each namespace holding Helm release Secrets: those, and the job's Role there."""
COZYSTACK_SYSTEM_NAMESPACE = PLATFORM_RELEASE.namespace
COZYSTACK_GPU_OPERATOR_NAMESPACE = GPU_OPERATOR_RELEASE.namespace
COZYSTACK_KUBEVIRT_NAMESPACE = KUBEVIRT_RELEASE.namespace
"""Where Cozystack's GPU-related Helm releases keep their sh.helm.release.v1 Secrets."""
AUDIT_SECRET_NAMESPACES = (
    COZYSTACK_GPU_OPERATOR_NAMESPACE,
    COZYSTACK_KUBEVIRT_NAMESPACE,
    COZYSTACK_SYSTEM_NAMESPACE,
    GPU_OPERATOR_NAMESPACE,
)
"""Where a release the audit reads can live: each has a base `audit-secrets-<namespace>`, a Role
reading Secrets there and its binding (renderer.audit_rbac picks them per profile)."""
_READ_VERBS = ["get", "list"]


def _helm_repository(name: str, namespace: str, url: str) -> KubeObject:
    return {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmRepository",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"interval": _HELM_REPO_INTERVAL, "url": url},
    }


def _helm_release(release: Release, chart: str, version: str, repo: str) -> KubeObject:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": release.name, "namespace": release.namespace},
        "spec": {
            "interval": "10m",
            "chart": {
                "spec": {
                    "chart": chart,
                    "version": version,
                    "sourceRef": {"kind": "HelmRepository", "name": repo},
                }
            },
            "install": {"crds": "CreateReplace"},
            "upgrade": {"crds": "CreateReplace"},
            "driftDetection": {"mode": "enabled"},
            "values": {},
        },
    }


def read_rules(reads: tuple[tuple[str, str], ...]) -> list[KubeObject]:
    """RBAC rules granting get/list on (apiGroup, resource) pairs: one rule per group, sorted."""
    groups: dict[str, list[str]] = {}
    for group, resource in sorted(reads):
        groups.setdefault(group, []).append(resource)
    return [
        {"apiGroups": [group], "resources": resources, "verbs": list(_READ_VERBS)}
        for group, resources in groups.items()
    ]


def _audit_pod() -> KubeObject:
    """The audit Job's pod: restricted, read-only root, a scratch emptyDir; each overlay patches in
    the profile's image, args and resources (the placeholders below)."""
    container = {
        "name": "audit",
        "image": "gpu-gitops",
        "command": ["gpu-gitops"],
        "args": ["audit", "--cluster", "CLUSTER", "--in-cluster"],
        # the artifact download and Python need a writable home; the root filesystem is not
        "env": [{"name": "HOME", "value": "/tmp"}],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "resources": {},
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }
    return {
        "serviceAccountName": AUDIT_NAME,
        # Never: a failed container is never restarted in place, each retry is a new pod
        # (and podFailurePolicy requires it)
        "restartPolicy": "Never",
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 65532,
            "runAsGroup": 65532,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container],
        "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}],
    }


def _audit_job_spec(labels: dict[str, str]) -> KubeObject:
    return {
        # The audit runs `--fail-on never` (renderer/overlays.py): drift is in the metrics and
        # the log, not in the Job's status, which says only whether the audit could run. Exit 2
        # (incomplete: API, network or Pushgateway trouble) is retried once, in a new pod; any
        # other failure (a crash, an OOM kill) fails the Job at once; an eviction (node drain)
        # is not counted. The rules are tried in order: eviction first, as an evicted container
        # exits with 143 or 137.
        "backoffLimit": 1,
        # two runs of at most --deadline (audit/kube/api.py DEFAULT_DEADLINE, 900 s) each
        "activeDeadlineSeconds": 3600,
        "podFailurePolicy": {
            "rules": [
                {
                    "action": "Ignore",
                    "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
                },
                {
                    "action": "Count",
                    "onExitCodes": {"containerName": "audit", "operator": "In", "values": [2]},
                },
                {
                    "action": "FailJob",
                    "onExitCodes": {"containerName": "audit", "operator": "NotIn", "values": [2]},
                },
            ]
        },
        "template": {"metadata": {"labels": labels}, "spec": _audit_pod()},
    }


def _audit_job() -> dict[str, KubeObject]:
    """The CronJob, its ServiceAccount and RBAC; each overlay patches in the rules
    renderer.audit_rbac computes."""
    meta = {"name": AUDIT_NAME, "namespace": AUDIT_NAMESPACE}
    labels = {"app.kubernetes.io/name": AUDIT_NAME, "app.kubernetes.io/managed-by": "gpu-gitops"}
    return {
        "namespace.yaml": {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": AUDIT_NAMESPACE,
                "labels": {"pod-security.kubernetes.io/enforce": "restricted"},
            },
        },
        "serviceaccount.yaml": {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
        "cronjob.yaml": {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {**meta, "labels": labels},
            "spec": {
                "schedule": "17 3 * * *",
                "concurrencyPolicy": "Forbid",
                # a run missed by more than an hour (controller down) is skipped, not piled up
                "startingDeadlineSeconds": 3600,
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 3,
                "jobTemplate": {"spec": _audit_job_spec(labels)},
            },
        },
        "clusterrole.yaml": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": AUDIT_NAME},
            "rules": [],
        },
        "clusterrolebinding.yaml": _binding("ClusterRoleBinding", "ClusterRole", AUDIT_NAME, None),
        "role.yaml": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": meta,
            "rules": [],
        },
        "rolebinding.yaml": _binding("RoleBinding", "Role", AUDIT_NAME, AUDIT_NAMESPACE),
    }


README_URL = "https://github.com/gpu-gitops/gpu-gitops/blob/v{version}/README.md"
"""The README of a released version: each alert's default runbook is its section there."""
INCOMPLETE_FOR = "1h"
"""How long an incomplete audit stands before GpuGitopsAuditIncomplete fires: the Job retries an
incomplete run once, within its activeDeadlineSeconds (3600)."""
MISSING_AFTER = "36h"
"""No complete audit for this long: a nightly job has missed a night and a half."""


def runbook_url(alert: str, base: str | None, version: str) -> str:
    """Where an alert's runbook is: BASE/<alert in lower case> (as kube-prometheus-stack's
    runbooks are laid out), else the README's section, whose GitHub anchor is the same word."""
    if base:
        return f"{base.rstrip('/')}/{alert.lower()}"
    return f"{README_URL.format(version=version)}#{alert.lower()}"


def audit_alert_rules(cluster: str, runbook_base: str | None, version: str) -> list[KubeObject]:
    """Alerting rules on the metrics the audit pushes (audit/metrics.py names them): every rule
    selects the cluster's Pushgateway group by the labels it was pushed with, which only a scrape
    with `honor_labels: true` keeps (README, "Deploy the nightly audit")."""
    where = f'job="{AUDIT_NAME}",cluster="{cluster}"'
    last_success = f"gpu_gitops_audit_last_success_timestamp_seconds{{{where}}}"
    hours = int(MISSING_AFTER.removesuffix("h"))
    query = f'gpu_gitops_audit_finding{{{where},severity="high"}}'

    def rule(alert: str, expr: str, annotations: dict[str, str], **extra: Any) -> KubeObject:
        labels = {"severity": "warning", **extra.pop("labels", {})}
        return {
            "alert": alert,
            "expr": expr,
            **extra,
            "labels": labels,
            "annotations": {
                **annotations,
                "runbook_url": runbook_url(alert, runbook_base, version),
            },
        }

    missing = {
        "summary": f"No complete drift audit of {cluster} for {hours} hours",
        "description": f"Check the CronJob {AUDIT_NAMESPACE}/{AUDIT_NAME} in {cluster}: "
        "suspended, failing, or unable to reach the Pushgateway; and that Prometheus scrapes "
        "the Pushgateway with honor_labels: true.",
    }
    return [
        rule(
            "GpuGitopsHighDrift",
            f'sum by (job, cluster) (gpu_gitops_audit_findings{{{where},severity="high"}}) > 0',
            {
                "summary": f"GPU wiring of {cluster} drifted from git",
                "description": "{{ $value }} high-severity finding(s) in the last complete drift "
                f"audit of {cluster}. Which objects and fields, who changed them and when: "
                f"{query}, or gpu-gitops audit --cluster {cluster}.",
            },
        ),
        rule(
            "GpuGitopsAuditIncomplete",
            f"gpu_gitops_audit_complete{{{where}}} == 0",
            {
                "summary": f"The drift audit of {cluster} could not read everything",
                "description": f"The last drift audit of {cluster} could not read everything "
                "and is never reported clean; the findings series are those of the last "
                "complete audit. The Job's log names each failed read (RBAC, API server, "
                "source-controller).",
            },
            **{"for": INCOMPLETE_FOR},
        ),
        # stale, or never pushed: one alert, two rules (a label tells them apart; an absent
        # series has no value to compare, and waits out `for` instead)
        rule(
            "GpuGitopsAuditMissing",
            f"time() - {last_success} > {hours} * 3600",
            missing,
            labels={"reason": "stale"},
        ),
        rule(
            "GpuGitopsAuditMissing",
            f"absent({last_success})",
            missing,
            labels={"reason": "never-pushed"},
            **{"for": MISSING_AFTER},
        ),
    ]


def _binding(kind: str, role_kind: str, name: str, namespace: str | None) -> KubeObject:
    meta: dict[str, str] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": AUDIT_NAME, "namespace": AUDIT_NAMESPACE}],
    }


def _release_secrets(namespace: str) -> dict[str, KubeObject]:
    """A Role + RoleBinding: read the Helm release Secrets of one namespace (RBAC cannot narrow
    a list to the sh.helm.release.v1 type, so the namespaces are few and chosen)."""
    return {
        "role.yaml": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": AUDIT_SECRETS_ROLE, "namespace": namespace},
            "rules": read_rules(AUDIT_RELEASE_READS),
        },
        "rolebinding.yaml": _binding("RoleBinding", "Role", AUDIT_SECRETS_ROLE, namespace),
    }


BASES: dict[str, dict[str, KubeObject]] = {
    # The platform Package; its values are set by each cluster's patch. Cozystack created it, the
    # tool only adopts it: Flux must never delete it.
    COZYSTACK_BASE: {
        "platform-package.yaml": {
            "apiVersion": "cozystack.io/v1alpha1",
            "kind": "Package",
            "metadata": {
                "name": PLATFORM_PACKAGE,
                "annotations": dict(PRUNE_DISABLED),
            },
            "spec": {"components": {"platform": {"values": {}}}},
        }
    },
    # The bundle rejects variant container: it is reachable only as a standalone Package.
    COZYSTACK_GPU_OPERATOR_BASE: {
        "gpu-operator-package.yaml": {
            "apiVersion": "cozystack.io/v1alpha1",
            "kind": "Package",
            "metadata": {"name": GPU_OPERATOR},
            "spec": {"variant": "container"},
        }
    },
    FLUX_GPU_OPERATOR_BASE: {
        "namespace.yaml": {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": GPU_OPERATOR_NAMESPACE,
                # the operands (driver, vfio-manager, device plugins) run privileged
                "labels": {"pod-security.kubernetes.io/enforce": "privileged"},
            },
        },
        "helmrepository.yaml": _helm_repository(
            "nvidia", GPU_OPERATOR_NAMESPACE, GPU_OPERATOR_CHART_REPO
        ),
        "helmrelease.yaml": _helm_release(
            FLUX_GPU_OPERATOR_RELEASE, "gpu-operator", "v26.3.1", "nvidia"
        ),
    },
    # A partial KubeVirt object: server-side apply claims only the fields it carries.
    FLUX_KUBEVIRT_BASE: {
        "kubevirt.yaml": {
            "apiVersion": "kubevirt.io/v1",
            "kind": "KubeVirt",
            "metadata": {
                "name": KUBEVIRT_NAME,
                "namespace": KUBEVIRT_NAMESPACE,
                # The CR usually predates Flux (kubectl apply of KubeVirt's release): Merge keeps
                # kustomize-controller from taking over its kubectl-owned fields and pruning them.
                # prune: disabled: the tool merges into the CR, so Flux must never delete it.
                "annotations": {"kustomize.toolkit.fluxcd.io/ssa": "Merge", **PRUNE_DISABLED},
            },
            "spec": {
                "configuration": {"developerConfiguration": {"featureGates": ["HostDevices"]}}
            },
        }
    },
    FLUX_HAMI_BASE: {
        "helmrepository.yaml": _helm_repository(
            "hami-charts", FLUX_HAMI_RELEASE.namespace, "https://project-hami.github.io/HAMi"
        ),
        "helmrelease.yaml": _helm_release(
            FLUX_HAMI_RELEASE, "hami", HAMI_CHART_VERSION, "hami-charts"
        ),
    },
    # The nightly audit job; Secrets are readable only where a release the audit reads keeps its
    # release Secrets, one base per namespace.
    AUDIT_JOB_BASE: _audit_job(),
    AUDIT_ALERTS_BASE: {
        "prometheusrule.yaml": {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PrometheusRule",
            "metadata": {"name": AUDIT_NAME, "namespace": AUDIT_NAMESPACE},
            "spec": {"groups": [{"name": "gpu-gitops-audit", "rules": []}]},
        }
    },
    **{audit_secrets_base(ns): _release_secrets(ns) for ns in AUDIT_SECRET_NAMESPACES},
}
# HAMi schedules onto the GPU Operator's driver and toolkit: install it after them.
BASES[FLUX_HAMI_BASE]["helmrelease.yaml"]["spec"]["dependsOn"] = [
    {"name": FLUX_GPU_OPERATOR_RELEASE.name, "namespace": FLUX_GPU_OPERATOR_RELEASE.namespace}
]
