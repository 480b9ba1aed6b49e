"""Comparison 2 (DESIGN §6): the GPU objects of each Helm release's newest deployed revision
with the live ones.

Why this exists: helm-controller applies these, not git: on Cozystack git holds only the platform
Package, and the KubeVirt CR and the ClusterPolicy come out of the releases it installs. Release
Secrets are read only where the audit job's RBAC allows (renderer.audit_rbac.audit_reads, the one
computation of both), by label.
"""

from __future__ import annotations

import dataclasses

from kubedata.objects import KubeObject, ObjectKey, key_of
from renderer.audit_rbac import audit_reads
from renderer.cozystack_names import KUBEVIRT_RELEASE, PLATFORM_RELEASE

from audit.checks.flux import helm_release_controllers
from audit.compare.pairs import compare_objects
from audit.errors import ReleaseDecodeError
from audit.findings.classify import Controller
from audit.findings.finding import ObjectRef
from audit.findings.severity import is_gpu_object
from audit.kinds import CLUSTER_POLICY, HELM_RELEASE, KUBEVIRT, PACKAGE, in_namespace, live_key
from audit.sources.helm_release import HelmRelease, decode_release, newest_deployed
from audit.sources.state import AuditState

__all__ = [
    "RELEASE_KINDS",
    "compare_releases",
    "load_releases",
    "read_helm_releases",
    "release_objects",
]

RELEASE_KINDS = frozenset({KUBEVIRT, CLUSTER_POLICY, PACKAGE})
"""Kinds compared with release manifests: the GPU objects Helm renders (not every chart object)."""


def release_objects(release: HelmRelease) -> list[KubeObject]:
    """The release's objects, in its namespace where the chart leaves the namespace out."""
    return [in_namespace(obj, release.namespace) for obj in release.objects]


def read_helm_releases(state: AuditState) -> None:
    """The HelmReleases of the cluster, as the controllers of their releases."""
    state.release_controllers.update(helm_release_controllers(state.live.list(*HELM_RELEASE)))


def load_releases(state: AuditState) -> None:
    """Decode the newest deployed revision of every release the audit reads: those in
    renderer.audit_rbac's release namespaces, which the job's RBAC grants and nothing more."""
    profile = state.ctx.profile
    if profile is not None:
        namespaces = audit_reads(profile.profile.spec).release_namespaces
    else:
        # no profile (a rendered tree published without source/): the releases of the
        # HelmReleases git declares, which are what Flux applies
        in_git = {k for k in state.desired.objects.keys if (k.group, k.kind) == HELM_RELEASE}
        namespaces = tuple(
            sorted(
                {
                    storage
                    for (storage, _), c in state.release_controllers.items()
                    if ObjectKey(*HELM_RELEASE, *c.name.split("/", 1)) in in_git
                }
            )
        )
    for storage, name in sorted(state.release_controllers):
        if storage not in namespaces and is_gpu_object(*HELM_RELEASE, storage, name):
            state.notes.append(
                f"release {storage}/{name} was not read: the audit reads the releases that "
                f"render the GPU objects the profile implies, and its job may not read Secrets "
                f"in {storage}"
            )
    secrets: list[KubeObject] = []
    for ns in namespaces:
        secrets += state.live.list("", "Secret", ns, "owner=helm")
    for secret in newest_deployed(secrets):
        try:
            release = decode_release(secret)
        except ReleaseDecodeError as exc:
            state.live.problems.append(str(exc))
            continue
        state.releases[(release.namespace, release.name)] = release
    if state.ctx.platform == "cozystack":
        for expected in (PLATFORM_RELEASE, KUBEVIRT_RELEASE):
            if expected.namespace in namespaces and expected not in state.releases:
                state.notes.append(
                    f"no deployed release {expected} was found: its objects were "
                    "compared with the profile only"
                    + (
                        "; Packages left by helm.sh/resource-policy: keep cannot be told"
                        if expected == PLATFORM_RELEASE
                        else ""
                    )
                )


def compare_releases(state: AuditState) -> None:
    live, findings = state.live, state.findings
    for where, release in sorted(state.releases.items()):
        controller = state.release_controllers.get(where) or Controller(
            "helm-release", assumed=True, release=f"{where[0]}/{where[1]}"
        )
        if controller.assumed:
            state.notes.append(
                f"release {where[0]}/{where[1]} has no HelmRelease: its drift is classified unknown"
            )
        for obj in release.objects:
            key = key_of(obj)
            if (key.group, key.kind) not in RELEASE_KINDS:
                continue
            obj = in_namespace(obj, release.namespace)
            key = live_key(obj)
            expected = state.expected.get(key)
            render_changes = frozenset(
                c.pointer
                for c in (
                    compare_objects(expected, obj, state.expected.scopes.get(key))
                    if expected is not None
                    else ()
                )
            )
            ctrl = dataclasses.replace(
                controller, apply_method=release.apply_method, next_render_changes=render_changes
            )
            live_obj = live.get(key)
            if live_obj is None:
                if key not in live.unread:
                    findings.add(findings.missing(obj, ctrl, "release"))
                continue
            # Where the profile changed what the release renders and live already holds the new
            # value (a hand edit kept in the profile by `adopt`), the next upgrade rewrites it
            # unchanged: a rollout the release has not caught up with, not drift.
            off_profile = (
                {
                    c.pointer
                    for c in compare_objects(expected, live_obj, state.expected.scopes.get(key))
                    if c.kind != "reordered"
                }
                if render_changes and expected is not None
                else set()
            )
            context = (
                f"Release {release.namespace}/{release.name} revision {release.revision}, "
                f"applied {release.apply_method}: "
            )
            schema = state.schema(live_obj)
            changes = compare_objects(obj, live_obj, schema=schema)
            # an order that means nothing is no difference
            state.saw(key, (c.pointer for c in changes if c.kind != "reordered"))
            for change in changes:
                if change.pointer in render_changes and change.pointer not in off_profile:
                    state.notes.append(
                        f"{ObjectRef.of(live_obj)} {change.pointer} is already what the profile "
                        f"asks for; release {release.namespace}/{release.name} renders it at its "
                        "next upgrade"
                    )
                    continue
                finding = findings.from_change(
                    change, live_obj, ctrl, "release", context, schema=schema
                )
                findings.add(finding)
