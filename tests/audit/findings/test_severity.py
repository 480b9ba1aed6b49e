"""Severity from what an object and a field are, never from a name pattern (DESIGN §6)."""

from __future__ import annotations

import pytest

from audit.findings.finding import Finding, FindingType, ObjectRef, Revert
from audit.findings.severity import is_gpu_object, is_gpu_path, severity_of

HR = "helm.toolkit.fluxcd.io/v2"


def severity(ftype: FindingType, ref: ObjectRef, *field_path: str, revert: Revert = "never") -> str:
    finding = Finding(type=ftype, object=ref, path="/" + "/".join(field_path), revert=revert)
    return severity_of(finding, field_path)


@pytest.mark.parametrize(
    ("ref", "gpu"),
    [
        # the kinds that are GPU wiring, whatever their name
        (ObjectRef("kubevirt.io/v1", "KubeVirt", "virt", "my-kv"), True),
        (ObjectRef("nvidia.com/v1", "ClusterPolicy", "", "cluster-policy"), True),
        # the Packages and releases of the GPU stack, as the renderer names them
        (ObjectRef("cozystack.io/v1alpha1", "Package", "", "cozystack.gpu-operator"), True),
        (ObjectRef("cozystack.io/v1alpha1", "Package", "", "cozystack.cozystack-platform"), True),
        (ObjectRef(HR, "HelmRelease", "cozy-gpu-operator", "gpu-operator"), True),
        (ObjectRef(HR, "HelmRelease", "gpu-operator", "gpu-operator"), True),  # plain Flux
        (ObjectRef(HR, "HelmRelease", "kube-system", "hami"), True),
        # names that merely look like GPU software carry no wiring
        (ObjectRef(HR, "HelmRelease", "tenant-ml", "nvidia-dcgm-exporter"), False),
        (ObjectRef(HR, "HelmRelease", "tenant-ml", "gpu-operator"), False),  # not where ours is
        (ObjectRef("cozystack.io/v1alpha1", "Package", "", "cozystack.nvidia-extras"), False),
        (ObjectRef("apps/v1", "Deployment", "gpu-operator", "gpu-operator"), False),
    ],
)
def test_gpu_objects_are_known_by_what_they_are(ref: ObjectRef, gpu: bool) -> None:
    assert is_gpu_object(ref.group, ref.kind, ref.namespace, ref.name) is gpu


def test_a_hand_applied_release_named_like_gpu_software_is_not_a_gpu_object() -> None:
    dcgm = ObjectRef(HR, "HelmRelease", "tenant-ml", "nvidia-dcgm-exporter")
    ours = ObjectRef(HR, "HelmRelease", "gpu-operator", "gpu-operator")
    assert severity("unmanaged", dcgm) == "low"
    assert severity("unmanaged", ours) == "medium"
    assert severity("modified", dcgm, "spec", "values", "driver", "enabled") == "low"
    assert severity("modified", ours, "spec", "values", "driver", "enabled") == "high"


def test_the_variant_field_is_wiring_only_on_the_gpu_operator_package() -> None:
    package = ("cozystack.io", "Package", "")
    assert is_gpu_path(*package, "cozystack.gpu-operator", ("spec", "variant"))
    assert not is_gpu_path(*package, "cozystack.kubevirt", ("spec", "variant"))
    orphan = ObjectRef("cozystack.io/v1alpha1", "Package", "", "cozystack.gpu-operator")
    assert severity("orphan", orphan) == "high"


def test_releases_whose_values_are_their_packages_are_checked_on_the_package() -> None:
    assert not is_gpu_path(
        "helm.toolkit.fluxcd.io", "HelmRelease", "cozy-kubevirt", "kubevirt", ("spec", "values")
    )
    assert is_gpu_path(
        "cozystack.io",
        "Package",
        "",
        "cozystack.kubevirt",
        ("spec", "components", "kubevirt", "values", "permittedHostDevices", "pciHostDevices"),
    )
