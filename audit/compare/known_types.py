"""What the auditor knows about the types it compares: list semantics, defaults, quantity paths,
server-populated and injected fields. Data, with the upstream source of each entry.

Paths are patterns (patterns.py): tuples of field names, `*` one segment (a map key or a list
item), `**` any number of segments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from kubedata.diff import ATOMIC, ListRule

from audit.compare.crd_tables import kind_table, known_kinds
from audit.compare.patterns import Pattern, compile_pattern

__all__ = [
    "ALWAYS_DROPPED_ANNOTATIONS",
    "DEFAULTS",
    "DURATION_PATHS",
    "EMPTY_MAP_IS_A_VALUE",
    "INJECTED_ANNOTATIONS",
    "INJECTED_LABELS",
    "LIST_RULES",
    "QUANTITY_PATHS",
    "SERVER_METADATA",
    "SERVER_POPULATED",
    "Default",
    "crd_defaults",
    "declared_empty_is_a_value",
    "is_injected",
    "list_rule",
    "server_populated",
]

# -- metadata ------------------------------------------------------------------------------------

SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "selfLink",
    "managedFields",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
"""Set by the API server on every object (ObjectMeta); never drift."""

ALWAYS_DROPPED_ANNOTATIONS = frozenset({"kubectl.kubernetes.io/last-applied-configuration"})
"""Client bookkeeping that can hold a whole object (Secret data included): never compared, never
printed. Flux strips it too (fluxcd/pkg ssa/manager_apply.go cleanupMetadata)."""

# Added to live objects by controllers and tools. Compared only when git declares them.
INJECTED_ANNOTATIONS = (
    "deployment.kubernetes.io/revision",  # Deployment controller
    "meta.helm.sh/release-name",  # Helm ownership (pkg/action/validate.go)
    "meta.helm.sh/release-namespace",
    "kustomize.toolkit.fluxcd.io/",  # kustomize-controller (checksum, reconcile...)
    "helm.toolkit.fluxcd.io/",  # helm-controller post-renderer
    "reconcile.fluxcd.io/",  # `flux reconcile` requestedAt / forceAt
    "cozystack.io/",  # Cozystack operator
    "cozyhr.cozystack.io/",  # Cozystack operator: values-files of generated HelmReleases
    "operator.cozystack.io/",
    "endpoints.kubernetes.io/last-change-trigger-time",
    "pv.kubernetes.io/",
    "volume.beta.kubernetes.io/",
    "volume.kubernetes.io/",
    "autoscaling.alpha.kubernetes.io/",
    "kubevirt.io/latest-observed-api-version",  # virt-operator on the KubeVirt CR
    "kubevirt.io/storage-observed-api-version",
    "prometheus-operator-validated",  # admission webhook stamp (helm-controller#643)
)
INJECTED_LABELS = (
    "app.kubernetes.io/managed-by",  # Helm sets it to "Helm" at install
    "kustomize.toolkit.fluxcd.io/",  # kustomize-controller origin labels
    "helm.toolkit.fluxcd.io/",  # helm-controller origin labels (postrender/build.go)
    "cozystack.io/",  # Cozystack operator: cozystack.io/package, cozystack.io/privileged
    "kubernetes.io/metadata.name",  # Namespace lifecycle admission
    "pod-template-hash",
    "controller-revision-hash",
    "controller-uid",
    "batch.kubernetes.io/",
)


def is_injected(key: str, table: tuple[str, ...]) -> bool:
    return any(key == t or (t.endswith("/") and key.startswith(t)) for t in table)


# -- lists ---------------------------------------------------------------------------------------


_MAP_NAME = ListRule(keys=("name",), atomic=False, ordered=False)
_SET = ListRule(keys=None, atomic=False, ordered=False)

# By field name, wherever it appears. Sources: Kubernetes core/v1 types.go (+listType markers),
# KubeVirt v1.8.4 CRD (kubevirt-operator.yaml, x-kubernetes-list-type), Flux CRDs (no markers:
# atomic), Cozystack chart values (Helm lists: replaced whole).
LIST_RULES: dict[str, ListRule | Callable[[list[Any]], ListRule]] = {
    "containers": _MAP_NAME,
    "initContainers": _MAP_NAME,
    "ephemeralContainers": _MAP_NAME,
    "env": _MAP_NAME,
    "volumes": _MAP_NAME,
    "imagePullSecrets": _MAP_NAME,
    "resourceClaims": _MAP_NAME,
    "volumeMounts": ListRule(keys=("mountPath",), atomic=False, ordered=False),
    "volumeDevices": ListRule(keys=("devicePath",), atomic=False, ordered=False),
    "hostAliases": ListRule(keys=("ip",), atomic=False, ordered=False),
    "conditions": ListRule(keys=("type",), atomic=False, ordered=False),
    "ownerReferences": ListRule(keys=("uid",), atomic=False, ordered=False),
    "finalizers": _SET,  # ObjectMeta.finalizers: +listType=set
    "topologySpreadConstraints": ListRule(
        keys=("topologyKey", "whenUnsatisfiable"), atomic=False, ordered=False
    ),
    # KubeVirt: permittedHostDevices lists are +listType=atomic (types.go L3446-3470); virt-handler
    # keys entries in a map by selector (device_controller.go L204-245), so order carries nothing.
    "pciHostDevices": ListRule(keys=("pciVendorSelector",), atomic=True, ordered=False),
    "mediatedDevices": ListRule(keys=("mdevNameSelector",), atomic=True, ordered=False),
    "usb": ListRule(keys=("resourceName",), atomic=True, ordered=False),
    # KubeVirt builds a set of gates (pkg/virt-config/feature-gates.go); the list is atomic.
    "featureGates": ListRule(keys=None, atomic=True, ordered=False),
    "disabledFeatureGates": ListRule(keys=None, atomic=True, ordered=False),
    "supportContainerResources": ListRule(keys=("type",), atomic=False, ordered=False),
    "ciphers": _SET,  # KubeVirt tlsConfiguration.ciphers: x-kubernetes-list-type: set
    # Cozystack platform values: the chart only asks `has` of these lists (templates/bundles).
    "enabledPackages": ListRule(keys=None, atomic=True, ordered=False),
    "disabledPackages": ListRule(keys=None, atomic=True, ordered=False),
}


def _ports(items: list[Any]) -> ListRule:
    """Container ports are keyed by containerPort+protocol, Service ports by port+protocol."""
    if items and all(isinstance(i, dict) and "containerPort" in i for i in items):
        keys: tuple[str, ...] = ("containerPort", "protocol")
    else:
        keys = ("port", "protocol")
    return ListRule(keys=keys, atomic=False, ordered=False, key_defaults=(("protocol", "TCP"),))


LIST_RULES["ports"] = _ports


def list_rule(
    name: str, before: list[Any], after: list[Any], served: ListRule | None = None
) -> ListRule:
    """The rule for a list named `name` (desired before, live after): LIST_RULES (written from
    the types' sources, with what order means to their controllers), else the `served` CRD's
    marker, else atomic and ordered (server-side apply's default for an unmarked list)."""
    rule = LIST_RULES.get(name) or served or ATOMIC
    if callable(rule):
        rule = rule(before or after)
    if rule.keys is not None:
        defaults = dict(rule.key_defaults)
        for item in (*before, *after):
            if not isinstance(item, dict) or any(
                k not in item and k not in defaults for k in rule.keys
            ):
                return ListRule(keys=None, atomic=True, ordered=rule.ordered)
    return rule


def declared_empty_is_a_value(field: str) -> bool:
    """Whether `field: []` in an applied object replaces the live list: so for an atomic list
    (server-side apply sets it whole), not for a keyed or set list, whose items are merged."""
    rule = LIST_RULES.get(field, ATOMIC)
    return not callable(rule) and rule.atomic


# -- server-populated fields ---------------------------------------------------------------------

_SP = compile_pattern
SERVER_POPULATED: dict[tuple[str, str], tuple[Pattern, ...]] = {
    # Compared only when git sets them (drift-anchors §4.2, per-kind server-populated fields).
    ("*", "*"): (_SP("metadata/ownerReferences"), _SP("metadata/finalizers")),
    ("", "Service"): tuple(
        _SP(p)
        for p in (
            "spec/clusterIP",
            "spec/clusterIPs",
            "spec/ipFamilies",
            "spec/ipFamilyPolicy",
            "spec/internalTrafficPolicy",
            "spec/sessionAffinity",
            "spec/ports/*/nodePort",
            "spec/ports/*/targetPort",
            "spec/healthCheckNodePort",
        )
    ),
    ("", "PersistentVolumeClaim"): (
        _SP("spec/volumeName"),
        _SP("spec/volumeMode"),
        _SP("spec/storageClassName"),
    ),
    ("", "ServiceAccount"): (_SP("secrets"),),
    ("", "Namespace"): (_SP("spec/finalizers"),),
    ("admissionregistration.k8s.io", "*"): (_SP("webhooks/*/clientConfig/caBundle"),),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): (
        _SP("spec/conversion/webhook/clientConfig/caBundle"),
    ),
}


def server_populated(group: str, kind: str) -> tuple[Pattern, ...]:
    """Paths of this kind that are compared only when git sets them."""
    out = [*SERVER_POPULATED[("*", "*")], *SERVER_POPULATED.get((group, kind), ())]
    out += SERVER_POPULATED.get((group, "*"), ())
    root = POD_TEMPLATE_ROOTS.get((group, kind))
    if root:
        # the API server mirrors serviceAccountName into the deprecated serviceAccount
        out.append(compile_pattern(f"{root}/serviceAccount"))
    return tuple(out)


# -- defaults ------------------------------------------------------------------------------------


class Default(NamedTuple):
    """A value the API server (or the controller reading the field) assumes when it is absent (a
    named tuple: hundreds are made at import, where a frozen dataclass costs start-up)."""

    path: Pattern
    value: Any
    source: str
    universal: bool = True
    """Every known version of the type defaults the field to this value, so normalize.py drops
    it on both sides. A default of some versions only (a field added, dropped or re-defaulted by
    an upgrade) is noise only where live has it, git does not declare it and no manager owns it:
    an old CRD's default stays in etcd after the CRD is upgraded (findings/collect.py)."""


def _d(path: str, value: Any, source: str, universal: bool = True) -> Default:
    return Default(compile_pattern(path), value, source, universal)


_CORE_DEFAULTS = "kubernetes pkg/apis/core/v1/defaults.go"
_APPS_DEFAULTS = "kubernetes pkg/apis/apps/v1/defaults.go"
_BATCH_DEFAULTS = "kubernetes pkg/apis/batch/v1/defaults.go"


def _pod_spec(root: str) -> tuple[Default, ...]:
    """SetDefaults_PodSpec / _Container / _Probe / _Volume, under a pod template at `root`."""
    out = [
        _d(f"{root}/dnsPolicy", "ClusterFirst", _CORE_DEFAULTS),
        _d(f"{root}/restartPolicy", "Always", _CORE_DEFAULTS),
        _d(f"{root}/schedulerName", "default-scheduler", _CORE_DEFAULTS),
        _d(f"{root}/terminationGracePeriodSeconds", 30, _CORE_DEFAULTS),
        _d(f"{root}/enableServiceLinks", True, _CORE_DEFAULTS),
        _d(f"{root}/securityContext", {}, _CORE_DEFAULTS),
    ]
    for box in ("containers", "initContainers"):
        c = f"{root}/{box}/*"
        out += [
            _d(f"{c}/terminationMessagePath", "/dev/termination-log", _CORE_DEFAULTS),
            _d(f"{c}/terminationMessagePolicy", "File", _CORE_DEFAULTS),
            _d(f"{c}/ports/*/protocol", "TCP", _CORE_DEFAULTS),
        ]
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            p = f"{c}/{probe}"
            out += [
                _d(f"{p}/timeoutSeconds", 1, _CORE_DEFAULTS),
                _d(f"{p}/periodSeconds", 10, _CORE_DEFAULTS),
                _d(f"{p}/successThreshold", 1, _CORE_DEFAULTS),
                _d(f"{p}/failureThreshold", 3, _CORE_DEFAULTS),
            ]
    for source in ("configMap", "secret", "projected", "downwardAPI"):
        out.append(_d(f"{root}/volumes/*/{source}/defaultMode", 420, _CORE_DEFAULTS))
    return tuple(out)


POD_TEMPLATE_ROOTS: dict[tuple[str, str], str] = {
    ("", "Pod"): "spec",
    ("apps", "Deployment"): "spec/template/spec",
    ("apps", "DaemonSet"): "spec/template/spec",
    ("apps", "StatefulSet"): "spec/template/spec",
    ("apps", "ReplicaSet"): "spec/template/spec",
    ("batch", "Job"): "spec/template/spec",
    ("batch", "CronJob"): "spec/jobTemplate/spec/template/spec",
}
"""Where a kind keeps its pod spec; imagePullPolicy is defaulted there from the image tag."""

# Defaults of the kinds with a CRD: generated, per release, from every released upstream CRD
# (crd_tables.json, gen_crd_tables.py); below, those no CRD declares.
_BOOL_OMITEMPTY = "(bool, omitempty: absent reads as false)"
_NOT_CRD: dict[tuple[str, str], tuple[Default, ...]] = {
    ("helm.toolkit.fluxcd.io", "HelmRelease"): (
        _d("spec/suspend", False, "helm-controller " + _BOOL_OMITEMPTY),
    ),
    ("kustomize.toolkit.fluxcd.io", "Kustomization"): (
        _d("spec/suspend", False, "kustomize-controller " + _BOOL_OMITEMPTY),
    ),
    **{
        ("source.toolkit.fluxcd.io", kind): (
            _d("spec/suspend", False, "source-controller " + _BOOL_OMITEMPTY),
        )
        for kind in ("GitRepository", "HelmRepository", "OCIRepository", "HelmChart", "Bucket")
    },
    # Package.spec.variant: "" means "default" (cozystack api/v1alpha1/package_types.go; the CRD
    # has no default, the operator resolves it: internal/operator/package_reconciler.go L147-173).
    ("cozystack.io", "Package"): (_d("spec/variant", "default", "cozystack package_types.go"),),
}


def crd_defaults(
    group: str, kind: str, candidates: frozenset[str] | None = None
) -> tuple[Default, ...]:
    """The CRD defaults of the kind in the `candidates` releases (None: every release in the
    tables), `universal` where every candidate has it; and the defaults no CRD declares."""
    out = list(_NOT_CRD.get((group, kind), ()))
    table = kind_table(group, kind)
    if table is not None:
        versions = table.versions if candidates is None else candidates & table.versions
        for entry, every in table.agreed_defaults(versions):
            source = f"{table.product} {table.span(entry.versions)} CRD {table.crd}"
            out.append(Default(entry.path, entry.value, source, every))
    return tuple(out)


DEFAULTS: dict[tuple[str, str], tuple[Default, ...]] = {
    ("", "Secret"): (_d("type", "Opaque", _CORE_DEFAULTS + " SetDefaults_Secret"),),
    ("", "Namespace"): (_d("spec/finalizers", ["kubernetes"], "namespace lifecycle controller"),),
    ("", "Service"): (
        _d("spec/type", "ClusterIP", _CORE_DEFAULTS),
        _d("spec/sessionAffinity", "None", _CORE_DEFAULTS),
        _d("spec/ports/*/protocol", "TCP", _CORE_DEFAULTS),
        _d("spec/internalTrafficPolicy", "Cluster", _CORE_DEFAULTS),
    ),
    ("apps", "Deployment"): (
        _d("spec/replicas", 1, _APPS_DEFAULTS),
        _d("spec/progressDeadlineSeconds", 600, _APPS_DEFAULTS),
        _d("spec/revisionHistoryLimit", 10, _APPS_DEFAULTS),
        _d("spec/strategy/type", "RollingUpdate", _APPS_DEFAULTS),
        _d("spec/strategy/rollingUpdate/maxSurge", "25%", _APPS_DEFAULTS),
        _d("spec/strategy/rollingUpdate/maxUnavailable", "25%", _APPS_DEFAULTS),
        *_pod_spec("spec/template/spec"),
    ),
    ("apps", "DaemonSet"): (
        _d("spec/revisionHistoryLimit", 10, _APPS_DEFAULTS),
        _d("spec/updateStrategy/type", "RollingUpdate", _APPS_DEFAULTS),
        _d("spec/updateStrategy/rollingUpdate/maxUnavailable", 1, _APPS_DEFAULTS),
        _d("spec/updateStrategy/rollingUpdate/maxSurge", 0, _APPS_DEFAULTS),
        *_pod_spec("spec/template/spec"),
    ),
    ("apps", "StatefulSet"): (
        _d("spec/replicas", 1, _APPS_DEFAULTS),
        _d("spec/podManagementPolicy", "OrderedReady", _APPS_DEFAULTS),
        _d("spec/revisionHistoryLimit", 10, _APPS_DEFAULTS),
        _d("spec/updateStrategy/type", "RollingUpdate", _APPS_DEFAULTS),
        _d("spec/updateStrategy/rollingUpdate/partition", 0, _APPS_DEFAULTS),
        _d("spec/persistentVolumeClaimRetentionPolicy/whenDeleted", "Retain", _APPS_DEFAULTS),
        _d("spec/persistentVolumeClaimRetentionPolicy/whenScaled", "Retain", _APPS_DEFAULTS),
        *_pod_spec("spec/template/spec"),
    ),
    ("batch", "Job"): (
        _d("spec/backoffLimit", 6, _BATCH_DEFAULTS),
        _d("spec/completions", 1, _BATCH_DEFAULTS),
        _d("spec/parallelism", 1, _BATCH_DEFAULTS),
        _d("spec/completionMode", "NonIndexed", _BATCH_DEFAULTS),
        _d("spec/suspend", False, _BATCH_DEFAULTS),
        _d("spec/podReplacementPolicy", "TerminatingOrFailed", _BATCH_DEFAULTS),
        *_pod_spec("spec/template/spec"),
    ),
    ("batch", "CronJob"): (
        _d("spec/concurrencyPolicy", "Allow", _BATCH_DEFAULTS),
        _d("spec/successfulJobsHistoryLimit", 3, _BATCH_DEFAULTS),
        _d("spec/failedJobsHistoryLimit", 1, _BATCH_DEFAULTS),
        _d("spec/suspend", False, _BATCH_DEFAULTS),
        *_pod_spec("spec/jobTemplate/spec/template/spec"),
    ),
    ("", "Pod"): _pod_spec("spec"),
    **{k: crd_defaults(*k) for k in sorted({*known_kinds(), *_NOT_CRD})},
}

# -- typed values --------------------------------------------------------------------------------

QUANTITY_PATHS: tuple[Pattern, ...] = tuple(
    compile_pattern(p)
    for p in (
        # core/v1 ResourceRequirements wherever a pod spec, a PVC or a CRD reusing it puts one
        # (Argo CD knownTypeFields core/Quantity; argo-cd#1615, #21135)
        "**/resources/requests/*",
        "**/resources/limits/*",
        "**/resources/claims/*/request",
        "**/emptyDir/sizeLimit",
        "spec/hard/*",  # ResourceQuota
        "spec/limits/*/max/*",  # LimitRange
        "spec/limits/*/min/*",
        "spec/limits/*/default/*",
        "spec/limits/*/defaultRequest/*",
        "spec/limits/*/maxLimitRequestRatio/*",
        "spec/capacity/*",  # PersistentVolume
        "**/domain/memory/guest",  # KubeVirt VMI spec
        "**/domain/memory/maxGuest",
        "**/domain/memory/hugepages/pageSize",
    )
)

DURATION_PATHS: dict[str, tuple[Pattern, ...]] = {
    # Flux durations (metav1.Duration strings): "10m", "600s" and "10m0s" are one interval.
    "helm.toolkit.fluxcd.io": tuple(
        compile_pattern(p) for p in ("spec/interval", "spec/timeout", "spec/*/timeout")
    ),
    "kustomize.toolkit.fluxcd.io": tuple(
        compile_pattern(p) for p in ("spec/interval", "spec/retryInterval", "spec/timeout")
    ),
    "source.toolkit.fluxcd.io": tuple(
        compile_pattern(p) for p in ("spec/interval", "spec/timeout")
    ),
}

EMPTY_MAP_IS_A_VALUE = frozenset({"kubevirt.io"})
"""Groups whose empty objects are flags (`disableSerialConsoleLog: {}`, `certificateRotateStrategy:
{}` in KubeVirt's Go types are pointers to empty structs): an empty map there is not "absent"."""
