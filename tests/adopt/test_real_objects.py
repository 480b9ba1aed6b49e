"""audit -> adopt -> publish -> Flux applies -> audit again on real objects from public sources
(tests/data/real/, each file names where it comes from): a plain-Flux cluster whose KubeVirt CR
an administrator configured by hand as KubeVirt's user guide shows (a Tesla T4 passed through, its
GRID T4-1Q vGPU, the HostDevices gate), plus a gate added with Lens, and a GPU node labelled as
NVIDIA's guide says while the profile says otherwise."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

from audit.checks.wiring import ssa_merge
from kubedata.yaml_io import load_all
from renderer.gitrepo import init_repo
from renderer.kubevirt_file import kubevirt_file_text
from renderer.kustomize.workers import build_overlays
from renderer.live_file import ImportMark
from renderer.publish.publish import publish
from renderer.render import render_profiles
from renderer.validate import check_clusters
from tests.audit.audit_helpers import run, write_snapshot
from tests.conftest import DATA

REAL = DATA / "real"
PROFILE = """\
# lab2: plain Flux + KubeVirt; the L40S was planned, the T4s are what was racked.
apiVersion: gpu-gitops/v1alpha1
kind: GPUProfile
metadata:
  name: lab2
spec:
  platform:
    type: flux
  variant: passthrough
  devices:
    - class: L40S   # planned
      pciVendorSelector: "10DE:26B9"
      resourceName: nvidia.com/AD102GL_L40S

  nodes:
    nvidia1: container
  flux:
    url: ssh://git@git.example.com/platform/gitops.git
  kubevirt:
    namespace: kubevirt
    name: kubevirt
    version: "1.8"
    featureGates: [LiveMigration]   # the rest comes from the renderer
"""
EMPTY = (
    "virtualmachines.kubevirt.io",
    "packages.cozystack.io",
    "clusterpolicies.nvidia.com",
    "helmreleases.helm.toolkit.fluxcd.io",
    "helmrepositories.source.toolkit.fluxcd.io",
    "namespaces",
)


def real(name: str) -> dict[str, Any]:
    obj: dict[str, Any] = yaml.safe_load((REAL / name).read_text(encoding="utf-8"))
    return obj


def live_cluster(tip: str) -> list[dict[str, Any]]:
    kubevirt = real("kubevirt-user-guide-permitted.yaml")
    # the partial KubeVirt is applied with ssa: Merge, whose annotation the live object carries
    annotations = kubevirt["metadata"].setdefault("annotations", {})
    annotations["kustomize.toolkit.fluxcd.io/ssa"] = "Merge"
    annotations["kustomize.toolkit.fluxcd.io/prune"] = "disabled"
    gates = kubevirt["spec"]["configuration"]["developerConfiguration"]["featureGates"]
    gates += ["LiveMigration", "Snapshot"]  # Snapshot: added with Lens
    kubevirt["metadata"]["managedFields"].append(
        {
            "apiVersion": "kubevirt.io/v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:spec": {"f:configuration": {"f:developerConfiguration": {"f:featureGates": {}}}}
            },
            "manager": "node-fetch",
            "operation": "Update",
            "time": "2026-11-24T10:03:55Z",
        }
    )
    ks = real("kustomization-flux-system.yaml")
    ks["metadata"]["name"] = "gpu-gitops-lab2"
    ks["spec"]["path"] = "./lab2"
    ks.setdefault("status", {})["lastAppliedRevision"] = f"rendered@sha1:{tip}"
    return [kubevirt, real("node-gpu.yaml"), ks]


def audit(snapshot: Path, repo: Path) -> list[dict[str, Any]]:
    code, out, err = run(
        "audit", "--cluster", "lab2", "--snapshot", str(snapshot), "--repo", str(repo), "-o", "json"
    )
    assert code in (0, 1), err
    findings: list[dict[str, Any]] = json.loads(out)["findings"]
    return findings


def spot(f: dict[str, Any]) -> tuple[str, str]:
    return f["object"]["kind"], f["path"]


def test_real_kubevirt_and_node_drift_is_adopted_and_gone_after_publish(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "clusters" / "lab2").mkdir(parents=True)
    (root / "clusters" / "lab2" / "gpu-profile.yaml").write_text(PROFILE)
    # imported before the hand edits below: the live CR as the first publish found it
    mark = ImportMark("https://api.lab2.example.net:6443", "2026-11-20T08:00:00Z")
    kubevirt = kubevirt_file_text(real("kubevirt-user-guide-permitted.yaml"), "lab2", mark)
    (root / "clusters" / "lab2" / "kubevirt.yaml").write_text(kubevirt)
    repo = init_repo(root, "lab2", user="test", email="test@example.invalid")
    tip = publish(root).tip
    assert tip
    objects = live_cluster(tip)
    before = write_snapshot(tmp_path / "before", copy.deepcopy(objects), EMPTY)
    first = {spot(f): f for f in audit(before, root)}
    devices = ("KubeVirt", "/spec/configuration/permittedHostDevices/pciHostDevices")
    mdev = ("KubeVirt", "/spec/configuration/permittedHostDevices/mediatedDevices")
    gates = ("KubeVirt", "/spec/configuration/developerConfiguration/featureGates")
    label = ("Node", "/metadata/labels/nvidia.com~1gpu.workload.config")
    assert {devices, mdev, gates, label} <= set(first), sorted(first)

    code, out, err = run(
        "adopt", "--cluster", "lab2", "--snapshot", str(before), "--repo", str(root)
    )
    assert code == 0, err
    (branch,) = [h.name for h in repo.heads if h.name.startswith("adopt/lab2/")]
    profile = repo.git.show(f"{branch}:clusters/lab2/gpu-profile.yaml")
    # the T4 passed through is kept as KubeVirt has it; the planned L40S, gone live, leaves
    assert "pciVendorSelector: 10DE:1EB8" in profile or 'pciVendorSelector: "10DE:1EB8"' in profile
    assert "nvidia.com/TU104GL_Tesla_T4" in profile and "10DE:26B9" not in profile
    (gate_line,) = [ln for ln in profile.splitlines() if "featureGates" in ln]
    assert gate_line.startswith("    featureGates: [LiveMigration, Snapshot]")
    assert gate_line.endswith("# the rest comes from the renderer")  # HostDevices is not copied
    assert "    nvidia1: vm-passthrough" in profile
    assert profile.startswith("# lab2: plain Flux + KubeVirt; the L40S was planned")
    # the GRID vGPU type cannot go into a passthrough profile: the rule says why, and how to drop it
    assert "GRID T4-1Q" not in profile
    assert "not adoptable" in out and "mediatedDevices" in out

    repo.git.merge("-q", "--ff-only", branch)
    new_tip = publish(root).tip
    assert new_tip and new_tip != tip
    # Flux applies the new revision: the rendered partial KubeVirt merged in by server-side apply
    checked = check_clusters(root, ["lab2"])
    built = load_all(build_overlays(render_profiles(checked.profiles).overlays)["lab2"])
    rendered = next(o for o in built if o["kind"] == "KubeVirt")
    for obj in objects:
        if obj["kind"] == "KubeVirt":
            obj["spec"] = ssa_merge(obj["spec"], rendered["spec"])
        if obj["kind"] == "Kustomization":
            obj["status"]["lastAppliedRevision"] = f"rendered@sha1:{new_tip}"
    after = write_snapshot(tmp_path / "after", objects, EMPTY)
    second = {spot(f) for f in audit(after, root)}
    assert not {devices, gates, label} & second
    assert mdev in second  # not adopted: still reported
