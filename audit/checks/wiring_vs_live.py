"""Comparison 3 (DESIGN §6): the GPU wiring the profile implies (wiring.py) with the live KubeVirt
CR and Packages.

Why this exists: git and the releases can agree with the cluster and still not be what the
profile asks for (a profile change not yet published, or not yet rolled out by an upgrade). Only
the wiring paths are compared. Where live already matches what git or the release renders, the
finding is a pending rollout (`pending`), not drift.
"""

from __future__ import annotations

import dataclasses

from kubedata.diff import show_path
from kubedata.objects import ObjectKey
from renderer.cozystack_names import KUBEVIRT_RELEASE, PLATFORM_RELEASE, Release

from audit.checks.flux import kustomization_controller
from audit.checks.wiring import cozystack_wiring, flux_wiring
from audit.compare.pairs import compare_objects
from audit.findings.classify import Controller
from audit.findings.finding import Finding
from audit.kinds import live_key
from audit.sources.state import AuditState

__all__ = ["compare_wiring", "expect_wiring", "pending", "wiring_controller"]


def expect_wiring(state: AuditState) -> None:
    """Predict the wiring (reads the live platform Package, whose values the desired merge into)."""
    profile = state.desired.profile
    if state.platform_obj is not None:
        live_platform = state.live.get(live_key(state.platform_obj))
        version = profile.profile.spec.platform.version if profile else None
        if not version:
            version = "1.6"
            state.notes.append('Cozystack version unknown (no profile): wiring predicted as "1.6"')
        state.expected = cozystack_wiring(state.platform_obj, live_platform, version)
    elif profile is not None and profile.profile.spec.platform.type == "flux":
        kubevirt = profile.kubevirt.obj if profile.kubevirt else None
        state.expected = flux_wiring(profile.profile.spec, kubevirt)
    elif profile is None:
        state.notes.append("no profile: the GPU wiring and Node labels were not checked")
    state.notes += state.expected.notes


def compare_wiring(state: AuditState) -> None:
    live, findings = state.live, state.findings
    for obj in state.expected.objects:
        key = live_key(obj)
        controller = wiring_controller(state, key)
        live_obj = live.get(key)
        if live_obj is None:
            if key not in live.unread:
                findings.add(findings.missing(obj, controller, "wiring"))
            continue
        scope = state.expected.scopes.get(key)
        for change in compare_objects(obj, live_obj, scope):
            finding = findings.from_change(change, live_obj, controller, "wiring")
            if finding is None:
                continue
            seen = state.compared.get(key)
            if seen is not None and change.pointer not in seen:
                pending(finding, state.ctx.platform)
            findings.add(finding)


def _wiring_release(kind: str) -> Release:
    """The Cozystack release that renders the object: kubevirt renders the KubeVirt CR, the
    platform release the Packages."""
    return KUBEVIRT_RELEASE if kind == "KubeVirt" else PLATFORM_RELEASE


def wiring_controller(state: AuditState, key: ObjectKey) -> Controller:
    """What reverts drift of a wiring object: the Kustomization on Flux, else its release's."""
    if state.ctx.platform == "flux":
        return kustomization_controller(state.kustomization)
    release = _wiring_release(key.kind)
    controller = state.release_controllers.get(release) or Controller(
        "helm-release", assumed=True, release=str(release)
    )
    found = state.releases.get(release)
    if found is not None:
        controller = dataclasses.replace(controller, apply_method=found.apply_method)
    return controller


def pending(finding: Finding, platform: str) -> None:
    """Live matches what git or the release renders: the profile's change is not out yet."""
    finding.missed_by_drift_detection = False
    if platform == "flux":
        finding.revert, finding.revert_release = "never", None
        finding.message = (
            f"{show_path(finding.segments)}: the profile implies a different value than "
            "the rendered state Flux applies; nothing changes the cluster until the profile "
            "is published (gpu-gitops publish)"
        )
        return
    release = str(_wiring_release(finding.object.kind))
    finding.revert, finding.revert_release = "next-upgrade", release
    finding.message = (
        f"{show_path(finding.segments)}: live is what the current release renders, but "
        f"the profile implies another value; it changes at the next upgrade of {release} "
        "once Flux has applied the platform Package"
    )
