"""The auditor's prediction of the GPU wiring (audit/checks/wiring.py) against Cozystack's real
charts, rendered by Helm.

`cozystack_wiring` restates two charts: the platform chart's iaas bundle (which Packages, with
which values) and the kubevirt chart's KubeVirt CR (a static gate list, extraFeatureGates,
permittedHostDevices, mediatedDevicesConfiguration). Here the platform chart
(../shared/reference, tests/renderer/values/helmchart.py) renders each Cozystack example's built
platform Package, the kubevirt chart renders the kubevirt Package's values that came out, and the
prediction must equal both on every path the audit compares (its scopes). A gate added to, or
dropped from, the restatement fails here, whatever the demo data say. The demo's live KubeVirt CR
(tests/audit/make_demo.py, written out from the template) is held against the same render.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from audit.checks.wiring import KUBEVIRT_SCOPE, ExpectedWiring, cozystack_wiring
from audit.compare.pairs import compare_objects
from kubedata.objects import ObjectKey
from renderer.cozystack_names import GPU_OPERATOR, KUBEVIRT, PLATFORM_PACKAGE
from tests.apiserver.helm import helm_template, kubevirt_chart
from tests.audit import make_demo
from tests.renderer.values.helmchart import PlatformChart, cozystack_examples

KUBEVIRT_KEY = ObjectKey("kubevirt.io", "KubeVirt", "cozy-kubevirt", "kubevirt")


EXAMPLES = cozystack_examples()


@pytest.fixture(scope="module")
def platform_chart(
    helm_binary: Path, reference_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> PlatformChart:
    return PlatformChart(helm_binary, reference_dir, tmp_path_factory.mktemp("platform-chart"))


class KubevirtChart:
    """Cozystack's kubevirt chart (packages/system/kubevirt), rendered by Helm."""

    def __init__(self, helm: Path, reference: Path, workdir: Path) -> None:
        self.helm, self.workdir = helm, workdir
        self.chart = kubevirt_chart(reference, workdir)

    def kubevirt_cr(self, values: dict[str, Any]) -> dict[str, Any]:
        text = helm_template(
            self.helm, self.chart, "kubevirt", "cozy-kubevirt", values, self.workdir
        )
        [cr] = [d for d in yaml.safe_load_all(text) if d and d.get("kind") == "KubeVirt"]
        return dict(cr)


@pytest.fixture(scope="module")
def kubevirt_chart_renders(
    helm_binary: Path, reference_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> KubevirtChart:
    return KubevirtChart(helm_binary, reference_dir, tmp_path_factory.mktemp("kubevirt-chart"))


def _platform(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [found] = [
        o for o in objects if o["kind"] == "Package" and o["metadata"]["name"] == PLATFORM_PACKAGE
    ]
    return found


def _values(package: dict[str, Any], component: str) -> dict[str, Any]:
    values: dict[str, Any] = package["spec"]["components"][component].get("values") or {}
    return values


def _scoped_changes(expected: ExpectedWiring, key: ObjectKey, real: dict[str, Any]) -> list[Any]:
    """What the audit would see between its prediction and the real render, on its scopes."""
    predicted = expected.get(key)
    assert predicted is not None, f"no prediction of {key}"
    return compare_objects(predicted, real, expected.scopes[key])


def test_there_are_examples_of_every_gpu_variant() -> None:
    assert {"ams1", "fra1", "par1"} <= set(EXAMPLES)  # passthrough, vgpu, container


@pytest.mark.parametrize("cluster", EXAMPLES)
def test_prediction_equals_the_charts(
    cluster: str,
    built: dict[str, Any],
    platform_chart: PlatformChart,
    kubevirt_chart_renders: KubevirtChart,
) -> None:
    lp, objects = built[cluster]
    desired = _platform(objects)
    version = lp.profile.spec.platform.version
    expected = cozystack_wiring(desired, None, version)
    rendered = platform_chart.render(
        _values(desired, "platform"), version, desired["spec"].get("variant")
    )
    packages = {d["metadata"]["name"]: d for d in rendered if d.get("kind") == "Package"}
    kubevirt_pkg = packages.get(KUBEVIRT)
    assert (kubevirt_pkg is None) == (
        expected.kubevirt is None or expected.get(KUBEVIRT_KEY) is None
    )
    if kubevirt_pkg is None:
        return
    # the platform chart: the kubevirt and gpu-operator Packages, on the compared paths
    for name, package in packages.items():
        key = ObjectKey("cozystack.io", "Package", "", name)
        if key in expected.scopes:
            assert _scoped_changes(expected, key, package) == [], name
    assert (GPU_OPERATOR in packages) == any(k.name == GPU_OPERATOR for k in expected.scopes)
    # the kubevirt chart: the KubeVirt CR's GPU wiring, gate by gate, device by device
    real_cr = kubevirt_chart_renders.kubevirt_cr(_values(kubevirt_pkg, "kubevirt"))
    changes = _scoped_changes(expected, KUBEVIRT_KEY, real_cr)
    assert changes == [], [(c.pointer, c.before, c.after) for c in changes]
    predicted_cr = expected.get(KUBEVIRT_KEY)
    assert predicted_cr is not None
    predicted_config = predicted_cr["spec"]["configuration"]
    real_config = real_cr["spec"]["configuration"]
    # same gates in the same order: nothing the audit normalizes away hides a difference
    gates = predicted_config["developerConfiguration"]["featureGates"]
    assert gates == real_config["developerConfiguration"]["featureGates"]
    for wired in ("permittedHostDevices", "mediatedDevicesConfiguration"):
        assert predicted_config.get(wired) == real_config.get(wired), wired
    # not vacuous: what the variant wires is there to compare
    permitted = real_config.get("permittedHostDevices") or {}
    if lp.profile.spec.variant == "passthrough":
        assert permitted.get("pciHostDevices")
        assert "HostDevices" in real_config["developerConfiguration"]["featureGates"]
    if lp.profile.spec.variant == "vgpu":
        assert permitted.get("mediatedDevices")


def test_a_wrong_gate_in_the_prediction_is_caught(
    built: dict[str, Any], platform_chart: PlatformChart, kubevirt_chart_renders: KubevirtChart
) -> None:
    """The oracle can fail: one gate more in the restatement differs from the chart's render."""
    lp, objects = built["ams1"]
    desired = _platform(objects)
    expected = cozystack_wiring(desired, None, lp.profile.spec.platform.version)
    predicted = expected.get(KUBEVIRT_KEY)
    assert predicted is not None
    predicted["spec"]["configuration"]["developerConfiguration"]["featureGates"].append("Sidecar")
    rendered = platform_chart.render(
        _values(desired, "platform"),
        lp.profile.spec.platform.version,
        desired["spec"].get("variant"),
    )
    [kubevirt_pkg] = [d for d in rendered if d["metadata"]["name"] == KUBEVIRT]
    real_cr = kubevirt_chart_renders.kubevirt_cr(_values(kubevirt_pkg, "kubevirt"))
    [change] = _scoped_changes(expected, KUBEVIRT_KEY, real_cr)
    assert change.pointer == "/spec/configuration/developerConfiguration/featureGates"
    assert change.details == ("removed Sidecar",)


@pytest.mark.parametrize("cluster", ["ams1"])
def test_demo_kubevirt_cr_is_the_charts_render(
    cluster: str,
    built: dict[str, Any],
    platform_chart: PlatformChart,
    kubevirt_chart_renders: KubevirtChart,
) -> None:
    """make_demo writes the released KubeVirt CR out by hand, not with wiring.py: it must be
    exactly what the kubevirt chart renders from the kubevirt Package's values."""
    lp, objects = built[cluster]
    desired = _platform(objects)
    rendered = platform_chart.render(
        _values(desired, "platform"),
        lp.profile.spec.platform.version,
        desired["spec"].get("variant"),
    )
    [kubevirt_pkg] = [d for d in rendered if d["metadata"]["name"] == KUBEVIRT]
    values = _values(kubevirt_pkg, "kubevirt")
    assert make_demo.kubevirt_cr(copy.deepcopy(values)) == kubevirt_chart_renders.kubevirt_cr(
        values
    )


def test_the_scope_is_the_gpu_wiring() -> None:
    assert [("/".join(p)) for p in KUBEVIRT_SCOPE] == [
        "spec/configuration/developerConfiguration/featureGates",
        "spec/configuration/permittedHostDevices",
        "spec/configuration/mediatedDevicesConfiguration",
    ]
