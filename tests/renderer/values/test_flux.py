"""The plain-Flux GPU Operator values per variant: which operands each variant turns on."""

from __future__ import annotations

import pytest

from renderer.model import VGPU, Platform, ProfileSpec
from renderer.values.flux import gpu_operator_values


def _spec(variant: str, *, device_manager: bool = False, hami: bool = False) -> ProfileSpec:
    return ProfileSpec(
        platform=Platform(type="flux"),
        variant=variant,  # type: ignore[arg-type]
        vgpu=VGPU(device_manager=device_manager),
        hami=hami,
    )


@pytest.mark.parametrize(
    ("variant", "device_manager", "enabled"),
    [
        ("vgpu", True, True),
        ("vgpu", False, False),
        ("passthrough", True, False),
        ("container", True, False),
        ("none", True, False),
    ],
)
def test_the_vgpu_device_manager_runs_only_on_the_vgpu_variant(
    variant: str, device_manager: bool, enabled: bool
) -> None:
    """`validate` says vgpu.deviceManager is ignored outside vgpu: the values agree."""
    values = gpu_operator_values(_spec(variant, device_manager=device_manager))
    assert values["vgpuDeviceManager"] == {"enabled": enabled}


@pytest.mark.parametrize(("hami", "plugin"), [(False, True), (True, False)])
def test_the_container_variant_leaves_nvidia_gpu_to_hami_when_it_runs(
    hami: bool, plugin: bool
) -> None:
    values = gpu_operator_values(_spec("container", hami=hami))
    assert values["devicePlugin"] == {"enabled": plugin}
    assert values["driver"] == {"enabled": True}
