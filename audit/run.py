"""The audit of one cluster: desired state and live state -> classified, explained findings.

Three comparisons (DESIGN §6):
1. `git`: every object of the desired (rendered) state with the live one; applied by Flux's
   kustomize-controller.
2. `release`: the GPU objects (KubeVirt, ClusterPolicy, Package) of the newest deployed revision of
   each Helm release with the live ones; applied by helm-controller. On Cozystack this is where
   the KubeVirt CR and the ClusterPolicy are checked, since git holds only the platform Package.
3. `wiring`: the GPU wiring the profile implies (wiring.py) with the live KubeVirt CR and Packages,
   live VirtualMachines' GPU device names with the live permittedHostDevices, and Node workload
   labels with spec.nodes.
Then `inventory`: orphans (Packages `helm.sh/resource-policy: keep` left behind, objects pruned from
git but not from the cluster), unmanaged GPU objects (hand-applied Packages, HelmReleases,
KubeVirt CRs, ClusterPolicies), and suspended Flux objects.

Each finding is attributed (attribute.py), classified (classify.py), given its profile source and
fix (provenance.py) and redacted (redact.py) when it is made. A finding reported by two
comparisons with the same values is kept once. Reads that failed make the result incomplete.
I/O happens only through `Live` (and `desired.py`/`artifact.py` for git and the artifact).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import git
import httpx

from audit.artifact import artifact_of, download_artifact, read_tarball
from audit.attribute import ManagedEntry, attribute, managed_entries, owned_fields
from audit.classify import Controller, IgnoreRule, classify, is_gpu_object, severity_of
from audit.compare import Change, compare_objects
from audit.desired import Desired, desired_from_files, desired_from_repo, parse_revision
from audit.errors import AuditError, ReleaseDecodeError
from audit.findings import (
    SEVERITIES,
    Comparison,
    Finding,
    FindingType,
    ObjectRef,
    pointer,
    show_segments,
)
from audit.helm_release import HelmRelease, decode_release, newest_deployed
from audit.kube_api import paused_gc
from audit.live import Live
from audit.provenance import WORKLOAD_LABEL, ProfileContext, explain
from audit.redact import scrub
from audit.wiring import (
    ExpectedWiring,
    cozystack_wiring,
    flux_wiring,
    permitted_resources,
    platform_package,
)
from renderer.audit_rbac import helm_secret_namespaces
from renderer.cozystack import GPU_OPERATOR
from renderer.objects import KubeObject, ObjectKey, key_of

__all__ = [
    "COZYSTACK_RELEASES",
    "FLUX_KINDS",
    "AuditResult",
    "ReleaseInfo",
    "audit",
    "audit_cluster",
    "find_kustomization",
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
RELEASE_KINDS = frozenset({KUBEVIRT, CLUSTER_POLICY, PACKAGE})
"""Kinds compared with release manifests: the GPU objects Helm renders (not every chart object)."""
COZYSTACK_RELEASES = ("cozy-system", "cozy-kubevirt", "cozy-gpu-operator")
"""Where Cozystack keeps the release Secrets of cozystack-platform, kubevirt and gpu-operator."""
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
_DEFAULT_WORKLOAD = {"passthrough": "vm-passthrough", "vgpu": "vm-vgpu"}
_SEVERITY_ORDER = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass(frozen=True)
class ReleaseInfo:
    release: str
    revision: int
    chart: str
    apply_method: str
    values_digest: str

    def to_json(self) -> dict[str, Any]:
        return {
            "release": self.release,
            "revision": self.revision,
            "chart": self.chart,
            "applyMethod": self.apply_method,
            "valuesDigest": self.values_digest,
        }


@dataclass
class AuditResult:
    cluster: str
    desired_source: str
    desired_revision: str
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Reads that failed: the audit is incomplete."""
    releases: list[ReleaseInfo] = field(default_factory=list)
    timestamp: float = 0.0

    @property
    def complete(self) -> bool:
        return not self.problems

    @property
    def drift(self) -> bool:
        return any(f.severity != "info" for f in self.findings)

    @property
    def exit_code(self) -> int:
        """2 incomplete (never clean), 1 drift, 0 clean."""
        if not self.complete:
            return 2
        return 1 if self.drift else 0


# -- Flux objects --------------------------------------------------------------------------------


def _meta(obj: KubeObject) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _ns_name(obj: KubeObject) -> str:
    meta = _meta(obj)
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def find_kustomization(live: Live, cluster: str) -> KubeObject | None:
    """The Flux Kustomization applying `./<cluster>` of a GitRepository (the rendered branch)."""
    candidates = []
    for ks in live.list(*KUSTOMIZATION):
        spec = ks.get("spec") or {}
        path = str(spec.get("path") or "").strip().removeprefix("./").strip("/")
        source = spec.get("sourceRef") or {}
        if path == cluster and source.get("kind", "GitRepository") == "GitRepository":
            candidates.append(ks)
    candidates.sort(key=lambda k: (cluster not in str(_meta(k).get("name", "")), _ns_name(k)))
    return candidates[0] if candidates else None


def _ignore_rules(rules: Any) -> tuple[IgnoreRule, ...]:
    out = []
    for rule in rules if isinstance(rules, list) else ():
        if isinstance(rule, dict) and isinstance(rule.get("paths"), list):
            target = rule.get("target") if isinstance(rule.get("target"), dict) else {}
            out.append(IgnoreRule(tuple(str(p) for p in rule["paths"]), dict(target or {})))
    return tuple(out)


def _suspended(obj: KubeObject | None) -> bool:
    return bool(((obj or {}).get("spec") or {}).get("suspend"))


def _release_of(hr: KubeObject) -> tuple[str, str]:
    """(storage namespace, release name) of a HelmRelease, as helm-controller names them."""
    spec, status, meta = hr.get("spec") or {}, hr.get("status") or {}, _meta(hr)
    history = status.get("history") or []
    if history and isinstance(history[0], dict) and history[0].get("name"):
        return str(history[0].get("namespace") or meta.get("namespace", "")), str(
            history[0]["name"]
        )
    name = spec.get("releaseName") or (
        f"{spec['targetNamespace']}-{meta.get('name', '')}"
        if spec.get("targetNamespace")
        else str(meta.get("name", ""))
    )
    storage = (
        status.get("storageNamespace") or spec.get("storageNamespace") or meta.get("namespace", "")
    )
    return str(storage), str(name)


def _operator_generated(hr: KubeObject) -> bool:
    meta = _meta(hr)
    owners = meta.get("ownerReferences") or []
    return any(isinstance(o, dict) and o.get("kind") == "Package" for o in owners) or bool(
        (meta.get("labels") or {}).get("cozystack.io/package")
    )


# -- the audit -----------------------------------------------------------------------------------


class _Audit:
    def __init__(self, desired: Desired, live: Live, kustomization: KubeObject | None) -> None:
        self.desired = desired
        self.live = live
        self.cluster = desired.cluster
        self.findings: list[Finding] = []
        self.notes: list[str] = list(desired.notes)
        self.reordered: list[str] = []
        self.defaults_ignored = 0
        self.unattributable: set[str] = set()
        """Objects whose drift cannot be attributed: they carry no managedFields."""
        self.kustomization = kustomization
        self.platform_obj = platform_package(desired.objects)
        profile = desired.profile
        platform = (
            profile.profile.spec.platform.type
            if profile
            else "cozystack"
            if self.platform_obj is not None
            else "flux"
        )
        self.ctx = ProfileContext(self.cluster, platform, profile)
        self.releases: dict[tuple[str, str], HelmRelease] = {}
        self.release_controllers: dict[tuple[str, str], Controller] = {}
        self.compared: dict[ObjectKey, set[str]] = {}
        """Pointers of each object compared by the git or release comparison, per object."""
        self.expected = ExpectedWiring()

    # -- building findings ------------------------------------------------------------------

    def finish(
        self,
        finding: Finding,
        controller: Controller,
        owners: Iterable[ManagedEntry],
        live_obj: KubeObject | None,
        field_path: tuple[str, ...],
        context: str = "",
    ) -> Finding:
        owners = list(owners)
        revert, release, missed, why = classify(finding, controller, owners, live_obj)
        finding.revert, finding.revert_release = revert, release
        finding.missed_by_drift_detection = missed
        finding.severity = severity_of(finding, field_path)
        finding.source, finding.fix = explain(finding, self.ctx, field_path)
        ref = finding.object
        finding.desired, hit_d = scrub(ref.group, ref.kind, field_path, finding.desired)
        finding.live, hit_l = scrub(ref.group, ref.kind, field_path, finding.live)
        finding.redacted = hit_d or hit_l
        if finding.redacted:
            finding.details = []
        finding.message = _message(finding, context, why)
        return finding

    def from_change(
        self,
        change: Change,
        live_obj: KubeObject,
        controller: Controller,
        comparison: Comparison,
        context: str = "",
    ) -> Finding | None:
        if change.kind == "reordered":
            self.reordered.append(f"{ObjectRef.of(live_obj)} {change.pointer}")
            return None
        entries = managed_entries(live_obj)
        if not entries:
            self.unattributable.add(str(ObjectRef.of(live_obj)))
        attribution = attribute(entries, change.segments, subtree=change.kind == "added")
        if change.kind == "added" and not attribution.attributed and attribution.has_managed_fields:
            # live-only, and no manager ever wrote it: the API server's defaulting did
            self.defaults_ignored += 1
            return None
        finding = Finding(
            type=change.kind,
            object=ObjectRef.of(live_obj),
            path=change.pointer,
            segments=change.segments,
            desired=change.desired,
            live=change.live,
            comparison=comparison,
            managers=[e.public for e in attribution.managers],
            attributed=attribution.attributed,
            details=list(change.details),
        )
        owners = attribution.managers
        return self.finish(finding, controller, owners, live_obj, change.field_path, context)

    def add(self, finding: Finding | None) -> None:
        if finding is not None:
            self.findings.append(finding)

    # -- controllers ------------------------------------------------------------------------

    def git_controller(self) -> Controller:
        ks = self.kustomization
        if ks is None:
            return Controller("kustomization", assumed=True)
        spec = ks.get("spec") or {}
        return Controller(
            "kustomization",
            name=_ns_name(ks),
            suspended=bool(spec.get("suspend")),
            ignore=_ignore_rules(spec.get("ignore")),
        )

    def helm_controllers(self) -> None:
        for hr in self.live.list(*HELM_RELEASE):
            where = _release_of(hr)
            spec = hr.get("spec") or {}
            drift = spec.get("driftDetection") or {}
            self.release_controllers[where] = Controller(
                "helm-release",
                name=_ns_name(hr),
                suspended=bool(spec.get("suspend")),
                drift_mode=str(drift.get("mode") or "disabled"),
                operator_generated=_operator_generated(hr),
                release=f"{where[0]}/{where[1]}",
                ignore=_ignore_rules(drift.get("ignore")),
            )

    # -- 1. git ------------------------------------------------------------------------------

    def compare_git(self) -> None:
        controller = self.git_controller()
        if controller.assumed:
            self.notes.append(
                f"no Flux Kustomization applies ./{self.cluster}: git findings are classified "
                "as kustomize-controller would treat them"
            )
        self.live.prefetch((self.key(o) for o in self.desired.objects), self.applied_by())
        for obj in self.desired.objects:
            key = self.key(obj)
            live_obj = self.live.get(key)
            if live_obj is None:
                if key in self.live.unread:
                    continue
                self.add(self.missing(obj, controller, "git"))
                continue
            self.compared.setdefault(key_of(live_obj), set())
            for change in compare_objects(obj, live_obj):
                self.compared[key_of(live_obj)].add(change.pointer)
                self.add(self.from_change(change, live_obj, controller, "git"))

    def applied_by(self) -> str | None:
        """The label selector of what the Kustomization applied (kustomize-controller labels every
        object it applies with its name and namespace)."""
        if self.kustomization is None:
            return None
        meta = _meta(self.kustomization)
        return (
            f"kustomize.toolkit.fluxcd.io/name={meta.get('name', '')},"
            f"kustomize.toolkit.fluxcd.io/namespace={meta.get('namespace', '')}"
        )

    def key(self, obj: KubeObject) -> ObjectKey:
        key = key_of(obj)
        if (key.group, key.kind) in CLUSTER_SCOPED:
            return key._replace(namespace="")
        return key

    def missing(self, obj: KubeObject, controller: Controller, comparison: Comparison) -> Finding:
        finding = Finding(
            type="missing",
            object=ObjectRef.of(obj),
            comparison=comparison,
            attributed=False,
        )
        return self.finish(finding, controller, (), None, ())

    # -- 2. releases -------------------------------------------------------------------------

    def release_namespaces(self) -> list[str]:
        """Where release Secrets are read: exactly where the audit job's RBAC grants it.

        With the profile at hand that is renderer.audit_rbac's own answer; in a cluster (no
        profile in Flux's artifact) the same answer is read off the desired platform Packages.
        """
        if self.ctx.profile is not None:
            return helm_secret_namespaces(self.ctx.profile.profile.spec)
        if self.ctx.platform != "cozystack":
            return []
        values = ((self.platform_obj or {}).get("spec") or {}).get("components") or {}
        bundles = ((values.get("platform") or {}).get("values") or {}).get("bundles") or {}
        gpu_on = GPU_OPERATOR in (bundles.get("enabledPackages") or []) and (
            GPU_OPERATOR not in (bundles.get("disabledPackages") or [])
        )
        standalone = ObjectKey("cozystack.io", "Package", "", GPU_OPERATOR) in {
            key_of(o) for o in self.desired.objects
        }
        system, kubevirt, gpu_operator = COZYSTACK_RELEASES
        return [
            system,
            *([kubevirt] if gpu_on else []),
            *([gpu_operator] if gpu_on or standalone else []),
        ]

    def load_releases(self) -> None:
        namespaces = set(self.release_namespaces())
        in_git = {k for k in map(key_of, self.desired.objects) if (k.group, k.kind) == HELM_RELEASE}
        for (storage, _), controller in self.release_controllers.items():
            name = controller.name.rpartition("/")[2]
            if (
                is_gpu_object(*HELM_RELEASE, name)
                or ObjectKey(*HELM_RELEASE, *controller.name.split("/", 1)) in in_git
            ):
                namespaces.add(storage)
        secrets: list[KubeObject] = []
        for ns in sorted(namespaces):
            secrets += self.live.list("", "Secret", ns, "owner=helm")
        for secret in newest_deployed(secrets):
            try:
                release = decode_release(secret)
            except ReleaseDecodeError as exc:
                self.live.problems.append(str(exc))
                continue
            self.releases[(release.namespace, release.name)] = release
        if self.ctx.platform == "cozystack":
            for where in (("cozy-system", "cozystack-platform"), ("cozy-kubevirt", "kubevirt")):
                if where not in self.releases:
                    self.notes.append(
                        f"no deployed release {where[0]}/{where[1]} was found: its objects were "
                        "compared with the profile only"
                        + (
                            "; Packages left by helm.sh/resource-policy: keep cannot be told"
                            if where[1] == "cozystack-platform"
                            else ""
                        )
                    )

    def compare_releases(self) -> None:
        for where, release in sorted(self.releases.items()):
            controller = self.release_controllers.get(where) or Controller(
                "helm-release", assumed=True, release=f"{where[0]}/{where[1]}"
            )
            if controller.assumed:
                self.notes.append(
                    f"release {where[0]}/{where[1]} has no HelmRelease: its drift is classified "
                    "unknown"
                )
            for obj in release.objects:
                key = key_of(obj)
                if (key.group, key.kind) not in RELEASE_KINDS:
                    continue
                if (key.group, key.kind) not in CLUSTER_SCOPED and not key.namespace:
                    obj = {**obj, "metadata": {**_meta(obj), "namespace": release.namespace}}
                key = self.key(obj)
                expected = self.expected_object(key)
                render_changes = frozenset(
                    c.pointer
                    for c in (
                        compare_objects(expected, obj, self.expected.scopes.get(key))
                        if expected is not None
                        else ()
                    )
                )
                ctrl = Controller(
                    controller.kind,
                    name=controller.name,
                    suspended=controller.suspended,
                    drift_mode=controller.drift_mode,
                    operator_generated=controller.operator_generated,
                    apply_method=release.apply_method,
                    release=controller.release,
                    ignore=controller.ignore,
                    next_render_changes=render_changes,
                    assumed=controller.assumed,
                )
                live_obj = self.live.get(key)
                if live_obj is None:
                    if key not in self.live.unread:
                        self.add(self.missing(obj, ctrl, "release"))
                    continue
                self.compared.setdefault(key, set())
                context = (
                    f"Release {release.namespace}/{release.name} revision {release.revision}, "
                    f"applied {release.apply_method}: "
                )
                for change in compare_objects(obj, live_obj):
                    self.compared[key].add(change.pointer)
                    self.add(self.from_change(change, live_obj, ctrl, "release", context))

    # -- 3. wiring ---------------------------------------------------------------------------

    def expect_wiring(self) -> None:
        profile = self.desired.profile
        if self.platform_obj is not None:
            live_platform = self.live.get(self.key(self.platform_obj))
            version = profile.profile.spec.platform.version if profile else None
            if not version:
                version = "1.6"
                self.notes.append(
                    'Cozystack version unknown (no profile): wiring predicted as "1.6"'
                )
            self.expected = cozystack_wiring(self.platform_obj, live_platform, version)
        elif profile is not None and profile.profile.spec.platform.type == "flux":
            self.expected = flux_wiring(profile.profile.spec)
        elif profile is None:
            self.notes.append("no profile: the GPU wiring and Node labels were not checked")
        self.notes += self.expected.notes

    def expected_object(self, key: ObjectKey) -> KubeObject | None:
        return next((o for o in self.expected.objects if self.key(o) == key), None)

    def compare_wiring(self) -> None:
        for obj in self.expected.objects:
            key = self.key(obj)
            controller = self.wiring_controller(key)
            live_obj = self.live.get(key)
            if live_obj is None:
                if key not in self.live.unread:
                    self.add(self.missing(obj, controller, "wiring"))
                continue
            scope = self.expected.scopes.get(key)
            for change in compare_objects(obj, live_obj, scope):
                finding = self.from_change(change, live_obj, controller, "wiring")
                if finding is None:
                    continue
                seen = self.compared.get(key)
                if seen is not None and change.pointer not in seen:
                    self.pending(finding)
                self.add(finding)

    def wiring_controller(self, key: ObjectKey) -> Controller:
        if self.ctx.platform == "flux":
            return self.git_controller()
        release = (
            ("cozy-kubevirt", "kubevirt")
            if key.kind == "KubeVirt"
            else (
                "cozy-system",
                "cozystack-platform",
            )
        )
        found = self.releases.get(release)
        controller = self.release_controllers.get(release) or Controller(
            "helm-release", assumed=True, release=f"{release[0]}/{release[1]}"
        )
        if found is not None:
            controller = Controller(
                controller.kind,
                name=controller.name,
                suspended=controller.suspended,
                drift_mode=controller.drift_mode,
                operator_generated=controller.operator_generated,
                apply_method=found.apply_method,
                release=controller.release,
                ignore=controller.ignore,
                assumed=controller.assumed,
            )
        return controller

    def pending(self, finding: Finding) -> None:
        """Live matches what git or the release renders: the profile's change is not out yet."""
        if self.ctx.platform == "flux":
            finding.revert, finding.revert_release = "never", None
            finding.missed_by_drift_detection = False
            finding.message = (
                f"{show_segments(finding.segments)}: the profile implies a different value than "
                "the rendered state Flux applies; nothing changes the cluster until the profile "
                "is published (gpu-gitops publish)"
            )
            return
        release = (
            "cozy-kubevirt/kubevirt"
            if finding.object.kind == "KubeVirt"
            else ("cozy-system/cozystack-platform")
        )
        finding.revert, finding.revert_release = "next-upgrade", release
        finding.missed_by_drift_detection = False
        finding.message = (
            f"{show_segments(finding.segments)}: live is what the current release renders, but "
            f"the profile implies another value; it changes at the next upgrade of {release} "
            "once Flux has applied the platform Package"
        )

    def check_vms(self) -> None:
        kv_key = self.expected.kubevirt
        kubevirt = self.live.get(kv_key) if kv_key else None
        if kubevirt is None:
            found = self.live.list(*KUBEVIRT)
            kubevirt = found[0] if len(found) == 1 else None
        if kubevirt is None:
            return
        config = (kubevirt.get("spec") or {}).get("configuration") or {}
        permitted = permitted_resources(config.get("permittedHostDevices"))
        vms = self.live.list(*VIRTUAL_MACHINE)
        uses: dict[str, list[str]] = {}
        for vm in vms:
            for ptr, name in _gpu_devices(vm):
                uses.setdefault(name, []).append(_ns_name(vm))
                if permitted is None or name in permitted:
                    continue
                self.add(self.unpermitted(vm, ptr, name, kubevirt))
        if permitted is None and vms:
            self.notes.append(
                f"{ObjectRef.of(kubevirt)} has no permittedHostDevices: virt-controller checks no "
                "GPU device names"
            )
        # VMs that depend on a drifted device (a device permitted live but not in git/release)
        for finding in self.findings:
            if finding.object.key != key_of(kubevirt) or "permittedHostDevices" not in finding.path:
                continue
            hand_added = _resource_names(finding.live) - _resource_names(finding.desired)
            dependents = sorted({vm for name in hand_added for vm in uses.get(name, [])})
            if dependents:
                finding.vms = dependents
                when = (
                    f"after the next upgrade of {finding.revert_release}"
                    if finding.revert == "next-upgrade"
                    else "at the next reconcile"
                    if finding.revert == "next-reconcile"
                    else "if the edit is ever reverted"
                )
                finding.message += (
                    f" {len(dependents)} VirtualMachine(s) use a device only this edit permits "
                    f"and will not start {when}: {', '.join(dependents)}."
                )

    def unpermitted(
        self, vm: KubeObject, ptr: tuple[str | int, ...], name: str, kubevirt: KubeObject
    ) -> Finding:
        planned = self.expected.permitted is not None and name in self.expected.permitted
        finding = Finding(
            type="missing",
            object=ObjectRef.of(vm),
            path=pointer(ptr),
            segments=tuple(ptr),
            live=name,
            comparison="wiring",
            attributed=False,
        )
        if planned:
            controller = self.wiring_controller(self.expected.kubevirt or key_of(kubevirt))
        else:
            controller = Controller("none")
        self.finish(finding, controller, (), vm, ("spec", "template", "deviceName"))
        finding.severity = "high"
        finding.revert = (
            "next-upgrade"
            if planned and self.ctx.platform == "cozystack"
            else ("next-reconcile" if planned else "never")
        )
        finding.revert_release = (
            "cozy-kubevirt/kubevirt" if finding.revert == "next-upgrade" else None
        )
        finding.message = (
            f"asks for GPU {name}, which no permittedHostDevices entry of {ObjectRef.of(kubevirt)} "
            "names: virt-controller refuses to start it"
            + (" until the profile's devices are rolled out" if planned else "")
        )
        return finding

    def check_nodes(self) -> None:
        profile = self.desired.profile
        if profile is None:
            return
        spec = profile.profile.spec
        if not spec.nodes:
            return
        if spec.variant not in _DEFAULT_WORKLOAD:
            self.notes.append(
                f"spec.nodes not checked: sandbox workloads are off on variant {spec.variant}"
            )
            return
        for node, workload in sorted(spec.nodes.items()):
            key = ObjectKey("", "Node", "", node)
            live_node = self.live.get(key)
            if live_node is None:
                if key not in self.live.unread:
                    self.notes.append(f"node {node} of spec.nodes does not exist")
                continue
            labels = _meta(live_node).get("labels") or {}
            label = labels.get(WORKLOAD_LABEL)
            if label == workload:
                continue
            segments = ("metadata", "labels", WORKLOAD_LABEL)
            attribution = attribute(managed_entries(live_node), segments)
            finding = Finding(
                type="removed" if label is None else "modified",
                object=ObjectRef.of(live_node),
                path=pointer(segments),
                segments=segments,
                desired=workload,
                live=label,
                comparison="wiring",
                managers=[e.public for e in attribution.managers],
                attributed=attribution.attributed,
            )
            self.finish(finding, Controller("none"), attribution.managers, live_node, segments)
            default = label is None and workload == _DEFAULT_WORKLOAD[spec.variant]
            finding.severity = "low" if default else "medium"
            finding.message = (
                f"GPU workload label is {label!r}, the profile says {workload!r}"
                if label is not None
                else f"no GPU workload label; the profile says {workload!r}"
                + (
                    " (the operator's default here, so only the label is missing)"
                    if default
                    else ""
                )
            ) + "; nodes are not in git, so nothing reverts it"
            self.add(finding)

    # -- inventory ---------------------------------------------------------------------------

    def inventory(self) -> None:
        desired_keys = {self.key(o) for o in self.desired.objects}
        inventories = self.inventory_ids()
        ours = _ns_name(self.kustomization) if self.kustomization else None
        for kind in (PACKAGE, HELM_RELEASE, KUBEVIRT, CLUSTER_POLICY):
            for obj in self.live.list(*kind):
                key = key_of(obj)
                if key in desired_keys:
                    continue
                verdict = self.ownership(obj, key, inventories, ours)
                if verdict is None:
                    continue
                ftype, why = verdict
                finding = Finding(
                    type=ftype,
                    object=ObjectRef.of(obj),
                    comparison="inventory",
                    attributed=False,
                )
                owners = managed_entries(obj)
                finding.managers = [e.public for e in owners if not e.subresource]
                self.finish(finding, Controller("none"), owners, obj, ())
                finding.message = why
                self.add(finding)
        for kind in FLUX_KINDS:
            for obj in self.live.list(*kind):
                if _suspended(obj):
                    self.add(self.suspended(obj))
        for hr in self.live.list(*HELM_RELEASE):
            if _operator_generated(hr) and is_gpu_object(*HELM_RELEASE, str(_meta(hr).get("name"))):
                self.hand_edited_spec(hr)

    def hand_edited_spec(self, hr: KubeObject) -> None:
        """kubectl edits of an operator-generated HelmRelease spec: the operator rewrites them."""
        for entry in managed_entries(hr):
            if entry.subresource or not entry.manager.startswith("kubectl"):
                continue
            for path in owned_fields(entry.fields):
                if path[:1] != ("spec",) or path == ("spec", "suspend"):
                    continue
                live_value: Any = hr
                for part in path:
                    live_value = live_value.get(part) if isinstance(live_value, dict) else None
                finding = Finding(
                    type="modified",
                    object=ObjectRef.of(hr),
                    path=pointer(path),
                    segments=path,
                    live=live_value,
                    comparison="inventory",
                    managers=[entry.public],
                )
                controller = Controller("operator", name="cozystack-operator")
                self.add(self.finish(finding, controller, [entry], hr, path))
                finding.message = (
                    f"{show_segments(path)} of an operator-generated HelmRelease was edited by "
                    f"{entry.public}; the Cozystack operator rewrites the spec from its Package at "
                    "its next reconcile (transient): change the Package, or the profile, instead"
                )

    def inventory_ids(self) -> set[str]:
        ids: set[str] = set()
        for ks in self.live.list(*KUSTOMIZATION):
            for entry in ((ks.get("status") or {}).get("inventory") or {}).get("entries") or ():
                if isinstance(entry, dict) and entry.get("id"):
                    ids.add(str(entry["id"]))
        return ids

    def ownership(
        self, obj: KubeObject, key: ObjectKey, inventories: set[str], ours: str | None
    ) -> tuple[FindingType, str] | None:
        """None when something owns the object, else (finding type, explanation)."""
        meta = _meta(obj)
        annotations = meta.get("annotations") or {}
        labels = meta.get("labels") or {}
        release_name = annotations.get("meta.helm.sh/release-name")
        if release_name:
            where = (str(annotations.get("meta.helm.sh/release-namespace", "")), str(release_name))
            release = self.releases.get(where)
            if release is None:
                return None  # a release this audit did not read: assume it owns the object
            if any(self.key(o) == key for o in _with_namespace(release)):
                return None
            keep = annotations.get("helm.sh/resource-policy") == "keep"
            return "orphan", (
                f"left behind by release {where[0]}/{where[1]}"
                + (
                    " (helm.sh/resource-policy: keep): its newest revision no longer renders it, "
                    "and Helm never deletes a kept object"
                    if keep
                    else ": its newest revision no longer renders it"
                )
            )
        if meta.get("ownerReferences"):
            return None
        inventory_id = f"{key.namespace}_{key.name}_{key.group}_{key.kind}"
        ks_name = labels.get("kustomize.toolkit.fluxcd.io/name")
        if ks_name:
            ks = f"{labels.get('kustomize.toolkit.fluxcd.io/namespace', '')}/{ks_name}"
            if ks == ours and inventory_id not in inventories:
                return "orphan", (
                    f"labelled as applied by Kustomization {ks} but no longer in git or its "
                    "inventory: removed from git and not pruned"
                )
            return None
        if inventory_id in inventories:
            return None
        if key.kind == "HelmRelease" and any("cozystack.io" in k for k in labels):
            return None  # Cozystack's application API makes these
        return "unmanaged", (
            "applied by hand: no git render, Helm release or Flux inventory owns it, so nothing "
            "reconciles or prunes it"
        )

    def suspended(self, obj: KubeObject) -> Finding:
        segments = ("spec", "suspend")
        attribution = attribute(managed_entries(obj), segments)
        finding = Finding(
            type="suspended",
            object=ObjectRef.of(obj),
            path="/spec/suspend",
            segments=segments,
            desired=None,
            live=True,
            comparison="inventory",
            managers=[e.public for e in attribution.managers],
            attributed=attribution.attributed,
        )
        self.finish(finding, Controller("none"), attribution.managers, obj, segments)
        kind = str(obj.get("kind", "")).lower()
        meta = _meta(obj)
        finding.fix = f"flux resume {kind} -n {meta.get('namespace', '')} {meta.get('name', '')}"
        finding.message = (
            f"suspended: {obj.get('kind')} {_ns_name(obj)} applies and reverts nothing until it "
            "is resumed"
        )
        if obj.get("kind") == "HelmRelease":
            finding.message += "; hand edits of its objects survive even its upgrades meanwhile"
        return finding

    # -- result ------------------------------------------------------------------------------

    def run(self) -> tuple[list[Finding], list[str]]:
        self.helm_controllers()
        self.expect_wiring()
        self.load_releases()
        self.compare_releases()
        self.compare_git()
        self.compare_wiring()
        self.check_vms()
        self.check_nodes()
        self.inventory()
        reordered = list(dict.fromkeys(self.reordered))
        if reordered:
            self.notes.append(
                f"{len(reordered)} list(s) only reordered (order carries no meaning there, "
                f"not drift): {'; '.join(reordered)}"
            )
        if self.unattributable:
            self.notes.append(
                f"{len(self.unattributable)} drifted object(s) carry no managedFields, so who "
                f"changed them is unknown ({', '.join(sorted(self.unattributable))}); dump "
                "snapshots with kubectl get -o yaml --show-managed-fields"
            )
        if self.defaults_ignored:
            self.notes.append(
                f"{self.defaults_ignored} live-only field(s) no manager wrote (API defaults) "
                "were not reported"
            )
        return _dedup(self.findings), list(dict.fromkeys(self.notes))


def _with_namespace(release: HelmRelease) -> list[KubeObject]:
    out = []
    for obj in release.objects:
        key = key_of(obj)
        if (key.group, key.kind) not in CLUSTER_SCOPED and not key.namespace:
            obj = {**obj, "metadata": {**_meta(obj), "namespace": release.namespace}}
        out.append(obj)
    return out


def _gpu_devices(vm: KubeObject) -> list[tuple[tuple[str | int, ...], str]]:
    """(pointer parts, deviceName) of a VM's GPUs and host devices."""
    out = []
    base: tuple[str | int, ...] = ("spec", "template", "spec", "domain", "devices")
    devices = (
        (((vm.get("spec") or {}).get("template") or {}).get("spec") or {}).get("domain") or {}
    ).get("devices") or {}
    for list_name in ("gpus", "hostDevices"):
        for index, device in enumerate(devices.get(list_name) or ()):
            if isinstance(device, dict) and device.get("deviceName"):
                out.append(((*base, list_name, index, "deviceName"), str(device["deviceName"])))
    return out


def _resource_names(value: Any) -> set[str]:
    names: set[str] = set()
    if isinstance(value, dict):
        for key, sub in value.items():
            if key == "resourceName" and isinstance(sub, str):
                names.add(sub)
            else:
                names |= _resource_names(sub)
    elif isinstance(value, list):
        for sub in value:
            names |= _resource_names(sub)
    return names


def _message(finding: Finding, context: str, why: str) -> str:
    where = show_segments(finding.segments) or "the object"
    owners = ", ".join(str(m) for m in finding.managers)
    by = f" by {owners}" if owners else ""
    verb = {
        "modified": f"{where} was changed{by}",
        "added": f"{where} is set live{by} but git does not declare it",
        "removed": f"{where} is declared but absent live"
        + ("" if owners else " (managedFields do not record who removed it)"),
        "missing": "declared but does not exist live",
        "orphan": "orphaned",
        "unmanaged": "not managed by git or Helm",
        "suspended": "suspended",
    }[finding.type]
    if finding.type == "modified" and not finding.managers:
        verb += " (no managedFields entry owns it: unattributable)"
    details = f": {'; '.join(finding.details)}" if finding.details else ""
    return f"{verb}{details}. {context}{why}." if why else f"{verb}{details}."


def _dedup(findings: list[Finding]) -> list[Finding]:
    seen: dict[tuple[object, ...], Finding] = {}
    by_path: dict[tuple[object, ...], Finding] = {}
    out: list[Finding] = []
    for finding in findings:
        identity = finding.identity
        if identity in seen:
            first = seen[identity]
            first.vms = sorted(set(first.vms) | set(finding.vms))
            first.source = first.source or finding.source
            continue
        # a suspended Flux object also shows as a live-only /spec/suspend: keep the former
        spot = (finding.object.key, finding.path)
        if finding.type == "suspended" and spot in by_path:
            out.remove(by_path[spot])
        seen[identity] = finding
        by_path[spot] = finding
        out.append(finding)
    return sorted(
        out,
        key=lambda f: (_SEVERITY_ORDER[f.severity], str(f.object), f.path, f.comparison),
    )


def audit(
    desired: Desired,
    live: Live,
    kustomization: KubeObject | None = None,
    now: float | None = None,
) -> AuditResult:
    """Audit one cluster: pure apart from reading live state through `live`."""
    runner = _Audit(desired, live, kustomization)
    # Nothing the audit makes is cyclic garbage worth collecting mid-run, while it holds millions
    # of containers (every live object, decoded) that each collection would scan again; promoted
    # to the oldest generation afterwards, they are not scanned as young either. Measured with
    # benchmarks/bench_audit.py (20,000 objects, 2 cores): the collector took 1.1 s of 6.9 s
    # running; paused, its deferred scans 0.7 s of 3.9 s; paused and promoted, none.
    with paused_gc(promote=True):
        findings, notes = runner.run()
    return AuditResult(
        cluster=desired.cluster,
        desired_source=desired.source,
        desired_revision=desired.revision,
        findings=findings,
        notes=notes,
        problems=list(live.problems),
        releases=[
            ReleaseInfo(
                f"{r.namespace}/{r.name}",
                r.revision,
                f"{r.chart_name}-{r.chart_version}" if r.chart_version else r.chart_name,
                r.apply_method,
                r.values_digest,
            )
            for _, r in sorted(runner.releases.items())
        ],
        timestamp=time.time() if now is None else now,
    )


def audit_cluster(
    cluster: str,
    live: Live,
    *,
    repo: git.Repo | None,
    ref: str | None = None,
    http: httpx.Client | None = None,
    now: float | None = None,
) -> AuditResult:
    """Find the desired state (checkout, else the Flux artifact), then audit."""
    ks = find_kustomization(live, cluster)
    applied = str(((ks or {}).get("status") or {}).get("lastAppliedRevision") or "") or None
    if repo is not None:
        desired = desired_from_repo(repo, cluster, applied_revision=applied, ref=ref)
    else:
        desired = desired_from_artifact(live, ks, cluster, applied, http)
    return audit(desired, live, ks, now)


def desired_from_artifact(
    live: Live,
    ks: KubeObject | None,
    cluster: str,
    applied: str | None,
    http: httpx.Client | None,
) -> Desired:
    """In a cluster: the rendered tree from source-controller's artifact of the Kustomization's
    GitRepository."""
    if ks is None:
        raise AuditError(
            f"no Flux Kustomization applies ./{cluster}, so there is no artifact to read: "
            "pass --repo DIR with a checkout"
        )
    source = (ks.get("spec") or {}).get("sourceRef") or {}
    key = ObjectKey(
        GIT_REPOSITORY[0],
        GIT_REPOSITORY[1],
        str(source.get("namespace") or _meta(ks).get("namespace", "")),
        str(source.get("name", "")),
    )
    repo_obj = live.get(key)
    if repo_obj is None:
        raise AuditError(f"GitRepository {key.namespace}/{key.name} of {_ns_name(ks)} not found")
    url, digest, revision = artifact_of(repo_obj)
    files = read_tarball(download_artifact(url, digest, http))
    path = str((ks.get("spec") or {}).get("path") or f"./{cluster}")
    if applied and parse_revision(applied)[1] == parse_revision(revision)[1]:
        return desired_from_files(files, cluster, path, applied, "flux-applied")
    note = (
        f"source-controller's artifact is {revision}, newer than the applied {applied}: audited "
        "against the branch tip"
        if applied
        else f"Kustomization {_ns_name(ks)} has applied nothing yet"
    )
    return desired_from_files(files, cluster, path, revision, "rendered-tip", (note,))
