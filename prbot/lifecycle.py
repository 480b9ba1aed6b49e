"""The steps of a cluster's life that git alone does not carry out: what Flux then does, and the
one command that completes each.

clusters/<name>/flux/ (renderer/bootstrap.py) holds a GitRepository and a Kustomization, both named
gpu-gitops in Flux's namespace, applied once by hand: nothing in git reconciles them. So adding a
cluster needs that apply; renaming one, or moving its source (spec.flux url, branch, secretRef,
interval), needs it again (the same two objects, updated in place: the Kustomization's path
./<old> becomes ./<new>, and objects of the same name are updated, not deleted). Removing one takes
its folder off the rendered branch: the live Kustomization then fails with "kustomization path not
found" and prunes nothing; deleting the Kustomization is the decommission step, and with
`prune: true` that deletes what it applied (removal_risks.py says what). Pure.
"""

from __future__ import annotations

from renderer.bootstrap import FLUX_DIR, FLUX_OBJECT_NAME, flux_namespace
from renderer.profile import LoadedProfile

from prbot.risk_check import RiskCheck

__all__ = ["added_risks", "decommission_step", "removed_note", "renamed_risks", "source_risks"]


def _apply(lp: LoadedProfile) -> str:
    return f"kubectl apply -f clusters/{lp.name}/{FLUX_DIR}/"


def _objects(lp: LoadedProfile) -> str:
    return f"GitRepository and Kustomization {FLUX_OBJECT_NAME} in {flux_namespace(lp)}"


def decommission_step(lp: LoadedProfile) -> str:
    """The command that deletes the cluster's Kustomization (and its GitRepository)."""
    ns = flux_namespace(lp)
    return (
        f"kubectl delete kustomization {FLUX_OBJECT_NAME} -n {ns} && "
        f"kubectl delete gitrepository {FLUX_OBJECT_NAME} -n {ns}"
    )


def added_risks(r: RiskCheck) -> None:
    """A new cluster: Flux pulls nothing until its bootstrap objects are applied, once."""
    lp = r.head
    secret = lp.profile.spec.flux.secret_ref
    first = (
        f" (the Secret {secret} with the git credentials must exist in {flux_namespace(lp)} first)"
        if secret
        else ""
    )
    r.add(
        "cluster-bootstrap",
        ("metadata", "name"),
        f"new cluster: nothing in git applies its Flux objects; once this is merged and published, "
        f"run once on the cluster: {_apply(lp)}{first} (the {_objects(lp)}, path ./{lp.name})",
    )


def removed_note(lp: LoadedProfile) -> str:
    """What removing the cluster from git does, and the step that does the rest."""
    return (
        f"the cluster leaves git: publish removes ./{lp.name} from the rendered branch, and the "
        f"live Kustomization {FLUX_OBJECT_NAME} ({flux_namespace(lp)}) then fails with "
        '"kustomization path not found" and prunes nothing: everything keeps running as last '
        f"applied. To decommission the cluster, delete it: {decommission_step(lp)}; with "
        "prune: true that deletes what it applied (the warnings below), except objects marked "
        "kustomize.toolkit.fluxcd.io/prune: disabled"
    )


def renamed_risks(r: RiskCheck, old: str) -> None:
    """A renamed cluster: the live Kustomization still applies the old folder."""
    assert r.base is not None
    lp = r.head
    r.add(
        "cluster-renamed",
        ("metadata", "name"),
        f"cluster renamed {old} -> {lp.name}: publish removes ./{old} from the rendered branch, so "
        f"the live Kustomization {FLUX_OBJECT_NAME} ({flux_namespace(lp)}) fails with "
        f'"kustomization path not found" and applies nothing until you run: {_apply(lp)} (the '
        f"same {_objects(lp)}, its path ./{old} -> ./{lp.name}: objects of the same name are "
        "updated in place, nothing is pruned and there is no old Kustomization to delete)",
    )


_SOURCE_FIELDS = (("url", "url"), ("branch", "branch"), ("secret_ref", "secretRef"))


def source_risks(r: RiskCheck) -> None:
    """spec.flux fields that only the hand-applied bootstrap objects carry."""
    if r.base is None:
        return
    old, new = r.base.profile.spec.flux, r.head.profile.spec.flux
    fields = [*_SOURCE_FIELDS, ("interval", "interval")]
    for attr, key in fields:
        before, after = getattr(old, attr), getattr(new, attr)
        if before == after:
            continue
        shown = f"{before or '(unset)'} -> {after or '(unset)'}"
        then = (
            f"; publish writes ./{r.head.name} to {after} first, or the Kustomization finds "
            "no folder there"
            if attr == "branch"
            else ""
        )
        r.add_written(
            "flux-source",
            ("spec", "flux", key),
            f"spec.flux.{key} {shown}: the {_objects(r.head)} were applied by hand from "
            f"clusters/{r.head.name}/{FLUX_DIR}/ and nothing in git updates them; Flux keeps the "
            f"old {key} until you run: {_apply(r.head)}{then}",
        )
