"""Which profile field owns a finding: plain Flux's GPU HelmReleases by namespace and name."""

from __future__ import annotations

import pytest

from audit.findings.finding import Finding, ObjectRef
from audit.findings.provenance import ProfileContext, explain

_HR = "helm.toolkit.fluxcd.io/v2"


@pytest.mark.parametrize(
    ("namespace", "name", "path", "field"),
    [
        ("kube-system", "hami", ("spec", "values", "scheduler"), "spec.hami"),
        ("kube-system", "hami", ("spec", "interval"), "spec.flux.interval"),
        ("gpu-operator", "gpu-operator", ("spec", "values", "driver"), "spec.variant"),
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
