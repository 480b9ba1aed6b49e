"""Which release of a CRD's product the live state says the cluster runs."""

from __future__ import annotations

from typing import Any

from audit.compare.crd_tables import kind_table
from audit.sources.helm_release import HelmRelease
from audit.sources.running_version import running_version

CP = kind_table("nvidia.com", "ClusterPolicy")
KV = kind_table("kubevirt.io", "KubeVirt")


def release(name: str, chart: str, version: str) -> HelmRelease:
    return HelmRelease(
        name=name,
        namespace="gpu-operator",
        revision=3,
        status="deployed",
        chart_name=chart,
        chart_version=version,
        app_version=version,
        apply_method="csa",
        values_digest="sha256:" + "0" * 64,
        objects=(),
        secret=f"gpu-operator/sh.helm.release.v1.{name}.v3",
    )


def policy(**meta: Any) -> dict[str, Any]:
    return {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": meta}


OWNED = {
    "meta.helm.sh/release-name": "gpu-operator",
    "meta.helm.sh/release-namespace": "gpu-operator",
}


def test_the_objects_own_release_names_the_chart_version() -> None:
    assert CP is not None
    releases = {
        ("gpu-operator", "gpu-operator"): release("gpu-operator", "gpu-operator", "v25.3.2"),
        ("gpu-operator", "other"): release("other", "gpu-operator", "v24.9.2"),
    }
    found = running_version(CP, policy(annotations=OWNED), releases)
    assert found == ("v25.3.2", "chart gpu-operator of Helm release gpu-operator/gpu-operator")
    # two releases of the chart and none owning the object: unknown, not a guess
    assert running_version(CP, policy(), releases) is None
    # one release of the chart: that one; a chart version without its v is spelt with it
    only = {("gpu-operator", "x"): release("x", "gpu-operator", "25.10.1")}
    assert running_version(CP, policy(), only) == (
        "v25.10.1",
        "chart gpu-operator of Helm release gpu-operator/x",
    )
    # a wrapper chart of another name (Cozystack's) says nothing of the operator's release
    assert running_version(CP, policy(), {("a", "b"): release("b", "cozy-gpu", "0.0.0")}) is None


def test_label_and_operator_status() -> None:
    assert CP is not None and KV is not None
    labelled = policy(labels={"helm.sh/chart": "gpu-operator-v26.3.1"})
    assert running_version(CP, labelled, {}) == (
        "v26.3.1",
        "its label helm.sh/chart=gpu-operator-v26.3.1",
    )
    kubevirt = {"kind": "KubeVirt", "status": {"observedKubeVirtVersion": "v1.6.2"}}
    assert running_version(KV, kubevirt, {}) == (
        "v1.6.2",
        "virt-operator's status.observedKubeVirtVersion",
    )
    assert running_version(KV, {"kind": "KubeVirt"}, {}) is None
