"""The base a cluster new to git is reviewed against, derived from its platform.yaml."""

from __future__ import annotations

import pytest

from prbot.live_base import live_base
from renderer.platform_file import PLATFORM_KEY
from renderer.profile import ClusterFiles, load_profile_bytes

PROFILE = b"""\
apiVersion: gpu-gitops/v1alpha1
kind: GPUProfile
metadata: {name: c1}
spec:
  platform: {type: cozystack, version: "1.6"}
  variant: container
  nodes: {n1: container}
"""


def _platform(values: str, variant: str = "isp-full") -> bytes:
    head = (
        "apiVersion: cozystack.io/v1alpha1\nkind: Package\n"
        "metadata: {name: cozystack.cozystack-platform}\n"
        f"spec:\n  variant: {variant}\n  components:\n    platform:\n      values:\n"
    )
    return (head + "".join(f"        {line}\n" for line in values.splitlines())).encode()


@pytest.mark.parametrize(
    ("values", "variant", "hami"),
    [
        ("bundles: {enabledPackages: [cozystack.gpu-operator]}", "passthrough", False),
        (
            "bundles: {enabledPackages: [cozystack.gpu-operator, cozystack.hami], "
            "iaas: {gpuOperatorVariant: vgpu}}",
            "vgpu",
            True,
        ),
        (
            "bundles: {enabledPackages: [cozystack.gpu-operator], "
            "disabledPackages: [cozystack.gpu-operator]}",
            "none",
            False,
        ),
        ("bundles: {}", "none", False),
    ],
)
def test_the_live_variant_and_hami_come_from_the_bundle_lists(values, variant, hami):
    head = load_profile_bytes("c1", ClusterFiles(PROFILE, _platform(values)))
    base = live_base(head)
    assert base is not None
    lp, objs = base
    assert (lp.profile.spec.variant, lp.profile.spec.hami) == (variant, hami)
    assert lp.profile.spec.nodes == {}, "node labels are not in platform.yaml"
    assert lp.file == "clusters/c1/platform.yaml"
    assert list(objs) == [PLATFORM_KEY]


def test_live_devices_are_marked_at_their_platform_lines():
    values = (
        "gpu:\n  replaceDefaults: true\n  permittedHostDevices:\n    pciHostDevices:\n"
        "      - {pciVendorSelector: '10DE:26B9', resourceName: nvidia.com/AD102GL_L40S}\n"
        "    mediatedDevices:\n"
        "      - {mdevNameSelector: NVIDIA A100-20C, resourceName: nvidia.com/NVIDIA_A100-20C}\n"
    )
    base = live_base(load_profile_bytes("c1", ClusterFiles(PROFILE, _platform(values))))
    assert base is not None
    lp = base[0]
    assert [(d.pci_vendor_selector, d.mdev_name_selector) for d in lp.profile.spec.devices] == [
        ("10DE:26B9", None),
        (None, "NVIDIA A100-20C"),
    ]
    assert lp.profile.spec.replace_defaults is True
    assert (lp.line("spec", "devices", 0), lp.line("spec", "devices", 1)) == (13, 15)


def test_odd_shapes_and_plain_flux_give_no_or_an_empty_base():
    odd = live_base(
        load_profile_bytes("c1", ClusterFiles(PROFILE, _platform("gpu: not-a-mapping")))
    )
    assert odd is not None and odd[0].profile.spec.devices == []
    flux = PROFILE.replace(b'{type: cozystack, version: "1.6"}', b"{type: flux}")
    assert live_base(load_profile_bytes("c1", ClusterFiles(flux, None))) is None
