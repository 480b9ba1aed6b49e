"""GPU risk warnings, from two profiles and the objects built from them (no git)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kubedata.objects import KubeObject, ObjectKey
from kubedata.yaml_io import load_all
from prbot.device_risks import permitted_devices
from prbot.diff import index_objects
from prbot.risk_check import Risk
from prbot.risks import cluster_risks
from renderer.kustomize.workers import build_overlays
from renderer.profile import LoadedProfile, load_profile
from renderer.render import render_profiles
from tests.renderer.profile_texts import PLATFORM_OK as PLATFORM

Built = tuple[LoadedProfile, dict[ObjectKey, KubeObject]]


@pytest.fixture
def load(tmp_path: Path):
    count = 0

    def _load(spec: str, platform: str | None = PLATFORM, name: str = "c1") -> Built:
        nonlocal count
        count += 1
        root = tmp_path / str(count)
        folder = root / "clusters" / name
        folder.mkdir(parents=True)
        header = f"apiVersion: gpu-gitops/v1alpha1\nkind: GPUProfile\nmetadata:\n  name: {name}\n"
        body = "spec:\n" + textwrap.indent(textwrap.dedent(spec).strip("\n"), "  ") + "\n"
        (folder / "gpu-profile.yaml").write_text(header + body)
        if platform is not None:
            (folder / "platform.yaml").write_text(platform)
        lp = load_profile(root, name)
        built = build_overlays(render_profiles([lp]).overlays)[name]
        return lp, index_objects(load_all(built))

    return _load


def risks(base: Built | None, head: Built | None) -> list[Risk]:
    b_lp, b_objs = base if base else (None, {})
    h_lp, h_objs = head if head else (None, {})
    return cluster_risks("c1", b_lp, h_lp, b_objs, h_objs)


COZY = """
platform: {type: cozystack, version: "1.6"}
variant: %s
"""
FLUX = """
platform: {type: flux}
variant: %s
"""
L40S = """
devices:
  - class: L40S
    pciVendorSelector: "10DE:26B9"
    resourceName: nvidia.com/AD102GL_L40S
"""


def test_new_cluster_warns_only_about_what_it_introduces(load) -> None:
    head = load(FLUX % "container" + "hami: true\n", platform=None)
    (r,) = risks(None, head)
    assert r.kind == "container-hami" and r.line == 8 and r.ref == "head"
    assert str(r).startswith("c1: clusters/c1/gpu-profile.yaml:8: variant container with HAMi")


def test_container_hami_already_there_is_quiet(load) -> None:
    base = load(FLUX % "container" + "hami: true\n", platform=None)
    head = load(FLUX % "container" + "hami: true\nflux: {interval: 1m}\n", platform=None)
    # only the interval, which the hand-applied bootstrap objects carry, is worth a word
    (moved,) = risks(base, head)
    assert moved.kind == "flux-source"
    assert moved.message == (
        "spec.flux.interval 10m -> 1m: the GitRepository and Kustomization gpu-gitops in "
        "flux-system were applied by hand from clusters/c1/flux/ and nothing in git updates them; "
        "Flux keeps the old interval until you run: kubectl apply -f clusters/c1/flux/"
    )


def test_removed_cluster_says_what_flux_deletes_and_what_stays(load) -> None:
    got = risks(load(COZY % "passthrough"), None)
    assert [(x.kind, x.ref, x.line) for x in got] == [
        ("cluster-removed", "base", 4),
        ("object-kept", "base", 7),
    ]
    assert got[0].message == (
        "the cluster leaves git: publish removes ./c1 from the rendered branch, and the live "
        'Kustomization gpu-gitops (cozy-fluxcd) then fails with "kustomization path not found" '
        "and prunes nothing: everything keeps running as last applied. To decommission the "
        "cluster, delete it: kubectl delete kustomization gpu-gitops -n cozy-fluxcd && kubectl "
        "delete gitrepository gpu-gitops -n cozy-fluxcd; with prune: true that deletes what it "
        "applied (the warnings below), except objects marked kustomize.toolkit.fluxcd.io/prune: "
        "disabled"
    )
    assert got[1].message.startswith(
        "Package.cozystack.io cozystack.cozystack-platform stays when the Kustomization is "
        "deleted: it carries kustomize.toolkit.fluxcd.io/prune: disabled"
    )
    flux = risks(load(FLUX % "passthrough" + L40S, platform=None), None)
    assert not [x for x in flux if "Flux prunes" in x.message], "nothing is pruned on removal"
    assert "-n flux-system" in flux[0].message
    deleted = [x for x in flux if x.kind not in ("object-kept", "cluster-removed")]
    assert {x.kind for x in deleted} == {"gpu-operator-removed", "object-removed"}
    assert (
        "the decommission step (deleting the Kustomization) deletes Namespace gpu-operator and "
        "everything in it with it"
    ) in [x.message for x in flux]
    (kubevirt,) = [x for x in flux if x.kind == "object-kept"]
    assert "KubeVirt.kubevirt.io kubevirt/kubevirt stays when the Kustomization" in kubevirt.message
    assert "deletes" not in kubevirt.message


def test_standalone_container_package_pruned(load) -> None:
    r = [
        x
        for x in risks(load(COZY % "container"), load(COZY % "none"))
        if x.kind != "variant-switch"
    ]
    assert [x.kind for x in r] == ["gpu-operator-removed"]
    assert "Flux prunes the standalone Package cozystack.gpu-operator" in r[0].message


def test_container_to_bundle_is_a_handover(load) -> None:
    got = risks(load(COZY % "container"), load(COZY % "passthrough"))
    assert [x.kind for x in got] == ["variant-switch", "gpu-operator-removed"]
    assert "moves from this tool's output to the platform bundle" in got[1].message


def test_resource_name_served_elsewhere_is_not_lost(load) -> None:
    # the H100 PCIe entry moves from the profile to Cozystack's default table: still permitted
    base = load(
        COZY % "passthrough"
        + "replaceDefaults: true\n"
        + L40S
        + """
  - class: H100 PCIe
    pciVendorSelector: "10DE:2331"
    resourceName: nvidia.com/GH100_H100_PCIE
"""
    )
    head = load(COZY % "passthrough" + L40S.replace("10DE:26B9", "10DE:26BA"))
    got = risks(base, head)
    assert [x.kind for x in got] == []
    assert "10DE:2331" in permitted_devices(*head)


def test_selector_change_keeping_name_is_quiet(load) -> None:
    base = load(FLUX % "passthrough" + L40S, platform=None)
    head = load(FLUX % "passthrough" + L40S.replace("10DE:26B9", "10de:26b9"), platform=None)
    assert risks(base, head) == []


def test_no_platform_file_assumes_the_bundle_is_on(load) -> None:
    lp, objs = load(COZY % "passthrough", platform=None)
    devices = permitted_devices(lp, objs)
    assert devices["10DE:2331"] == "nvidia.com/GH100_H100_PCIE"


def test_vgpu_without_device_manager_has_no_default_table(load) -> None:
    spec = COZY % "vgpu" + 'vgpu: {manager: {repository: r.example/nv, version: "1"}}\n'
    lp, objs = load(spec)
    assert permitted_devices(lp, objs) == {}
    (r,) = risks(None, (lp, objs))
    assert r.kind == "no-devices" and "no device is permitted" in r.message
    assert "replaceDefaults: false" not in r.message


def test_drift_detection_off_on_cozystack_says_nothing_changes_today(load) -> None:
    base = load(COZY % "passthrough")
    head = load(COZY % "passthrough" + "flux: {driftDetection: disabled}\n")
    (r,) = risks(base, head)
    assert r.kind == "drift-detection-off" and "emits no HelmRelease here" in r.message
    assert r.line == 8


def test_drift_detection_warn_is_not_off(load) -> None:
    base = load(FLUX % "passthrough" + L40S, platform=None)
    head = load(FLUX % "passthrough" + L40S + "flux: {driftDetection: warn}\n", platform=None)
    assert risks(base, head) == []


def test_platform_type_change(load) -> None:
    got = risks(load(COZY % "none"), load(FLUX % "none", platform=None))
    assert [x.kind for x in got] == ["platform-version", "object-kept"]
    assert "cozystack -> flux" in got[0].message and got[0].line == 6
    # the adopted platform Package is never deleted by Flux, and the warning says so
    assert (
        got[1].line == 6 and "Package.cozystack.io cozystack.cozystack-platform" in got[1].message
    )
    assert "Flux does not delete it" in got[1].message


def test_flux_variant_none_loses_every_name(load) -> None:
    base = load(FLUX % "passthrough" + L40S, platform=None)
    got = risks(base, load(FLUX % "none", platform=None))
    kinds = [x.kind for x in got]
    assert kinds[0] == "variant-switch" and kinds[-1] == "device-removed"
    assert sorted(kinds[1:-1]) == [
        "gpu-operator-removed",
        "object-kept",
        "object-removed",
        "object-removed",
    ]
    assert "nvidia.com/AD102GL_L40S" in got[-1].message
    (kubevirt,) = [x for x in got if x.kind == "object-kept"]
    assert "keep spec.kubevirt in the profile" in kubevirt.message


def test_flux_switch_to_container_keeps_kubevirt_and_empties_the_wiring(load) -> None:
    kubevirt = "kubevirt: {namespace: kubevirt, name: kubevirt}\n"
    base = load(FLUX % "passthrough" + L40S + kubevirt, platform=None)
    head = load(FLUX % "container" + kubevirt, platform=None)
    got = risks(base, head)
    assert not [x for x in got if x.kind in ("object-removed", "object-kept")], got
    key = ObjectKey("kubevirt.io", "KubeVirt", "kubevirt", "kubevirt")
    wiring = head[1][key]["spec"]["configuration"]["permittedHostDevices"]
    assert wiring == {"pciHostDevices": [], "mediatedDevices": []}
    (lost,) = [x for x in got if x.kind == "device-removed"]
    assert "nvidia.com/AD102GL_L40S" in lost.message


def test_kept_packages_leaving_the_bundle_are_announced(load) -> None:
    platform = PLATFORM.replace("[cozystack.external-dns]", "[cozystack.external-dns]\n")
    base = load(COZY % "passthrough" + "hami: true\n" + "nodes: {n1: container}\n", platform)
    head = load(COZY % "passthrough" + "nodes: {n1: container}\n", platform)
    (r,) = risks(base, head)
    assert r.kind == "package-kept" and r.ref == "base"
    assert r.message.endswith(
        "delete it by hand: kubectl delete packages.cozystack.io cozystack.hami"
    )
    none = risks(base, load(COZY % "none", platform))
    assert {x.kind for x in none} >= {"package-kept", "gpu-operator-removed", "variant-switch"}


def test_variant_switch_lists_the_relabels(load) -> None:
    base = load(COZY % "passthrough" + "nodes: {n1: vm-passthrough, n2: vm-passthrough}\n")
    head = load(
        COZY % "vgpu"
        + 'vgpu: {manager: {repository: r.example/nv, version: "1"}}\n'
        + "nodes: {n1: vm-vgpu}\n"
    )
    (switch,) = [x for x in risks(base, head) if x.kind == "variant-switch"]
    assert switch.message.endswith(
        "then relabel the nodes: kubectl label node n1 nvidia.com/gpu.workload.config=vm-vgpu "
        "--overwrite; kubectl label node n2 nvidia.com/gpu.workload.config-"
    )


def test_dropping_the_audit_job_points_at_spec_audit(load) -> None:
    audit = "audit: {image: ghcr.io/example/gpu-gitops:0.1.0}\n"
    base = load(FLUX % "container" + audit, platform=None)
    got = risks(base, load(FLUX % "container", platform=None))
    assert got and {x.kind for x in got} == {"object-removed"}
    assert {(x.ref, x.line) for x in got} == {("base", 8)}, "the audit line of the base profile"
    (ns,) = [x for x in got if x.message.startswith("Namespace gpu-gitops ")]
    assert "Flux deletes it from the cluster" in ns.message and "everything in it" in ns.message


def test_objects_leave_for_the_field_whose_base_held_them_known_by_key_not_name(load) -> None:
    """HAMi's objects point at spec.hami; an object merely named like one points at the variant."""
    base = load(FLUX % "container" + "hami: true\n", platform=None)
    head = load(FLUX % "container", platform=None)
    got = risks(base, head)
    assert {x.kind for x in got} == {"object-removed"}
    assert sorted(x.message.split(" leaves")[0] for x in got) == [
        "HelmRelease.helm.toolkit.fluxcd.io kube-system/hami",
        "HelmRepository.source.toolkit.fluxcd.io kube-system/hami-charts",
    ]
    assert {(x.ref, x.line) for x in got} == {("base", 8)}, "the hami line of the base profile"
    lookalike = ObjectKey("source.toolkit.fluxcd.io", "HelmRepository", "team-a", "hami-charts")
    base_objs = {**head[1], lookalike: {"metadata": {"name": "hami-charts"}}}
    (r,) = risks((head[0], base_objs), head)
    assert r.line == 7, "the variant line, not spec.hami's"
