"""Which findings become which profile edits, and why the others cannot (with their revert)."""

from __future__ import annotations

from typing import Any

import pytest

from adopt.plan import Adoptable, Refused, plan, revert_command
from adopt.yamledit import Edit
from audit.findings.finding import Finding, FindingType, ObjectRef, Source
from kubedata.objects import KubeObject, ObjectKey
from renderer.profile import LoadedProfile, load_profile_bytes
from tests.conftest import REPO_ROOT

KUBEVIRT = ObjectRef("kubevirt.io/v1", "KubeVirt", "cozy-kubevirt", "kubevirt")
FLUX_KUBEVIRT = ObjectRef("kubevirt.io/v1", "KubeVirt", "kubevirt", "kubevirt")
PLATFORM = ObjectRef("cozystack.io/v1alpha1", "Package", "", "cozystack.cozystack-platform")
SERVER = {
    "pciVendorSelector": "10DE:2BB5",
    "resourceName": "nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_SERVER_EDITION",
    "externalResourceProvider": True,
}
H200 = {"pciVendorSelector": "10DE:2335", "resourceName": "nvidia.com/GH100_H200"}


def profile(name: str) -> LoadedProfile:
    folder = REPO_ROOT / "clusters" / name
    platform = folder / "platform.yaml"
    return load_profile_bytes(
        name,
        (folder / "gpu-profile.yaml").read_bytes(),
        platform.read_bytes() if platform.exists() else None,
    )


def finding(
    ftype: FindingType,
    obj: ObjectRef,
    path: str,
    desired: Any = None,
    live: Any = None,
    *,
    field: str = "spec.devices",
    file: str = "clusters/ams1/gpu-profile.yaml",
    **extra: Any,
) -> Finding:
    return Finding(
        ftype, obj, path, desired=desired, live=live, source=Source(file, field), **extra
    )


def one(
    f: Finding, cluster: str = "ams1", live: dict[ObjectKey, KubeObject] | None = None
) -> Adoptable | Refused:
    out = plan(cluster, [f], profile(cluster), live or {})
    assert len(out.adoptable) + len(out.refused) == 1
    return (out.adoptable or out.refused)[0]


def edits(f: Finding, cluster: str = "ams1", **kw: Any) -> tuple[str, tuple[Edit, ...]]:
    got = one(f, cluster, **kw)
    assert isinstance(got, Adoptable), got
    return got.file, got.edits


def refused(f: Finding, cluster: str = "ams1", **kw: Any) -> Refused:
    got = one(f, cluster, **kw)
    assert isinstance(got, Refused), got
    return got


def test_a_pci_device_added_to_the_kubevirt_cr_becomes_a_profile_device():
    path = "/spec/configuration/permittedHostDevices/pciHostDevices"
    file, got = edits(finding("modified", KUBEVIRT, path, [SERVER], [SERVER, H200]))
    assert file == "clusters/ams1/gpu-profile.yaml"
    # KubeVirt's externalResourceProvider defaults to false: the profile (default true) says so
    device = {
        "class": "GH100 H200",
        "pciVendorSelector": "10DE:2335",
        "resourceName": "nvidia.com/GH100_H200",
        "externalResourceProvider": False,
    }
    assert got == (Edit("append", ("spec", "devices"), device, "pciVendorSelector"),)


def test_an_mdev_type_in_the_kubevirt_package_values_becomes_a_profile_device():
    pkg = ObjectRef("cozystack.io/v1alpha1", "Package", "", "cozystack.kubevirt")
    mdev = {
        "mdevNameSelector": "NVIDIA A100-40C",
        "resourceName": "nvidia.com/NVIDIA_A100-40C",
        "externalResourceProvider": True,
    }
    path = "/spec/components/kubevirt/values/permittedHostDevices/mediatedDevices"
    _, got = edits(finding("modified", pkg, path, [], [mdev]), "fra1")
    assert got == (
        Edit(
            "append",
            ("spec", "devices"),
            {"class": "A100-40C", **mdev},
            "mdevNameSelector",
        ),
    )


def test_a_device_removed_live_leaves_the_profile_only_if_the_profile_lists_it():
    path = "/spec/configuration/permittedHostDevices/pciHostDevices"
    _, got = edits(finding("modified", KUBEVIRT, path, [SERVER, H200], [H200]))
    assert got == (
        Edit(
            "remove", ("spec", "devices"), {"pciVendorSelector": "10DE:2BB5"}, "pciVendorSelector"
        ),
    )
    why = refused(finding("modified", KUBEVIRT, path, [SERVER, H200], [SERVER])).reason
    assert "default device table lists 10DE:2335" in why and "replaceDefaults" in why


def test_node_workload_labels_set_and_drop_spec_nodes():
    node = ObjectRef("v1", "Node", "", "gpu-ams1-02")
    path = "/metadata/labels/nvidia.com~1gpu.workload.config"
    assert edits(finding("modified", node, path, "vm-passthrough", "container"))[1] == (
        Edit("set", ("spec", "nodes", "gpu-ams1-02"), "container"),
    )
    assert edits(finding("removed", node, path, "vm-passthrough", None))[1] == (
        Edit("delete", ("spec", "nodes", "gpu-ams1-02")),
    )
    other = refused(finding("added", node, "/metadata/labels/team", None, "ml"))
    assert other.reason == "only the GPU workload label of a Node is in the profile"
    assert other.revert == (
        "kubectl patch node gpu-ams1-02 --type=json -p "
        """'[{"op": "remove", "path": "/metadata/labels/team"}]'"""
    )


def test_feature_gates_are_adoptable_on_plain_flux_only():
    path = "/spec/configuration/developerConfiguration/featureGates"
    desired = ["HostDevices", "LiveMigration", "CPUManager", "ExpandDisks"]
    live = ["LiveMigration", "HostDevices", "CPUManager", "ExpandDisks", "Snapshot"]
    f = finding(
        "modified", FLUX_KUBEVIRT, path, desired, live, file="clusters/lab1/gpu-profile.yaml"
    )
    assert edits(f, "lab1")[1] == (
        Edit("append", ("spec", "kubevirt", "featureGates"), "Snapshot"),
    )
    gone = finding("modified", FLUX_KUBEVIRT, path, desired, desired[1:])
    assert "HostDevices is removed live" in refused(gone, "lab1").reason
    cozy = refused(finding("modified", KUBEVIRT, path, desired, live))
    assert "on Cozystack the kubevirt chart writes the feature gates" in cozy.reason


def test_mdev_configuration_and_the_vgpu_manager():
    kv = "/spec/configuration/mediatedDevicesConfiguration/mediatedDeviceTypes"
    _, got = edits(finding("modified", KUBEVIRT, kv, ["nvidia-1"], ["nvidia-2"]), "fra1")
    assert got == (
        Edit("set", ("spec", "mediatedDevicesConfiguration", "mediatedDeviceTypes"), ["nvidia-2"]),
    )
    policy = ObjectRef("nvidia.com/v1", "ClusterPolicy", "", "cluster-policy")
    f = finding("modified", policy, "/spec/vgpuManager/version", "550.144.02", "550.163.01")
    assert edits(f, "fra1")[1] == (
        Edit("set", ("spec", "vgpu", "manager", "version"), "550.163.01"),
    )
    whole = finding(
        "modified",
        policy,
        "/spec/vgpuManager",
        {},
        {"repository": "r.example/nv", "version": "1", "imagePullSecrets": [{"name": "pull"}]},
    )
    assert edits(whole, "fra1")[1] == (
        Edit("set", ("spec", "vgpu", "manager", "repository"), "r.example/nv"),
        Edit("set", ("spec", "vgpu", "manager", "version"), "1"),
        Edit("set", ("spec", "vgpu", "manager", "imagePullSecrets"), ["pull"]),
    )
    other = finding("modified", policy, "/spec/driver/enabled", False, True)
    assert "follow spec.variant" in refused(other, "fra1").reason


def test_hami_and_the_gpu_operator_enabled_by_hand_set_the_profile_switch():
    hami = ObjectRef("cozystack.io/v1alpha1", "Package", "", "cozystack.hami")
    assert edits(finding("unmanaged", hami, ""))[1] == (Edit("set", ("spec", "hami"), True),)
    gpu = ObjectRef("cozystack.io/v1alpha1", "Package", "", "cozystack.gpu-operator")
    live = {gpu.key: {"spec": {"variant": "container"}}}
    assert edits(finding("orphan", gpu, ""), live=live)[1] == (
        Edit("set", ("spec", "variant"), "container"),
    )
    path = "/spec/components/platform/values/bundles/enabledPackages"
    platform_live = {
        PLATFORM.key: {
            "spec": {
                "components": {
                    "platform": {"values": {"bundles": {"iaas": {"gpuOperatorVariant": "vgpu"}}}}
                }
            }
        }
    }
    switched = finding("modified", PLATFORM, path, ["a"], ["a", "cozystack.gpu-operator"])
    assert edits(switched, live=platform_live)[1] == (Edit("set", ("spec", "variant"), "vgpu"),)


def test_plain_flux_hami_is_known_by_namespace_and_name_not_by_name_alone():
    ours = ObjectRef("helm.toolkit.fluxcd.io/v2", "HelmRelease", "kube-system", "hami")
    file = "clusters/lab1/gpu-profile.yaml"
    assert edits(finding("unmanaged", ours, "", file=file), "lab1")[1] == (
        Edit("set", ("spec", "hami"), True),
    )
    # a team's own HAMi release in its namespace is not the profile's switch
    theirs = ObjectRef("helm.toolkit.fluxcd.io/v2", "HelmRelease", "team-a", "hami")
    assert "no switch" in refused(finding("unmanaged", theirs, "", file=file), "lab1").reason


def test_a_platform_value_goes_to_platform_yaml_and_a_gpu_key_does_not():
    path = "/spec/components/platform/values/resources/cpuAllocationRatio"
    f = finding("modified", PLATFORM, path, 4, 6, file="clusters/ams1/platform.yaml", field="x")
    file, got = edits(f)
    assert file == "clusters/ams1/platform.yaml"
    assert got == (
        Edit(
            "set",
            ("spec", "components", "platform", "values", "resources", "cpuAllocationRatio"),
            6,
        ),
    )
    gpu = finding("modified", PLATFORM, "/spec/components/platform/values/gpu/x", 1, 2)
    assert "the renderer writes from the profile" in refused(gpu).reason


@pytest.mark.parametrize(
    ("f", "reason", "revert"),
    [
        (
            finding(
                "modified",
                PLATFORM,
                "/spec/x",
                {"redacted": "sha256:1"},
                {"redacted": "sha256:2"},
                redacted=True,
            ),
            "the value is a secret (shown redacted): secrets are never copied into git",
            "gpu-gitops build --cluster ams1 | kubectl apply --server-side --force-conflicts -f -",
        ),
        (
            finding(
                "suspended",
                ObjectRef(
                    "helm.toolkit.fluxcd.io/v2", "HelmRelease", "cozy-gpu-operator", "gpu-operator"
                ),
                "/spec/suspend",
            ),
            "suspending a Flux object is an operation, not a profile value",
            "flux resume helmrelease gpu-operator -n cozy-gpu-operator",
        ),
        (
            Finding(
                "added",
                KUBEVIRT,
                "/spec/configuration/developerConfiguration/logVerbosity",
                live={"virtLauncher": 4},
                revert="next-upgrade",
                revert_release="cozy-kubevirt/kubevirt",
            ),
            "not owned by the profile: no field of gpu-profile.yaml or platform.yaml renders it",
            "flux reconcile helmrelease kubevirt -n cozy-kubevirt --force",
        ),
        (
            Finding(
                "unmanaged", ObjectRef("helm.toolkit.fluxcd.io/v2", "HelmRelease", "ml", "dcgm")
            ),
            "not owned by the profile: no field of gpu-profile.yaml or platform.yaml renders it",
            "kubectl delete helmrelease.helm.toolkit.fluxcd.io dcgm -n ml",
        ),
    ],
)
def test_not_adoptable_findings_say_why_and_how_to_revert(f: Finding, reason: str, revert: str):
    got = refused(f)
    assert (got.reason, got.revert) == (reason, revert)
    assert revert_command(f, "ams1") == revert
    assert "sha256" not in got.revert


# -- the decision points, as tables ----------------------------------------------------------------

NODE = ObjectRef("v1", "Node", "", "gpu-ams1-02")
LABEL = "/metadata/labels/nvidia.com~1gpu.workload.config"
PCI = "/spec/configuration/permittedHostDevices/pciHostDevices"


@pytest.mark.parametrize(
    ("f", "revert"),
    [
        (
            Finding("added", NODE, LABEL, desired=None, live="container"),
            "kubectl label node gpu-ams1-02 nvidia.com/gpu.workload.config-",
        ),
        (
            Finding("modified", NODE, LABEL, desired="vm-passthrough", live="container"),
            "kubectl label node gpu-ams1-02 nvidia.com/gpu.workload.config=vm-passthrough "
            "--overwrite",
        ),
        (
            # reverted at the next reconcile: the patch, not a forced upgrade of its release
            Finding(
                "modified",
                KUBEVIRT,
                "/spec/configuration/x",
                desired=1,
                live=2,
                revert="next-reconcile",
                revert_release="cozy-kubevirt/kubevirt",
            ),
            "kubectl patch kubevirt.kubevirt.io kubevirt -n cozy-kubevirt --type=json -p "
            """'[{"op": "add", "path": "/spec/configuration/x", "value": 1}]'""",
        ),
        (
            Finding("added", KUBEVIRT, "/spec/configuration/x", desired=None, live=2),
            "kubectl patch kubevirt.kubevirt.io kubevirt -n cozy-kubevirt --type=json -p "
            """'[{"op": "remove", "path": "/spec/configuration/x"}]'""",
        ),
    ],
    ids=["label-added", "label-changed", "next-reconcile", "live-only"],
)
def test_each_revert_command_lets_git_win(f: Finding, revert: str) -> None:
    assert revert_command(f, "ams1") == revert


def test_enabled_packages_switch_the_variant_only_when_the_gpu_operator_was_added_by_hand():
    path = "/spec/components/platform/values/bundles/enabledPackages"
    already = finding(
        "modified", PLATFORM, path, ["cozystack.gpu-operator"], ["cozystack.gpu-operator", "b"]
    )
    assert "only the GPU Operator switched on by hand" in refused(already).reason
    default = finding("modified", PLATFORM, path, ["a"], ["a", "cozystack.gpu-operator"])
    assert edits(default, live={})[1] == (Edit("set", ("spec", "variant"), "passthrough"),)


def test_a_device_list_that_differs_only_in_fields_the_profile_does_not_set_is_refused():
    renamed = {**SERVER, "resourceName": "nvidia.com/OTHER"}
    why = refused(finding("modified", KUBEVIRT, PCI, [SERVER], [renamed])).reason
    assert why == "the live device list differs only in fields the profile does not set"


def test_hostdevices_added_live_is_never_copied_into_feature_gates():
    path = "/spec/configuration/developerConfiguration/featureGates"
    f = finding(
        "modified", FLUX_KUBEVIRT, path, ["CPUManager"], ["CPUManager", "HostDevices"],
        file="clusters/lab1/gpu-profile.yaml",
    )  # fmt: skip
    assert (
        refused(f, "lab1").reason == "the gate list differs only in gates the renderer adds itself"
    )


def test_a_mediated_devices_configuration_deleted_live_is_deleted_from_the_profile():
    kv = "/spec/configuration/mediatedDevicesConfiguration/mediatedDeviceTypes"
    _, got = edits(finding("removed", KUBEVIRT, kv, ["nvidia-1"], None), "fra1")
    assert got == (Edit("delete", ("spec", "mediatedDevicesConfiguration", "mediatedDeviceTypes")),)


def test_only_a_whole_vgpu_manager_field_is_adopted():
    policy = ObjectRef("nvidia.com/v1", "ClusterPolicy", "", "cluster-policy")
    one_secret = finding("modified", policy, "/spec/vgpuManager/imagePullSecrets/0", "a", "b")
    why = refused(one_secret, "fra1").reason
    assert why == "only the whole vgpuManager.imagePullSecrets can be adopted"
    secrets = finding("modified", policy, "/spec/vgpuManager/imagePullSecrets", [], ["x"])
    assert edits(secrets, "fra1")[1] == (
        Edit("set", ("spec", "vgpu", "manager", "imagePullSecrets"), ["x"]),
    )


def test_a_helmrelease_made_by_hand_is_a_profile_switch_on_plain_flux_only():
    """On Cozystack the GPU releases are the operator's, generated from Packages: a HelmRelease
    applied by hand there is no profile field (the Package is)."""
    hami = ObjectRef("helm.toolkit.fluxcd.io/v2", "HelmRelease", "kube-system", "hami")
    cozy = refused(finding("unmanaged", hami, ""), "ams1")
    assert (
        cozy.reason == "the HelmRelease's settings come from the profile as a whole, not one field"
    )
    flux = finding("unmanaged", hami, "", file="clusters/lab1/gpu-profile.yaml")
    assert edits(flux, "lab1")[1] == (Edit("set", ("spec", "hami"), True),)
