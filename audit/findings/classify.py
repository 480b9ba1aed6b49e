"""Will the GitOps controller revert a finding, and when; does drift detection miss it.

Revert rules (drift-anchors §4.9; cozystack.md §1.5, §6.1-6.3, §7 items 17-19), first match wins:

  controller            situation                                       revert          missed
  any                   Kustomization/HelmRelease suspended; object     never (while)   yes
                        `kustomize.toolkit.fluxcd.io/reconcile:
                        disabled` or `ssa: Ignore|IfNotPresent`
  kustomize-controller  path matched by the Kustomization's .spec.ignore  never         yes
  kustomize-controller  object missing; a declared field modified or    next-reconcile  no
                        removed (force server-side apply)
  kustomize-controller  live-only field whose owners are all `kubectl*` next-reconcile  no
                        (Update or Apply, main resource),
                        `before-first-apply` or kustomize-controller,
                        object not `ssa: Merge` (ownership takeover)
  kustomize-controller  live-only field with any other owner (Lens      never           yes
                        `node-fetch`, `OpenAPI-Generator`,
                        `flux-client-side-apply`, operators)
  helm-controller       driftDetection.mode enabled (not operator-      next-reconcile  no
                        generated, path not ignored, object not opted
                        out): declared fields, missing objects
  helm-controller       mode warn: reported, not corrected              next-upgrade    no
  helm-controller       mode disabled (the default; always on Cozystack next-upgrade    yes
                        operator-generated HelmReleases), release
                        applied `ssa`: the upgrade force-applies
                        declared fields, atomic lists whole
  helm-controller       mode disabled, release applied `csa` (installed next-upgrade if yes
                        by Helm 3), custom resource: the upgrade is a   the render
                        two-way merge of old and new manifests          changes, else
                                                                        never
  helm-controller       live-only field (the chart does not render it)  never           yes
  Cozystack operator    hand edit of a generated HelmRelease spec       next-reconcile  no
                        (not `suspend`): rewritten (transient)
  none                  orphans, hand-applied objects, Node labels      never           yes

How bad a finding is: severity.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from audit.findings.attribute import ManagedEntry
from audit.findings.finding import Finding, Revert
from audit.kinds import BUILTIN_GROUPS
from audit.kube.selectors import target_matches

__all__ = [
    "GITOPS_MANAGERS",
    "OPERATOR_MANAGERS",
    "Controller",
    "IgnoreRule",
    "classify",
    "is_gitops_or_operator",
    "is_partial",
    "is_takeover_manager",
]

ControllerKind = Literal["kustomization", "helm-release", "operator", "none"]


@dataclass(frozen=True)
class IgnoreRule:
    """A Flux ignore rule: HelmRelease `.spec.driftDetection.ignore[]`, Kustomization
    `.spec.ignore[]`."""

    paths: tuple[str, ...]
    target: dict[str, Any] = field(default_factory=dict)

    def applies(self, obj: dict[str, Any], path: str) -> bool:
        if self.target and not target_matches(self.target, obj):
            return False
        return any(p == "" or path == p or path.startswith(p.rstrip("/") + "/") for p in self.paths)


@dataclass(frozen=True)
class Controller:
    """What applies an object, as far as reverting drift goes."""

    kind: ControllerKind
    name: str = ""
    """namespace/name of the Kustomization or HelmRelease."""
    suspended: bool = False
    drift_mode: str = "disabled"
    """HelmRelease `.spec.driftDetection.mode`; `disabled` when unset."""
    operator_generated: bool = False
    """A Cozystack operator HelmRelease: drift detection is off whatever its spec says."""
    apply_method: str = ""
    """Of the release (`ssa` or `csa`)."""
    release: str = ""
    """namespace/name of the Helm release (its storage), for `revertRelease`."""
    ignore: tuple[IgnoreRule, ...] = ()
    next_render_changes: frozenset[str] = frozenset()
    """Pointers the next render is predicted to change (for csa releases)."""
    assumed: bool = False
    """Not found live: classified as the design expects it to run."""


GITOPS_MANAGERS = frozenset(
    {
        "kustomize-controller",  # Flux: server-side apply (fluxcd/pkg ssa)
        "flux-client-side-apply",  # Flux: its client-side apply fallback
        "helm-controller",
        "helm",  # Helm 3 CLI (csa: Update) and Helm 4 (ssa: Apply)
        "Helm",
    }
)
"""Field managers of Flux and Helm: what they write is what git or a release declares."""
OPERATOR_MANAGERS: dict[tuple[str, str], frozenset[str]] = {
    # the operator that owns the CR and may write its spec (manager names as they appear in
    # managedFields of the real objects under tests/data/real/)
    ("kubevirt.io", "KubeVirt"): frozenset(
        {"virt-operator", "hyperconverged-cluster-operator", "harvester"}
    ),
    ("nvidia.com", "ClusterPolicy"): frozenset({"gpu-operator"}),
    ("cozystack.io", "Package"): frozenset({"cozystack-operator"}),
}


def is_gitops_or_operator(manager: str, group: str, kind: str) -> bool:
    """Whether `manager` is Flux, Helm or the operator of objects of this kind."""
    return manager in GITOPS_MANAGERS or manager in OPERATOR_MANAGERS.get((group, kind), ())


_TAKEOVER_PREFIX = "kubectl"
_BEFORE_FIRST_APPLY = "before-first-apply"
_KUSTOMIZE = "kustomize-controller"
_HELM_MANAGERS = ("helm-controller", "helm", "Helm")


def is_takeover_manager(entry: ManagedEntry) -> bool:
    """Entries kustomize-controller takes over before applying (kustomization_controller.go
    L894-927, matched by prefix in ssa/patch.go matchFieldManager; main resource only)."""
    if entry.subresource:
        return False
    if entry.manager.startswith(_TAKEOVER_PREFIX) and entry.operation in ("Update", "Apply"):
        return True
    if entry.manager == _BEFORE_FIRST_APPLY and entry.operation == "Update":
        return True
    return entry.manager == _KUSTOMIZE


def _object_opt_out(obj: dict[str, Any] | None, key: str, values: Sequence[str]) -> bool:
    meta = (obj or {}).get("metadata") or {}
    for source in ("annotations", "labels"):
        value = str((meta.get(source) or {}).get(key, "")).lower()
        if value and value in values:
            return True
    return False


def is_partial(*objects: dict[str, Any] | None) -> bool:
    """Applied with `kustomize.toolkit.fluxcd.io/ssa: Merge` (on the git or the live object):
    git owns the fields it declares, the object's creator the rest."""
    return any(
        _object_opt_out(obj, "kustomize.toolkit.fluxcd.io/ssa", ("merge",)) for obj in objects
    )


def classify(
    finding: Finding,
    controller: Controller,
    owners: Sequence[ManagedEntry],
    live_obj: dict[str, Any] | None,
) -> tuple[Revert, str | None, bool, str]:
    """(revert, revertRelease, missedByDriftDetection, why) for one drift finding."""
    ftype = finding.type
    if ftype in ("orphan", "unmanaged"):
        return "never", None, True, "nothing in git or in a release applies this object"
    if ftype == "suspended":
        return "never", None, True, "a suspended object reconciles nothing until resumed"
    if controller.kind == "none":
        return "never", None, True, "no GitOps controller applies this"
    if controller.suspended:
        what = "Kustomization" if controller.kind == "kustomization" else "HelmRelease"
        return (
            "never",
            None,
            True,
            f"{what} {controller.name} is suspended: nothing is reverted until it is resumed",
        )
    if controller.kind == "operator":
        if finding.path.startswith("/spec") and finding.path != "/spec/suspend":
            return (
                "next-reconcile",
                None,
                False,
                "the Cozystack operator rewrites generated HelmRelease specs (transient)",
            )
        return "never", None, True, "the operator keeps hand-added metadata and spec.suspend"
    if controller.kind == "kustomization":
        return _kustomize(finding, controller, owners, live_obj)
    return _helm(finding, controller, owners, live_obj)


def _kustomize(
    finding: Finding,
    controller: Controller,
    owners: Sequence[ManagedEntry],
    live_obj: dict[str, Any] | None,
) -> tuple[Revert, str | None, bool, str]:
    if _object_opt_out(live_obj, "kustomize.toolkit.fluxcd.io/reconcile", ("disabled",)):
        return "never", None, True, "the object is annotated kustomize.toolkit.fluxcd.io/reconcile"
    if _object_opt_out(live_obj, "kustomize.toolkit.fluxcd.io/ssa", ("ignore", "ifnotpresent")):
        return "never", None, True, "the object's kustomize.toolkit.fluxcd.io/ssa policy skips it"
    if any(rule.applies(live_obj or {}, finding.path) for rule in controller.ignore):
        return "never", None, True, f"the path is ignored by Kustomization {controller.name}"
    if finding.type in ("missing", "modified", "removed"):
        return "next-reconcile", None, False, "kustomize-controller force-applies what git declares"
    # added: a field git does not declare
    if not owners:
        return "unknown", None, True, "no managedFields entry owns it"
    merge = is_partial(live_obj)
    others = sorted({o.manager for o in owners if not is_takeover_manager(o)})
    if not others and not merge:
        return (
            "next-reconcile",
            None,
            False,
            "kustomize-controller takes over kubectl-owned fields and drops what git does not "
            "declare",
        )
    if merge:
        return "never", None, True, "the object is applied with ssa: Merge, which keeps additions"
    return (
        "never",
        None,
        True,
        f"owned by {', '.join(others)}, which kustomize-controller never takes over",
    )


def _helm(
    finding: Finding,
    controller: Controller,
    owners: Sequence[ManagedEntry],
    live_obj: dict[str, Any] | None,
) -> tuple[Revert, str | None, bool, str]:
    release = controller.release or None
    if controller.assumed and not controller.name:
        return "unknown", release, True, "no HelmRelease found for this release"
    mode = "disabled" if controller.operator_generated else (controller.drift_mode or "disabled")
    opted_out = _object_opt_out(live_obj, "helm.toolkit.fluxcd.io/driftDetection", ("disabled",))
    ignored = any(rule.applies(live_obj or {}, finding.path) for rule in controller.ignore)
    if opted_out or ignored:
        mode = "disabled"
    why_off = (
        "operator-generated HelmReleases run with drift detection off"
        if controller.operator_generated
        else "drift detection ignores this path"
        if ignored or opted_out
        else f"drift detection is {mode}"
    )
    if finding.type == "missing":
        if mode == "enabled":
            return "next-reconcile", release, False, "helm-controller recreates it (mode enabled)"
        return "next-upgrade", release, mode == "disabled", "the next upgrade recreates it"
    if finding.type == "added":
        if not owners:
            return "unknown", release, True, "no managedFields entry owns it"
        if all(o.manager in _HELM_MANAGERS for o in owners):
            return "next-upgrade", release, True, "left by an earlier revision of the release"
        return (
            "never",
            None,
            True,
            "the chart does not render this field and Helm keeps fields other managers own",
        )
    if mode == "enabled":
        return "next-reconcile", release, False, "helm-controller corrects drift (mode enabled)"
    if mode == "warn":
        return "next-upgrade", release, False, "helm-controller reports it (mode warn), no fix"
    if controller.apply_method == "csa" and finding.object.group not in BUILTIN_GROUPS:
        if finding.path in controller.next_render_changes:
            return (
                "next-upgrade",
                release,
                True,
                f"{why_off}; the csa upgrade patches this field because its render changes",
            )
        return (
            "never",
            None,
            True,
            f"{why_off}; the release is applied client-side (csa), whose upgrade patches only "
            "fields whose render changed",
        )
    return (
        "next-upgrade",
        release,
        True,
        f"{why_off}; the next upgrade of {release or 'the release'} overwrites it",
    )
