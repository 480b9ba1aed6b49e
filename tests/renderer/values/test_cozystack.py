"""The Cozystack values the profile writes, and the Packages the platform chart makes of them.

The chart itself is the oracle in test_oracle.py; these pin the pure functions' own contracts.
"""

from __future__ import annotations

import pytest

from renderer.cozystack_names import GPU_OPERATOR, HAMI, KUBEVIRT
from renderer.model import Device, Platform, ProfileSpec
from renderer.values.cozystack import (
    ChartFailure,
    coalesce,
    effective_values,
    packages_leaving,
    platform_gpu_values,
    predict_packages,
)


def _spec(**kw) -> ProfileSpec:
    return ProfileSpec(platform=Platform(type="cozystack", version="1.6"), **kw)


def test_coalesce_merges_maps_replaces_lists_and_null_deletes():
    base = {"a": {"x": 1, "y": 2}, "l": [1, 2], "gone": {"k": 1}}
    assert coalesce(base, {"a": {"y": 3}, "l": [9], "gone": None}) == {
        "a": {"x": 1, "y": 3},
        "l": [9],
    }
    assert base["a"] == {"x": 1, "y": 2}, "the input is not mutated"


def test_enabled_packages_keep_their_order_and_gain_the_gpu_operator():
    eff = effective_values({"bundles": {"enabledPackages": ["b", GPU_OPERATOR, "a"]}}, "isp-full")
    out = platform_gpu_values(_spec(variant="passthrough", hami=True), eff)
    assert out["bundles.enabledPackages"] == ["b", GPU_OPERATOR, "a", HAMI]
    assert out["bundles.iaas.gpuOperatorVariant"] == "default"


def test_isp_full_generic_starts_from_its_own_enabled_list():
    eff = effective_values({}, "isp-full-generic")
    out = platform_gpu_values(_spec(variant="vgpu"), eff)
    assert out["bundles.enabledPackages"] == ["cozystack.backupstrategy-controller", GPU_OPERATOR]


def test_disabled_gpu_operator_is_released_when_gpus_are_on_and_kept_otherwise():
    eff = effective_values({"bundles": {"disabledPackages": [GPU_OPERATOR, HAMI, "x"]}}, "isp-full")
    assert platform_gpu_values(_spec(variant="passthrough"), eff)["bundles.disabledPackages"] == [
        HAMI,
        "x",
    ]
    # unchanged, the admin's list is not written at all (it would replace the live one whole)
    assert "bundles.disabledPackages" not in platform_gpu_values(_spec(variant="none"), eff)
    assert "bundles.disabledPackages" not in platform_gpu_values(
        _spec(variant="passthrough"), effective_values({}, "isp-full")
    )


@pytest.mark.parametrize(("current", "expected"), [("vgpu", "vgpu"), ("container", "default")])
def test_container_variant_keeps_a_valid_bundle_variant_and_resets_an_invalid_one(
    current, expected
):
    eff = effective_values(
        {"bundles": {"iaas": {"gpuOperatorVariant": current}, "enabledPackages": [GPU_OPERATOR]}},
        "isp-full",
    )
    out = platform_gpu_values(_spec(variant="container"), eff)
    assert out["bundles.iaas.gpuOperatorVariant"] == expected
    assert GPU_OPERATOR not in out["bundles.enabledPackages"]


def test_passthrough_never_writes_mediated_devices():
    devices = [
        Device(class_="A", resource_name="nvidia.com/A", pci_vendor_selector="10DE:0001"),
        Device(class_="M", resource_name="nvidia.com/M", mdev_name_selector="NVIDIA M"),
    ]
    gpu = platform_gpu_values(
        _spec(variant="passthrough", devices=devices), effective_values({}, None)
    )["gpu"]
    assert gpu["permittedHostDevices"]["mediatedDevices"] == []
    assert [d["pciVendorSelector"] for d in gpu["permittedHostDevices"]["pciHostDevices"]] == [
        "10DE:0001"
    ]


def test_prediction_appends_user_devices_after_the_default_table():
    values = effective_values(
        {
            "bundles": {"enabledPackages": [GPU_OPERATOR]},
            "gpu": {
                "permittedHostDevices": {"pciHostDevices": [{"pciVendorSelector": "10DE:2BB5"}]}
            },
        },
        "isp-full",
    )
    kubevirt = predict_packages(values, "1.6")[0]
    pci = kubevirt["spec"]["components"]["kubevirt"]["values"]["permittedHostDevices"][
        "pciHostDevices"
    ]
    assert len(pci) == 20 and pci[-1] == {"pciVendorSelector": "10DE:2BB5"}


def test_prediction_fails_as_the_chart_does_on_main_without_the_system_bundle():
    values = effective_values({"bundles": {"system": {"enabled": False}}}, "isp-full")
    assert predict_packages(values, "1.6")  # v1.6.2 has no such guard
    with pytest.raises(ChartFailure, match=r"requires bundles\.system\.enabled"):
        predict_packages(values, "main")


def test_no_packages_without_the_iaas_bundle():
    assert predict_packages(effective_values({}, "default"), "1.6") == []
    with pytest.raises(ChartFailure, match=r"isp-full"):
        predict_packages(
            effective_values({"bundles": {"iaas": {"enabled": True}}}, "isp-hosted"), "1.6"
        )


@pytest.mark.parametrize(
    ("variant", "hami", "listed"),
    [
        ("passthrough", True, True),
        ("vgpu", True, True),
        ("passthrough", False, False),
        ("container", True, False),
        ("none", True, False),
    ],
)
def test_hami_is_in_the_bundle_only_with_the_bundles_gpu_operator(variant, hami, listed):
    """HAMi in the bundle goes with the bundle's GPU Operator (passthrough, vgpu); container
    installs both as standalone Packages, and none installs neither."""
    eff = effective_values({"bundles": {"enabledPackages": ["a"]}}, "isp-full")
    out = platform_gpu_values(_spec(variant=variant, hami=hami), eff)
    assert (HAMI in out["bundles.enabledPackages"]) is listed
    in_bundle = variant in ("passthrough", "vgpu")
    assert (GPU_OPERATOR in out["bundles.enabledPackages"]) is in_bundle


def test_a_package_leaves_by_dropping_out_of_enabled_or_entering_disabled():
    before = effective_values({"bundles": {"enabledPackages": [GPU_OPERATOR, HAMI]}}, "isp-full")
    dropped = effective_values({"bundles": {"enabledPackages": [HAMI]}}, "isp-full")
    assert packages_leaving(before, dropped) == [GPU_OPERATOR]
    disabled = effective_values(
        {"bundles": {"enabledPackages": [GPU_OPERATOR, HAMI], "disabledPackages": [HAMI]}},
        "isp-full",
    )
    assert packages_leaving(before, disabled) == [HAMI]
    # disabling a package that was never on announces it too: its Package may be kept live
    never = effective_values(
        {"bundles": {"enabledPackages": [GPU_OPERATOR, HAMI], "disabledPackages": ["x"]}},
        "isp-full",
    )
    assert packages_leaving(before, never) == ["x"]
    assert packages_leaving(before, before) == []


@pytest.mark.parametrize(
    ("variant", "values", "names"),
    [
        ("isp-full", {"enabledPackages": [GPU_OPERATOR]}, [KUBEVIRT, GPU_OPERATOR]),
        ("isp-full-generic", {"enabledPackages": [GPU_OPERATOR]}, [KUBEVIRT, GPU_OPERATOR]),
        (
            "isp-full",
            {"enabledPackages": [GPU_OPERATOR], "disabledPackages": [GPU_OPERATOR]},
            [KUBEVIRT],
        ),
        ("isp-full", {"enabledPackages": []}, [KUBEVIRT]),
    ],
    ids=["isp-full", "isp-full-generic", "disabled-wins", "not-enabled"],
)
def test_the_gpu_packages_the_iaas_bundle_renders(variant, values, names):
    """Without the chart at hand (test_oracle.py holds these against it): both full system
    variants render the bundle, and disabledPackages wins over enabledPackages."""
    eff = effective_values({"bundles": values}, variant)
    assert [p["metadata"]["name"] for p in predict_packages(eff, "1.6")] == names
