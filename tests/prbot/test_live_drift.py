"""`diff --live-findings`: a pull request that rewrites a live-drifted field says so, with the
command that keeps the live change; against the real Prometheus the nightly command pushed to
(through a real Pushgateway), and against a folder of saved `audit -o json` reports. Codifying
drift (git made equal to live) is a note; no source: the comment says live drift was not
checked."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import git
import pytest

from audit.kube.api import audit_budget
from audit.metrics import push_metrics
from kubedata.objects import ObjectKey
from prbot.diff import FieldChange, ObjectChange
from prbot.live_drift import LiveFinding, LiveSource, check_live
from prbot.refdiff import ClusterDiff, RefDiff, Side
from prbot.report_markdown import render_markdown
from tests.audit.audit_helpers import run
from tests.audit.fleet.fleet_data import PushedFleet, finding, result, scraped_value
from tests.prometheus import Prometheus
from tests.pushgateway import Pushgateway

PCI = "/spec/configuration/permittedHostDevices/pciHostDevices"


def pr_adding_a_device(fleet: PushedFleet, tmp_path: Path) -> Path:
    """A copy of the nightly command's checkout with one commit: ams1 gets a second device, so
    KubeVirt's pciHostDevices (hand-edited live, a high finding) changes."""
    repo_dir = tmp_path / "repo"
    shutil.copytree(fleet.repo, repo_dir)
    profile = repo_dir / "clusters" / "ams1" / "gpu-profile.yaml"
    text = profile.read_text(encoding="utf-8")
    device = (
        "    - class: RTX PRO 6000 Blackwell Workstation Edition\n"
        '      pciVendorSelector: "10DE:2BB1"\n'
        "      resourceName: nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_WORKSTATION\n"
        "      architecture: blackwell\n"
    )
    profile.write_text(text.replace("  nodes:\n", device + "  nodes:\n"), encoding="utf-8")
    repo = git.Repo(repo_dir)
    repo.index.add([str(profile)])
    repo.index.commit("ams1: a second device")
    return repo_dir


def live_diff(repo: Path, source: str, fmt: str = "json") -> tuple[int, str, str]:
    return run(
        "diff", "--repo", str(repo), "--base", "HEAD~1", "--head", "HEAD", "--live-findings",
        source, "-o", fmt,
    )  # fmt: skip


PACKAGE_PCI = "/spec/components/platform/values/gpu/permittedHostDevices/pciHostDevices"


def test_overwriting_live_drift_is_warned_from_saved_reports(
    fleet: PushedFleet, tmp_path: Path
) -> None:
    """The nightly command's own ams1 report: its KubeVirt finding is owned by the profile's
    spec.devices, which the pull request changes."""
    repo = pr_adding_a_device(fleet, tmp_path)
    code, out, err = live_diff(repo, str(fleet.reports))
    assert code == 1, err
    hits = [h for h in json.loads(out)["liveDrift"]["hits"] if h["path"] == PCI]
    assert len(hits) == 1, out
    hit = hits[0]
    assert hit["cluster"] == "ams1" and hit["kind"] == "overwrites"
    assert hit["object"] == {"kind": "KubeVirt", "namespace": "cozy-kubevirt", "name": "kubevirt"}
    assert hit["changedPointer"] == "clusters/ams1/gpu-profile.yaml spec.devices"
    assert hit["adopt"] == f"gpu-gitops adopt --cluster ams1 --finding {hit['finding']}"
    assert hit["message"].startswith(f"this merge overwrites a live change: `{PCI}` set by `")
    assert hit["message"].endswith(f"; keep it with `{hit['adopt']}` first")
    assert hit["manager"] and hit["changedAt"]
    # the findings on fields the change leaves alone are not hit
    assert {h["path"] for h in json.loads(out)["liveDrift"]["hits"]} <= {
        PCI,
        "/spec/template/spec/domain/devices/gpus/0/deviceName",
    }
    code, md, err = live_diff(repo, str(fleet.reports), "markdown")
    assert "live change(s) this merge overwrites" in md
    assert f"keep it with `{hit['adopt']}` first" in md
    assert "not checked" not in md


def test_overwriting_live_drift_is_warned_from_prometheus(
    fleet: PushedFleet, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A hand edit of ams1's Package (the object git builds), pushed with the project's own push
    to a real Pushgateway, read back through a real Prometheus: the pull request rewrites it."""
    repo = pr_adding_a_device(fleet, tmp_path)
    edit = finding(
        "cozystack.cozystack-platform", "high", PACKAGE_PCI, "kubectl-edit", kind="Package",
        namespace="",
    )  # fmt: skip
    with (
        Pushgateway() as pgw,
        Prometheus(tmp_path_factory.mktemp("prometheus"), pgw.url, []) as prom,
    ):
        push_metrics(result("ams1", True, time.time() - 3600, [edit]), pgw.url, audit_budget(30))
        scraped_value(
            prom, 'count(gpu_gitops_audit_finding{job="gpu-gitops-audit",cluster="ams1"})', 1
        )
        code, out, err = live_diff(repo, prom.url)
        assert code == 1, err
        (hit,) = json.loads(out)["liveDrift"]["hits"]
        code, md, _ = live_diff(repo, prom.url, "markdown")
    assert hit["finding"] == edit.id and hit["kind"] == "overwrites"
    assert hit["changedPointer"] == PACKAGE_PCI + "/1"
    assert hit["message"] == (
        f"this merge overwrites a live change: `{PACKAGE_PCI}` set by `kubectl-edit` at "
        f"`2026-11-30T03:01:02Z`; keep it with `gpu-gitops adopt --cluster ams1 --finding "
        f"{edit.id}` first"
    )
    assert f"`gpu-gitops adopt --cluster ams1 --finding {edit.id}`" in md


def test_no_source_says_once_that_live_drift_was_not_checked(
    fleet: PushedFleet, tmp_path: Path
) -> None:
    repo = pr_adding_a_device(fleet, tmp_path)
    code, md, err = run("diff", "--repo", str(repo), "--base", "HEAD~1", "-o", "markdown")
    assert code == 1, err
    assert md.count("Live drift not checked") == 1
    code, out, _ = run("diff", "--repo", str(repo), "--base", "HEAD~1", "-o", "json")
    assert json.loads(out)["liveDrift"] is None


def test_bad_sources_are_one_line_errors(tmp_path: Path, fleet: PushedFleet) -> None:
    repo = pr_adding_a_device(fleet, tmp_path)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x.json").write_text('{"cluster": "a"}', encoding="utf-8")
    code, out, err = live_diff(repo, str(tmp_path / "bad"))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "x.json: findings: not an `audit -o json` report" in err
    code, out, err = live_diff(repo, "http://127.0.0.1:1")
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "could not be reached" in err


def report(change: ObjectChange) -> RefDiff:
    side = Side("main", "a" * 40)
    return RefDiff(side, side, (ClusterDiff("ams1", "changed", (change,)),), 1)


def reports(*findings: LiveFinding, audited: tuple[str, ...] = ("ams1",)) -> LiveSource:
    return LiveSource("reports/", findings, frozenset(audited))


def test_codifying_drift_is_a_note() -> None:
    key = ObjectKey("apps", "Deployment", "gpu-operator", "dcgm")
    change = ObjectChange(
        key, "changed", fields=(FieldChange((), "/spec/replicas", "changed", 1, 3),)
    )
    live = LiveFinding("ams1", "abc", "Deployment", "gpu-operator", "dcgm", "/spec/replicas",
                       "kubectl-scale", "2026-11-30T03:00:00Z", live=3)  # fmt: skip
    d = check_live(report(change), reports(live))
    assert d.live is not None
    (hit,) = d.live.hits["ams1"]
    assert hit.codifies and hit.message() == "codifies live drift `abc`: the finding will close"
    assert d.live.overwrites == 0
    md = render_markdown(d)
    assert "1 live drift finding(s) this merge codifies" in md and "overwrites" not in md
    # a different value overwrites it; a sibling field does not touch it
    other = LiveFinding("ams1", "abc", "Deployment", "gpu-operator", "dcgm", "/spec/replicas",
                        "kubectl-scale", "", live=5)  # fmt: skip
    sibling = LiveFinding("ams1", "def", "Deployment", "gpu-operator", "dcgm", "/spec/paused",
                          "kubectl", "", live=True)  # fmt: skip
    d = check_live(report(change), reports(other, sibling))
    assert d.live is not None and [h.finding.id for h in d.live.hits["ams1"]] == ["abc"]
    assert d.live.overwrites == 1


def test_a_clean_audit_is_an_audit() -> None:
    """A changed cluster whose last audit found nothing was checked; one the source has no audit
    of was not, and the report says so."""
    key = ObjectKey("apps", "Deployment", "gpu-operator", "dcgm")
    change = ObjectChange(
        key, "changed", fields=(FieldChange((), "/spec/replicas", "changed", 1, 3),)
    )
    d = check_live(report(change), reports())
    assert d.live is not None and d.live.unaudited == () and d.live.hits == {}
    d = check_live(report(change), reports(audited=("fra1",)))
    assert d.live is not None and d.live.unaudited == ("ams1",)


def test_a_clean_report_is_an_audit(fleet: PushedFleet, tmp_path: Path) -> None:
    """The saved report of a clean audit of ams1: no hit, and ams1 is not 'no audit of it'."""
    repo = pr_adding_a_device(fleet, tmp_path)
    clean = json.loads((fleet.reports / "ams1.json").read_text(encoding="utf-8"))
    clean["findings"] = []
    (tmp_path / "clean").mkdir()
    (tmp_path / "clean" / "ams1.json").write_text(json.dumps(clean), encoding="utf-8")
    code, out, err = live_diff(repo, str(tmp_path / "clean"))
    assert code == 1, err
    assert json.loads(out)["liveDrift"]["hits"] == []
    assert json.loads(out)["liveDrift"]["unaudited"] == []
