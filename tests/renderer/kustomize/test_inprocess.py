"""The in-process build against kustomize, its reference: every example cluster and a generated
variety (every base, audit settings, alerts, KubeVirt names) built both ways give the same bytes;
what it does not reproduce is left to kustomize, which then answers as before."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

import pytest

from benchmarks.profiles import write_profiles
from renderer.errors import BuildError
from renderer.kustomize.inprocess import build_generated
from renderer.kustomize.workers import build_dirs, build_overlays, materialize
from renderer.overlays import Overlay, Patch, cluster_overlay
from renderer.render import render_profiles
from renderer.validate import check_clusters
from tests.conftest import REPO_ROOT
from tests.renderer.profile_texts import HEAD, PLATFORM_OK, write_cluster
from tests.renderer.test_audit_rbac import PROFILES, loaded

_AUDITS = {
    "defaults": "  audit: {}\n",
    "alerts": (
        "  audit: {output: prometheus, pushgateway: http://pgw.monitoring:9091, alerts: true}\n"
    ),
    "alert-settings": (
        "  audit:\n    schedule: '@daily'\n    image: ghcr.io/example/gpu-gitops:0.1.0\n"
        "    resources: {requests: {cpu: 100m, memory: 1Gi}, limits: {memory: 2Gi}}\n"
        "    alerts: {labels: {release: kube-prometheus-stack}, "
        "runbookBaseURL: https://runbooks.example.com/gpu}\n"
    ),
}


def _by_kustomize(tmp: Path, overlays: Mapping[str, Overlay]) -> dict[str, str]:
    materialize(tmp, overlays)
    names = sorted(overlays)
    return dict(zip(names, build_dirs([tmp / "overlays" / n for n in names]), strict=True))


def _variety(tmp: Path) -> dict[str, Overlay]:
    write_profiles(tmp, 150)
    overlays = render_profiles(check_clusters(tmp).profiles).overlays
    for (name, spec), (audit_name, audit) in zip(
        [*PROFILES.items()] * len(_AUDITS), [*_AUDITS.items()] * len(PROFILES), strict=True
    ):
        overlays[f"{name}-{audit_name}"] = cluster_overlay(loaded(spec, audit))
    return overlays


@pytest.mark.parametrize("source", ["examples", "variety"])
def test_every_overlay_is_built_in_process_as_kustomize_builds_it(tmp_path: Path, source: str):
    if source == "examples":
        overlays = render_profiles(check_clusters(REPO_ROOT).profiles).overlays
    else:
        overlays = _variety(tmp_path / "profiles")
    bases = {b for o in overlays.values() for b in o.bases}
    if source == "variety":  # every base the tool ships, and the audit's secrets bases
        assert {"audit-job", "audit-alerts", "flux-hami", "flux-kubevirt", "cozystack"} <= bases
    reference = _by_kustomize(tmp_path / "kustomize", overlays)
    for name, overlay in overlays.items():
        ours = build_generated(overlay)
        assert ours is not None, f"{name} was left to kustomize"
        assert ours == reference[name], name
    assert build_overlays(overlays) == reference


def test_an_overlay_the_tool_did_not_write_is_built_by_kustomize(tmp_path: Path):
    (overlay,) = render_profiles(check_clusters(REPO_ROOT, ["lab1"]).profiles).overlays.values()
    by_hand = dataclasses.replace(overlay, patches=None)
    assert build_generated(by_hand) is None
    assert build_overlays({"lab1": by_hand}) == _by_kustomize(tmp_path, {"lab1": overlay})


def test_a_value_it_does_not_print_leaves_the_overlay_to_kustomize(tmp_path: Path):
    """A float in platform.yaml's values: kustomize prints it, in its way."""
    platform = PLATFORM_OK + "        storage: {ratio: 0.5}\n"
    spec = "  platform: {type: cozystack, version: '1.6'}\n  variant: container\n"
    root = write_cluster(tmp_path / "repo", HEAD + spec, platform=platform)
    overlays = render_profiles(check_clusters(root).profiles).overlays
    assert build_generated(overlays["c1"]) is None
    built = build_overlays(overlays)
    assert "ratio: 0.5" in built["c1"]
    assert built == _by_kustomize(tmp_path / "kustomize", overlays)


def test_a_patch_that_does_not_apply_fails_with_kustomizes_message():
    (overlay,) = render_profiles(check_clusters(REPO_ROOT, ["lab1"]).profiles).overlays.values()
    assert overlay.patches
    first = overlay.patches[0]
    broken = Patch(first.file, first.kind, first.name, (("replace", "/spec/nothing/here", 1),))
    files = dict(overlay.files)
    files[first.file] = "- op: replace\n  path: /spec/nothing/here\n  value: 1\n"
    overlay = dataclasses.replace(overlay, files=files, patches=(broken, *overlay.patches[1:]))
    assert build_generated(overlay) is None
    with pytest.raises(BuildError, match="kustomize build of lab1 failed"):
        build_overlays({"lab1": overlay})
