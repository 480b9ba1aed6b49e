"""Which profile field owns a finding: plain Flux's GPU HelmReleases by namespace and name."""

from __future__ import annotations

import pytest

from audit.findings.finding import Finding, ObjectRef
from audit.findings.provenance import ProfileContext, explain

_HR = "helm.toolkit.fluxcd.io/v2"


GPU_OPERATOR = ("gpu-operator", "gpu-operator")


@pytest.mark.parametrize(
    ("namespace", "name", "path", "field"),
    [
        ("kube-system", "hami", ("spec", "interval"), "spec.flux.interval"),
        (*GPU_OPERATOR, ("spec", "values", "driver", "enabled"), "spec.variant"),
        (*GPU_OPERATOR, ("spec", "values", "sandboxWorkloads", "defaultWorkload"), "spec.variant"),
        (*GPU_OPERATOR, ("spec", "values", "vgpuManager", "repository"), "spec.vgpu.manager"),
        (
            *GPU_OPERATOR,
            ("spec", "values", "vgpuManager", "imagePullSecrets", "*"),
            "spec.vgpu.manager",
        ),
        (
            *GPU_OPERATOR,
            ("spec", "values", "vgpuDeviceManager", "enabled"),
            "spec.vgpu.deviceManager",
        ),
        (
            *GPU_OPERATOR,
            ("spec", "values", "driver", "licensingConfig", "secretName"),
            "spec.vgpu.licensing",
        ),
        (*GPU_OPERATOR, ("spec", "chart", "spec", "version"), "spec.gpuOperatorVersion"),
    ],
)
def test_the_releases_the_plain_flux_bases_install_are_the_profile_s(
    namespace: str, name: str, path: tuple[str, ...], field: str
):
    finding = Finding("modified", ObjectRef(_HR, "HelmRelease", namespace, name))
    source, fix = explain(finding, ProfileContext("lab1", "flux"), path)
    assert source is not None
    assert (source.file, source.field) == ("clusters/lab1/gpu-profile.yaml", field)
    assert fix.startswith(f"set it through {field} of clusters/lab1/gpu-profile.yaml")


@pytest.mark.parametrize(
    ("namespace", "name"),
    [("team-a", "hami"), ("kube-system", "gpu-operator"), ("gpu-operator", "hami")],
)
def test_a_release_of_the_same_name_elsewhere_is_no_profile_field_s(namespace: str, name: str):
    finding = Finding("modified", ObjectRef(_HR, "HelmRelease", namespace, name))
    assert explain(finding, ProfileContext("lab1", "flux"), ("spec", "values", "x")) == (None, "")


@pytest.mark.parametrize(
    ("namespace", "name", "path"),
    [
        (*GPU_OPERATOR, ("spec", "values", "driver", "repository")),
        (*GPU_OPERATOR, ("spec", "values", "toolkit", "enabled")),
        ("kube-system", "hami", ("spec", "values", "scheduler")),
        ("kube-system", "hami", ("spec", "values", "devicePlugin", "enabled")),
    ],
)
def test_a_value_no_profile_field_sets_is_not_owned_with_its_revert(
    namespace: str, name: str, path: tuple[str, ...]
):
    finding = Finding("added", ObjectRef(_HR, "HelmRelease", namespace, name))
    finding.path = "/" + "/".join(path)
    source, fix = explain(finding, ProfileContext("lab1", "flux"), path)
    assert source is None
    assert fix == (
        f"not owned by the profile: no field of clusters/lab1/gpu-profile.yaml sets "
        f"{'.'.join(path)}, so the profile cannot carry it; revert it: kubectl patch "
        f"helmrelease.helm.toolkit.fluxcd.io {name} -n {namespace} --type=json -p "
        f"""'[{{"op": "remove", "path": "{finding.path}"}}]'"""
    )
