"""The demo's data: the snapshots shipped as package data are what tests/audit/make_demo.py
writes, from a chart render made by real Helm (tests/audit/demo_chart.py), and the audit of them
finds exactly the planted drift (make_demo's docstring), nothing more, nothing less."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.audit import demo_chart, make_demo
from tests.audit.audit_helpers import audit_cli, demo_empty, demo_objects, demo_repo, write_snapshot
from tests.renderer.values.helmchart import PlatformChart


def test_committed_demo_snapshots_are_current() -> None:
    for rel, text in make_demo.generate().items():
        path = make_demo.DEMO / rel
        assert path.is_file(), f"{rel} missing: run python -m tests.audit.make_demo"
        assert path.read_text(encoding="utf-8") == text, (
            f"{rel} is stale: run python -m tests.audit.make_demo"
        )
    written = {
        p.relative_to(make_demo.DEMO).as_posix()
        for p in (make_demo.DEMO / "snapshots").rglob("*.yaml")
    }
    assert written == set(make_demo.generate())


@pytest.mark.parametrize("cluster", sorted(make_demo.DEMO_CLUSTERS))
def test_the_committed_chart_render_is_what_helm_renders_today(
    cluster: str, helm_binary: Path, reference_dir: Path, tmp_path: Path
) -> None:
    """The demo's live Packages are the real chart's output for the cluster's platform values."""
    chart = PlatformChart(helm_binary, reference_dir, tmp_path)
    platform, _ = make_demo.built(cluster, make_demo.DEMO_CLUSTERS[cluster])
    committed = (demo_chart.CHART_DIR / f"{cluster}.yaml").read_text(encoding="utf-8")
    assert demo_chart.render(chart, cluster, platform) == committed, (
        "run python -m tests.audit.demo_chart, then python -m tests.audit.make_demo"
    )


def test_a_chart_render_of_other_values_is_refused() -> None:
    platform, _ = make_demo.built("ams1", make_demo.DEMO_CLUSTERS["ams1"])
    assert set(demo_chart.load("ams1", platform)) == {
        "cozystack.gpu-operator",
        "cozystack.kubevirt",
    }
    platform["spec"]["components"]["platform"]["values"]["gpu"]["replaceDefaults"] = True
    with pytest.raises(demo_chart.DemoChartError, match="rendered from other platform values"):
        demo_chart.load("ams1", platform)


# -- the demo's whole finding set ------------------------------------------------------------------

PCI = "/spec/configuration/permittedHostDevices/pciHostDevices"
Row = tuple[str, str, str, str, str, str, bool, tuple[str, ...]]
"""(type, kind, namespace/name, path, severity, revert, missed by drift detection, managers)"""

AMS1: set[Row] = {
    # kubectl edit appended the Workstation to the atomic device list: lost at the next upgrade
    ("modified", "KubeVirt", "cozy-kubevirt/kubevirt", PCI, "high", "next-upgrade", True,
     ("kubectl-edit",)),
    # Lens set a field no chart renders: nothing ever reverts it
    ("added", "KubeVirt", "cozy-kubevirt/kubevirt",
     "/spec/configuration/developerConfiguration/logVerbosity", "medium", "never", True,
     ("node-fetch",)),
    # flux suspend on the GPU Operator's release
    ("suspended", "HelmRelease", "cozy-gpu-operator/gpu-operator", "/spec/suspend", "medium",
     "never", True, ("flux",)),
    # a VM asks for a device name no entry permits (its vm-instance release wrote it)
    ("missing", "VirtualMachine", "tenant-root/train02",
     "/spec/template/spec/domain/devices/gpus/0/deviceName", "high", "never", True,
     ("helm-controller",)),
    # a GPU node relabelled by hand
    ("modified", "Node", "gpu-ams1-02", "/metadata/labels/nvidia.com~1gpu.workload.config",
     "medium", "never", True, ("kubectl-label",)),
}  # fmt: skip
STO1: set[Row] = {
    # helm.sh/resource-policy: keep left the retired GPU Operator's Package
    ("orphan", "Package", "cozystack.gpu-operator", "", "high", "never", True,
     ("helm-controller",)),
    # a DCGM exporter applied by hand
    ("unmanaged", "HelmRelease", "tenant-ml/nvidia-dcgm-exporter", "", "low", "never", True,
     ("kubectl-client-side-apply",)),
}  # fmt: skip


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, dict[str, Any]]]:
    root = tmp_path_factory.mktemp("demo")
    _, tip = demo_repo(root / "repo")
    out = {}
    for cluster in make_demo.DEMO_CLUSTERS:
        snapshot = write_snapshot(root / cluster, demo_objects(cluster, tip), demo_empty(cluster))
        code, text, _ = audit_cli(cluster, "--snapshot", snapshot, root / "repo", "-o", "json")
        out[cluster] = code, json.loads(text)
    return out


def rows(doc: dict[str, Any]) -> list[Row]:
    return [
        (
            f["type"],
            f["object"]["kind"],
            f"{f['object']['namespace']}/{f['object']['name']}".lstrip("/"),
            f["path"],
            f["severity"],
            f["revert"],
            f["missedByDriftDetection"],
            tuple(m["manager"] for m in f["managers"]),
        )
        for f in doc["findings"]
    ]


@pytest.mark.parametrize(("cluster", "expected"), [("ams1", AMS1), ("sto1", STO1)])
def test_the_demo_audit_finds_exactly_the_planted_drift(
    audited: dict[str, tuple[int, dict[str, Any]]], cluster: str, expected: set[Row]
) -> None:
    code, doc = audited[cluster]
    assert (code, doc["complete"]) == (1, True)
    got = rows(doc)
    assert len(got) == len(set(got))  # each once
    assert set(got) == expected


def test_the_demo_noise_is_noted_not_reported(
    audited: dict[str, tuple[int, dict[str, Any]]],
) -> None:
    """ams1's planted noise: reordered gates, enabledPackages and device list; CRD defaults."""
    notes = audited["ams1"][1]["notes"]
    [reordered] = [n for n in notes if "only reordered" in n]
    assert reordered.startswith("3 list(s) only reordered")
    assert "/spec/configuration/developerConfiguration/featureGates" in reordered
    assert "3 live-only field(s) no manager wrote (API defaults) were not reported" in notes
