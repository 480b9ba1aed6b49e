"""After merge the audit is clean for every adopted finding: audit -> adopt -> merge -> render ->
publish -> Flux applies -> audit again, on the demo snapshots.

The second audit reads the same live cluster, as it stands once Flux has applied the published
revision (the rendered objects merged in by server-side apply) and the platform release has
rendered its Packages from the new values. The kubevirt release has not been upgraded yet: where
live already holds what the profile now asks for, that is a rollout, not drift.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from audit.checks.wiring import ssa_merge
from kubedata.yaml_io import load_all
from renderer.cozystack_names import platform_values
from renderer.kustomize.workers import build_overlays
from renderer.publish.publish import publish
from renderer.render import render_profiles
from renderer.validate import check_clusters
from renderer.values.cozystack import effective_values, predict_packages
from tests.audit.audit_helpers import demo_empty, demo_objects, demo_repo, run, write_snapshot


def audit(cluster: str, snapshot: Path, repo: Path) -> list[dict[str, Any]]:
    code, out, err = run(
        "audit", "--cluster", cluster, "--snapshot", str(snapshot), "--repo", str(repo),
        "-o", "json",
    )  # fmt: skip
    assert code in (0, 1), err
    findings: list[dict[str, Any]] = json.loads(out)["findings"]
    return findings


def rolled_out(objects: list[dict[str, Any]], repo: Path, cluster: str, tip: str) -> None:
    """Flux applied the published revision; the platform release rendered its Packages."""
    checked = check_clusters(repo, [cluster])
    built = load_all(build_overlays(render_profiles(checked.profiles).overlays)[cluster])
    rendered = {(o["kind"], o["metadata"]["name"]): o for o in built}
    for obj in objects:
        status = obj.get("status") or {}
        if obj["kind"] == "Kustomization" and "lastAppliedRevision" in status:
            status["lastAppliedRevision"] = f"rendered@sha1:{tip}"
        desired = rendered.get((obj["kind"], obj["metadata"]["name"]))
        if desired is not None:
            obj["spec"] = ssa_merge(obj["spec"], desired["spec"])
    platform = next(o for o in objects if o["metadata"]["name"] == "cozystack.cozystack-platform")
    # the adopted values are new: no committed chart render has them (the chart's own agreement
    # with this prediction is tests/renderer/values/test_oracle.py's)
    values = effective_values(platform_values(platform), platform["spec"].get("variant"))
    predicted = {p["metadata"]["name"]: p for p in predict_packages(values, "1.6")}
    for obj in objects:
        if obj["kind"] == "Package" and obj["metadata"]["name"] in predicted:
            obj["spec"] = predicted[obj["metadata"]["name"]]["spec"]


def spot(f: dict[str, Any]) -> tuple[str, str, str]:
    return f["object"]["kind"], f["object"]["name"], f["path"]


@pytest.mark.parametrize(
    ("cluster", "adopted"),
    [
        (
            "ams1",
            {
                ("KubeVirt", "kubevirt", "/spec/configuration/permittedHostDevices/pciHostDevices"),
                ("Node", "gpu-ams1-02", "/metadata/labels/nvidia.com~1gpu.workload.config"),
            },
        ),
        ("sto1", {("Package", "cozystack.gpu-operator", "")}),
    ],
)
def test_adopted_findings_are_gone_after_merge_and_publish(tmp_path, cluster, adopted) -> None:
    repo, tip = demo_repo(tmp_path / "repo")
    objects = demo_objects(cluster, tip)
    empty = demo_empty(cluster)
    snapshot = write_snapshot(tmp_path / "before", objects, empty)
    first = audit(cluster, snapshot, tmp_path / "repo")
    assert adopted <= {spot(f) for f in first}

    code, _, err = run(
        "adopt", "--cluster", cluster, "--snapshot", str(snapshot), "--repo", str(tmp_path / "repo")
    )
    assert code == 0, err
    (branch,) = [h.name for h in repo.heads if h.name.startswith(f"adopt/{cluster}/")]
    repo.git.merge("-q", "--ff-only", branch)
    assert run("render", "--check", "--cluster", cluster, "--repo", str(tmp_path / "repo"))[0] == 0
    new_tip = publish(tmp_path / "repo").tip
    assert new_tip and new_tip != tip

    rolled_out(objects, tmp_path / "repo", cluster, new_tip)
    second = audit(cluster, write_snapshot(tmp_path / "after", objects, empty), tmp_path / "repo")
    assert not adopted & {spot(f) for f in second}
    # what was not adopted is still reported: adopt hides nothing
    kept = {spot(f) for f in first} - adopted
    not_adopted = {s for s in kept if s[0] in ("HelmRelease", "VirtualMachine")}
    assert not_adopted <= {spot(f) for f in second}
    # and adopting again finds nothing new to adopt
    code, _, err = run(
        "adopt", "--cluster", cluster, "--snapshot", str(tmp_path / "after"),
        "--repo", str(tmp_path / "repo"),
    )  # fmt: skip
    assert code == 0, err
    assert f"nothing to adopt in {cluster}" in err
