"""A cluster's life on real git histories: add, change, rename, move its source, remove; what Flux
then does, as the pull-request comment says it. Each step's whole comment is a snapshot
(tests/snapshots/prbot/lifecycle-<step>.md, commit ids masked; UPDATE_SNAPSHOTS=1 rewrites them,
read the diff), and what must be absent is asserted as well as what must be there."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import git
import pytest
import yaml

from prbot.refdiff import RefDiff, diff_refs
from prbot.report_markdown import render_markdown
from renderer.gitrepo import init_repo
from renderer.kubevirt_file import kubevirt_file_text
from renderer.live_file import ImportMark
from renderer.profile import KUBEVIRT_FILE
from tests.conftest import DATA

SNAPSHOTS = Path(__file__).resolve().parent.parent / "snapshots" / "prbot"
UPDATE = os.environ.get("UPDATE_SNAPSHOTS") == "1"

FLUX_PROFILE = """\
apiVersion: gpu-gitops/v1alpha1
kind: GPUProfile
metadata:
  name: {name}
spec:
  platform: {{type: flux}}
  variant: passthrough
  devices:
    - class: L40S
      pciVendorSelector: "10DE:26B9"
      resourceName: nvidia.com/AD102GL_L40S
  nodes:
    gpu-1: vm-passthrough
  flux:
    url: https://git.example.com/gitops.git
{flux}"""


def _snapshot(name: str, d: RefDiff) -> str:
    text = render_markdown(d)
    for side in (d.base, d.head):
        text = text.replace(side.commit, "<" + ("base" if side is d.base else "head") + ">")
        text = text.replace(side.commit[:7], "<short>")
    path = SNAPSHOTS / f"lifecycle-{name}.md"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    elif not path.is_file():
        pytest.fail(f"no snapshot {path.name}: run UPDATE_SNAPSHOTS=1 pytest {__file__}")
    assert text == path.read_text(encoding="utf-8"), f"comment differs from {path.name}"
    return text


class _Life:
    def __init__(self, root: Path):
        self.root = root
        root.mkdir()
        (root / "README.md").write_text("gitops\n")
        self.repo: git.Repo = init_repo(root, "empty", user="t", email="t@example.invalid")
        self.tip = self.repo.head.commit.hexsha

    def write(self, name: str, flux: str = "") -> None:
        """The cluster's profile, and the live KubeVirt CR `import` captured beside it."""
        path = self.root / "clusters" / name / "gpu-profile.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(FLUX_PROFILE.format(name=name, flux=flux))
        live = yaml.safe_load((DATA / "examples" / "lab1-kubevirt.yaml").read_text())
        permitted = live["spec"]["configuration"]["permittedHostDevices"]
        permitted["pciHostDevices"] = [  # live as the profile has it: nothing to warn about
            d for d in permitted["pciHostDevices"] if d["pciVendorSelector"] == "10DE:26B9"
        ]
        mark = ImportMark(f"https://api.{name}.example.net:6443", "2026-11-30T09:00:00Z")
        (path.parent / KUBEVIRT_FILE).write_text(kubevirt_file_text(live, name, mark))

    def step(self, message: str) -> RefDiff:
        self.repo.git.add("-A")
        self.repo.git.commit("-q", "-m", message)
        base, self.tip = self.tip, self.repo.head.commit.hexsha
        return diff_refs(self.root, base, self.tip)


def test_a_plain_flux_cluster_from_added_to_removed(tmp_path: Path) -> None:
    life = _Life(tmp_path / "gitops")

    life.write("ber2")
    added = _snapshot("added", life.step("add ber2"))
    assert "run once on the cluster: kubectl apply -f clusters/ber2/flux/" in added
    assert "(cluster added)" in added

    life.write("ber2", "    interval: 5m\n")
    changed = _snapshot("changed", life.step("ber2 reconciles every 5m"))
    assert "spec.flux.interval 10m -&gt; 5m" in changed
    assert "Flux keeps the old interval until you run: kubectl apply -f clusters/ber2/flux/" in (
        changed
    )

    life.repo.git.mv("clusters/ber2", "clusters/ber3")
    life.write("ber3", "    interval: 5m\n")
    renamed = _snapshot("renamed", life.step("ber2 is ber3 now"))
    assert "(cluster renamed from ber2)" in renamed
    assert "kubectl apply -f clusters/ber3/flux/" in renamed and "its path ./ber2 -&gt; ./ber3" in (
        renamed
    )
    assert "**0** of 1 cluster(s) change" in renamed
    for absent in ("(no label)", "edit it by hand", "(cluster removed)", "(cluster added)"):
        assert absent not in renamed, absent

    life.write("ber3", "    interval: 5m\n    branch: rendered-ber\n")
    moved = _snapshot("moved", life.step("ber3 follows its own branch"))
    assert "spec.flux.branch rendered -&gt; rendered-ber" in moved
    assert "kubectl apply -f clusters/ber3/flux/" in moved
    assert "No rendered changes" not in moved

    shutil.rmtree(life.root / "clusters" / "ber3")
    removed = _snapshot("removed", life.step("ber3 is gone"))
    assert '"kustomization path not found" and prunes nothing' in removed
    assert "kubectl delete kustomization gpu-gitops -n flux-system" in removed
    assert (
        "the decommission step (deleting the Kustomization) deletes "
        "HelmRelease.helm.toolkit.fluxcd.io gpu-operator/gpu-operator"
    ) in removed
    assert "KubeVirt.kubevirt.io kubevirt/kubevirt stays when the Kustomization is deleted" in (
        removed
    )
    for absent in ("Flux prunes", "Helm uninstalls", "keep spec.kubevirt"):
        assert absent not in removed, absent


def test_a_renamed_cozystack_cluster_keeps_its_package(tmp_path: Path) -> None:
    life = _Life(tmp_path / "gitops")
    repo_root = Path(__file__).resolve().parent.parent.parent
    shutil.copytree(repo_root / "clusters" / "ams1", life.root / "clusters" / "ams1")
    life.step("ams1")
    life.repo.git.mv("clusters/ams1", "clusters/ams2")
    profile = life.root / "clusters" / "ams2" / "gpu-profile.yaml"
    profile.write_text(profile.read_text().replace("name: ams1", "name: ams2"))
    d = life.step("ams1 is ams2 now")
    (ams2,) = d.clusters
    assert (ams2.status, ams2.renamed_from) == ("renamed", "ams1")
    # the same Packages under the same names: changed at most, never removed and added again
    assert not [c for c in ams2.changes if c.change != "changed"]
    assert [r.kind for r in ams2.risks] == ["cluster-renamed"]
    assert "kubectl apply -f clusters/ams2/flux/" in ams2.risks[0].message
    assert "-n cozy-fluxcd" not in ams2.risks[0].message  # nothing to delete on a rename
    assert "(cozy-fluxcd)" in ams2.risks[0].message
    assert not [n for n in ams2.nodes if n.before is None], "labels stay with the nodes"
