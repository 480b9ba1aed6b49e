"""`gpu-gitops audit` end to end: snapshot folders, the test API server, incomplete reads, demo.

Planted drift (audit/demo, written by tests/audit/make_demo.py) must be found with the right
manager, revert class and profile field; planted noise must not be reported.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import git
import pytest

from audit.result import AuditResult
from tests.apiserver import ApiServer, Store
from tests.apiserver.crds import load_objects
from tests.audit.audit_helpers import (
    audit_cli,
    demo_empty,
    demo_objects,
    demo_repo,
    init_repo,
    run,
    write_snapshot,
)
from tests.audit.test_metrics import finding
from tests.audit.test_report import samples
from tests.conftest import DATA, REPO_ROOT

PCI = "/spec/configuration/permittedHostDevices/pciHostDevices"
TOKEN = "audit-cli-t0ken"


@pytest.fixture(scope="module")
def repo_and_tip(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("demo-repo")
    _, tip = demo_repo(root)
    assert tip
    return root, tip


def audit_json(repo: Path, snapshot: Path, cluster: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = audit_cli(cluster, "--snapshot", snapshot, repo, "-o", "json")
    return code, json.loads(out)


def audit_demo(
    repo_and_tip: tuple[Path, str], tmp_path: Path, cluster: str
) -> tuple[int, dict[str, Any]]:
    """The JSON audit of the cluster's demo snapshot, Flux having applied the rendered tip."""
    repo, tip = repo_and_tip
    snapshot = write_snapshot(tmp_path / cluster, demo_objects(cluster, tip), demo_empty(cluster))
    return audit_json(repo, snapshot, cluster)


def by(doc: dict[str, Any], kind: str, path: str = "") -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if f["object"]["kind"] == kind and f["path"] == path]


def check_ams1(doc: dict[str, Any]) -> None:
    # kubectl edit of the atomic device list: survives reconciles, lost at the next upgrade
    [pci] = by(doc, "KubeVirt", PCI)
    assert pci["type"] == "modified"
    assert [m["manager"] for m in pci["managers"]] == ["kubectl-edit"]
    assert pci["managers"][0]["operation"] == "Update"
    assert (pci["revert"], pci["revertRelease"]) == ("next-upgrade", "cozy-kubevirt/kubevirt")
    assert pci["missedByDriftDetection"] is True
    assert pci["severity"] == "high"
    assert pci["source"]["file"] == "clusters/ams1/gpu-profile.yaml"
    assert pci["source"]["field"] == "spec.devices"
    assert "spec.devices of clusters/ams1/gpu-profile.yaml" in pci["fix"]
    assert pci["vms"] == ["tenant-root/render01"]
    assert any("10DE:2BB1" in d for d in pci["details"])
    # a field no chart renders, added by Lens: nothing ever reverts it
    [lens] = by(doc, "KubeVirt", "/spec/configuration/developerConfiguration/logVerbosity")
    assert (lens["type"], lens["managers"][0]["manager"]) == ("added", "node-fetch")
    assert (lens["revert"], lens["missedByDriftDetection"]) == ("never", True)
    [suspended] = by(doc, "HelmRelease", "/spec/suspend")
    assert suspended["type"] == "suspended"
    assert suspended["object"]["name"] == "gpu-operator"
    assert suspended["managers"][0]["manager"] == "flux"
    [vm] = [f for f in doc["findings"] if f["object"]["kind"] == "VirtualMachine"]
    assert vm["object"]["name"] == "train02" and vm["severity"] == "high"
    [node] = [f for f in doc["findings"] if f["object"]["kind"] == "Node"]
    assert node["object"]["name"] == "gpu-ams1-02" and node["live"] == "container"
    assert node["source"]["field"] == "spec.nodes.gpu-ams1-02"
    # noise: defaults, equal quantities, reordered lists, injected metadata, chart defaults
    assert len(doc["findings"]) == 5
    assert not [f for f in doc["findings"] if f["object"]["kind"] in ("ClusterPolicy", "Package")]
    assert not [f for f in doc["findings"] if "featureGates" in f["path"]]
    assert any("reordered" in n for n in doc["notes"])


def test_snapshot_audit_finds_the_planted_drift_and_no_noise(
    repo_and_tip: tuple[Path, str], tmp_path: Path
) -> None:
    code, doc = audit_demo(repo_and_tip, tmp_path, "ams1")
    tip = repo_and_tip[1]
    assert code == 1
    assert doc["complete"] is True
    assert (doc["desiredSource"], doc["desiredRevision"]) == (
        "flux-applied",
        f"rendered@sha1:{tip}",
    )
    check_ams1(doc)
    kubevirt = next(r for r in doc["releases"] if r["release"] == "cozy-kubevirt/kubevirt")
    assert kubevirt["applyMethod"] == "ssa"


@pytest.mark.parametrize(
    ("kind", "resource"),
    [("Node", "nodes"), ("VirtualMachine", "virtualmachines.kubevirt.io")],
)
def test_snapshot_without_a_needed_kind_is_incomplete(
    repo_and_tip: tuple[Path, str], tmp_path: Path, kind: str, resource: str
) -> None:
    repo, tip = repo_and_tip
    objects = [o for o in demo_objects("ams1", tip) if o["kind"] != kind]
    code, doc = audit_json(repo, write_snapshot(tmp_path / "ams1", objects), "ams1")
    assert code == 2 and doc["complete"] is False
    [line] = [p for p in doc["problems"] if f"holds no {kind} ({resource})" in p]
    assert f"`kubectl get {resource} -A --show-managed-fields -o yaml > {resource}.yaml`" in line
    assert not [n for n in doc["notes"] if "does not exist" in n]  # not read, not absent
    assert not [f for f in doc["findings"] if f["object"]["kind"] == kind]
    # dumped as an empty list, the kind is read: none exist, and the audit is complete
    snapshot = write_snapshot(tmp_path / "ams1-empty", objects, [resource])
    code, doc = audit_json(repo, snapshot, "ams1")
    assert doc["complete"] is True and not doc["problems"]


def test_keep_policy_orphan_and_hand_applied_objects(
    repo_and_tip: tuple[Path, str], tmp_path: Path
) -> None:
    code, doc = audit_demo(repo_and_tip, tmp_path, "sto1")
    assert code == 1
    [orphan] = [f for f in doc["findings"] if f["type"] == "orphan"]
    assert orphan["object"]["name"] == "cozystack.gpu-operator"
    assert (orphan["severity"], orphan["revert"]) == ("high", "never")
    assert orphan["source"]["field"] == "spec.variant"
    assert "resource-policy: keep" in orphan["message"]
    [hand] = [f for f in doc["findings"] if f["type"] == "unmanaged"]
    assert hand["object"] == {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "namespace": "tenant-ml",
        "name": "nvidia-dcgm-exporter",
    }
    assert hand["managers"][0]["manager"] == "kubectl-client-side-apply"
    assert len(doc["findings"]) == 2


def test_container_variant_package_from_git_is_not_an_orphan(tmp_path: Path) -> None:
    repo_root = tmp_path / "repo"
    init_repo(repo_root, {"par1": REPO_ROOT / "clusters" / "par1"})
    package = {
        "apiVersion": "cozystack.io/v1alpha1",
        "kind": "Package",
        "metadata": {
            "name": "cozystack.gpu-operator",
            "managedFields": [
                {
                    "manager": "kustomize-controller",
                    "operation": "Apply",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:variant": {}, "f:components": {}}},
                    "time": "2026-11-01T00:00:00Z",
                }
            ],
        },
        # as Flux applies it: the vGPU managers declared off (renderer/bases.py)
        "spec": {
            "variant": "container",
            "components": {
                "gpu-operator": {
                    "values": {
                        "gpu-operator": {
                            "vgpuManager": {"enabled": False},
                            "vgpuDeviceManager": {"enabled": False},
                        }
                    }
                }
            },
        },
    }
    snapshot = write_snapshot(tmp_path / "par1", [package])
    _, doc = audit_json(repo_root, snapshot, "par1")
    assert not [f for f in doc["findings"] if f["object"]["name"] == "cozystack.gpu-operator"]


def test_prometheus_and_markdown_outputs(repo_and_tip: tuple[Path, str], tmp_path: Path) -> None:
    repo, tip = repo_and_tip
    snapshot = write_snapshot(tmp_path / "ams1", demo_objects("ams1", tip))
    code, out, _ = audit_cli("ams1", "--snapshot", snapshot, repo, "-o", "prometheus")
    assert code == 1
    got = samples(out)
    high = (("revert", "next-upgrade"), ("severity", "high"), ("type", "modified"))
    assert got[("gpu_gitops_audit_findings", high)] == 1
    assert got[("gpu_gitops_audit_complete", ())] == 1
    _, md, _ = audit_cli("ams1", "--snapshot", snapshot, repo, "-o", "markdown")
    assert md.startswith("## gpu-gitops drift audit of ams1: 5 findings")


def test_bad_input_exits_2(tmp_path: Path, repo_and_tip: tuple[Path, str]) -> None:
    repo, _ = repo_and_tip
    code, _, err = audit_cli("ams1", "--snapshot", tmp_path / "nope", repo)
    assert code == 2 and "does not exist" in err
    code, _, err = run("audit", "--cluster", "../x", "--snapshot", str(tmp_path))
    assert code == 2
    code, _, err = audit_cli("ams1", "--snapshot", tmp_path, tmp_path)
    assert code == 2 and "git" in err


def test_repository_errors_name_what_failed(tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig"  # never read: the checkout is opened first
    code, out, err = audit_cli("ams1", "--kubeconfig", config, tmp_path / "nope")
    assert code == 2 and out == ""
    assert err == (
        f"gpu-gitops: error: {tmp_path / 'nope'} does not exist; pass --repo DIR, the checkout of "
        "the gitops repository; or --in-cluster, to read the rendered branch from Flux's "
        "source-controller\n"
    )
    code, _, err = audit_cli("ams1", "--kubeconfig", config, tmp_path)
    assert code == 2 and "is not inside a git repository (no .git there or above)" in err
    assert "does not exist" not in err
    git.Repo.init(tmp_path / "empty").close()
    snapshot = REPO_ROOT / "audit" / "demo" / "snapshots" / "ams1"
    code, _, err = audit_cli("ams1", "--snapshot", snapshot, tmp_path / "empty")
    assert code == 2 and "has no commits yet" in err and "in-cluster" not in err


# -- against the test API server ---------------------------------------------------------------


@pytest.fixture
def demo_server(crds: list[dict[str, Any]], repo_and_tip: tuple[Path, str]) -> Iterator[ApiServer]:
    _, tip = repo_and_tip
    store = Store()
    store.put_all(crds)
    # KubeVirt's VirtualMachine CRD (trimmed; not in the reference folder)
    store.put_all(o for o in load_objects(DATA / "live") if o["kind"] == "CustomResourceDefinition")
    objects = demo_objects("ams1", tip)
    namespaces = {
        str(o["metadata"]["namespace"]) for o in objects if o["metadata"].get("namespace")
    }
    store.put_all(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}
        for n in sorted(namespaces)
    )
    store.put_all(objects)
    with ApiServer(store) as server:
        server.add_token(TOKEN, "auditor")
        yield server


def kubeconfig(server: ApiServer, tmp_path: Path) -> Path:
    return server.kubeconfig(tmp_path / "kubeconfig", token=TOKEN)


def test_audit_through_the_api_server(
    demo_server: ApiServer, repo_and_tip: tuple[Path, str], tmp_path: Path
) -> None:
    repo, _ = repo_and_tip
    config = kubeconfig(demo_server, tmp_path)
    code, out, err = audit_cli("ams1", "--kubeconfig", config, repo, "-o", "json")
    assert code == 1, err
    doc = json.loads(out)
    assert doc["complete"] is True
    check_ams1(doc)
    # least privilege: Secrets are only listed where Helm keeps release Secrets, by label
    secrets = [r for r in demo_server.requests if "/secrets" in r.path]
    assert secrets and all(r.query.get("labelSelector") == "owner=helm" for r in secrets)
    assert all("/namespaces/cozy-" in r.path for r in secrets)


def test_a_spent_read_budget_is_one_problem_and_the_last_read(
    demo_server: ApiServer, repo_and_tip: tuple[Path, str], tmp_path: Path
) -> None:
    repo, _ = repo_and_tip
    config = kubeconfig(demo_server, tmp_path)
    code, _, err = audit_cli("ams1", "--kubeconfig", config, repo, "-o", "json")
    assert code == 1, err  # complete with the default budget
    whole = len(demo_server.requests)
    code, out, err = audit_cli(
        "ams1", "--kubeconfig", config, repo, "-o", "json", "--max-read-bytes", "16Ki"
    )
    assert code == 2 and "incomplete" in err
    doc = json.loads(out)
    assert doc["complete"] is False
    assert doc["problems"] == [
        "the answers add up to over 16Ki bytes (--max-read-bytes 16Ki), so the rest was not "
        "read: rerun with a larger --max-read-bytes (e.g. 32Ki)"
    ]
    assert len(demo_server.requests) - whole < whole / 2  # it stopped at the refusal


@pytest.mark.parametrize("size", ["0", "-1Mi", "1.5", "lots", "1Zi"])
def test_a_bad_max_read_bytes_is_one_line_and_exit_2(
    size: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpu_gitops.cli import main

    with pytest.raises(SystemExit) as done:
        main(["audit", "--cluster", "ams1", f"--max-read-bytes={size}"])
    assert done.value.code == 2
    [line] = [ln for ln in capsys.readouterr().err.splitlines() if "error" in ln]
    assert line.endswith(
        f"argument --max-read-bytes: '{size}' is not a positive whole number of bytes "
        "(e.g. 512Mi, 2Gi)"
    )


def test_a_forbidden_read_makes_the_audit_incomplete(
    demo_server: ApiServer, repo_and_tip: tuple[Path, str], tmp_path: Path
) -> None:
    repo, _ = repo_and_tip
    demo_server.deny("auditor", "list", "helmreleases", "helm.toolkit.fluxcd.io")
    config = kubeconfig(demo_server, tmp_path)
    code, out, err = audit_cli("ams1", "--kubeconfig", config, repo, "-o", "json")
    assert code == 2
    doc = json.loads(out)
    assert doc["complete"] is False
    assert any("403" in p for p in doc["problems"])
    assert "incomplete" in err
    code, text, _ = audit_cli("ams1", "--kubeconfig", config, repo)
    assert code == 2 and text.startswith("INCOMPLETE")


@pytest.mark.parametrize(
    "path", ["/apis/helm.toolkit.fluxcd.io/v2", "/apis/kubevirt.io/v1", "/api/v1"]
)
def test_a_listed_group_whose_discovery_answers_404_makes_the_audit_incomplete(
    demo_server: ApiServer, repo_and_tip: tuple[Path, str], tmp_path: Path, path: str
) -> None:
    """/apis (or /api) lists the group-version, its own discovery answers 404: the kinds it serves
    were not read, so the audit is incomplete, never "no drift" for them."""
    repo, _ = repo_and_tip
    demo_server.faults.status(404, count=10_000, match=f"GET {path}")
    code, out, err = audit_cli(
        "ams1", "--kubeconfig", kubeconfig(demo_server, tmp_path), repo, "-o", "json"
    )
    assert code == 2, err
    doc = json.loads(out)
    assert doc["complete"] is False
    group_version = path.removeprefix("/apis/").removeprefix("/api/")
    group_version = group_version if "/" in group_version else f"core/{group_version}"
    assert (
        f"discovery {path}: 404, though the server lists {group_version}; the kinds it serves "
        "could not be read"
    ) in doc["problems"]


def test_issue4_live_fixtures_through_the_api_server(api_server: ApiServer, tmp_path: Path) -> None:
    """The live-state fixtures of tests/data/live, written independently of this suite."""
    profile = tmp_path / "profile"
    (profile).mkdir()
    (profile / "gpu-profile.yaml").write_text(
        (REPO_ROOT / "clusters" / "ams1" / "gpu-profile.yaml")
        .read_text()
        .replace("  variant: passthrough\n", "  variant: passthrough\n  replaceDefaults: true\n")
        .replace("gpu-ams1-0", "ams1-gpu-0")
    )
    config = api_server.kubeconfig(tmp_path / "kc", token="s3cr3t-t0ken-for-tests")
    # the live platform Package, captured as a user does before the first render
    code, _, err = run(
        "import", "--cluster", "ams1", "--kubeconfig", str(config), "--repo", str(tmp_path)
    )
    assert code == 0, err
    (tmp_path / "clusters" / "ams1" / "platform.yaml").rename(profile / "platform.yaml")
    repo_root = tmp_path / "repo"
    init_repo(repo_root, {"ams1": profile})
    code, out, err = audit_cli("ams1", "--kubeconfig", config, repo_root, "-o", "json")
    assert code == 1, err
    doc = json.loads(out)
    [pci] = by(doc, "KubeVirt", PCI)
    assert pci["managers"][0]["manager"] == "kubectl-edit"
    assert pci["revert"] == "next-upgrade" and pci["source"]["field"] == "spec.devices"
    assert any("10DE:2335" in d for d in pci["details"])
    kinds = {(f["type"], f["object"]["kind"], f["object"]["name"]) for f in doc["findings"]}
    assert ("unmanaged", "Package", "cozystack.hami") in kinds
    assert ("modified", "Node", "ams1-gpu-02") in kinds


def test_demo_prints_the_audits() -> None:
    code, out, _ = run("demo")
    assert code == 0
    assert "=== audit of the built-in snapshot of ams1 ===" in out
    assert "kubectl-edit" in out and PCI in out
    assert "orphan    Package cozystack.gpu-operator" in out
    assert "(flux-applied)" in out


# -- plain Flux, orphans pruned from git, operator-generated HelmRelease edits --------------------


def _entry(manager: str, fields: dict[str, Any], op: str = "Update") -> dict[str, Any]:
    return {
        "manager": manager,
        "operation": op,
        "time": "2026-11-21T09:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }


def test_plain_flux_kubevirt_partial_object(tmp_path: Path) -> None:
    repo_root = tmp_path / "repo"
    init_repo(repo_root, {"lab1": REPO_ROOT / "clusters" / "lab1"})
    gates = ["HostDevices", "LiveMigration", "CPUManager", "ExpandDisks", "Snapshot"]
    pci = [
        {"pciVendorSelector": s, "resourceName": n, "externalResourceProvider": True}
        for s, n in (
            ("10DE:2BB5", "nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_SERVER_EDITION"),
            ("10DE:26B9", "nvidia.com/AD102GL_L40S"),
            ("10DE:2331", "nvidia.com/GH100_H100_PCIE"),
        )
    ]
    kubevirt = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {
            "name": "kubevirt",
            "namespace": "kubevirt",
            "managedFields": [
                _entry(
                    "kustomize-controller",
                    {
                        "f:spec": {
                            "f:configuration": {"f:permittedHostDevices": {"f:pciHostDevices": {}}}
                        }
                    },
                    "Apply",
                ),
                _entry(
                    "kubectl-patch",
                    {
                        "f:spec": {
                            "f:configuration": {"f:developerConfiguration": {"f:featureGates": {}}}
                        }
                    },
                ),
                _entry("kubectl-client-side-apply", {"f:spec": {"f:imagePullPolicy": {}}}),
                _entry("OpenAPI-Generator", {"f:spec": {"f:monitorNamespace": {}}}),
            ],
        },
        "spec": {
            "configuration": {
                "developerConfiguration": {"featureGates": gates},
                "permittedHostDevices": {"pciHostDevices": pci},
            },
            "imagePullPolicy": "IfNotPresent",
            "monitorNamespace": "monitoring",
        },
    }
    none = (
        "namespaces",
        "nodes",
        "helmreleases.helm.toolkit.fluxcd.io",
        "helmrepositories.source.toolkit.fluxcd.io",
        "virtualmachines.kubevirt.io",
    )
    snapshot = write_snapshot(tmp_path / "lab1", [kubevirt], none)
    code, doc = audit_json(repo_root, snapshot, "lab1")
    assert doc["problems"] == []
    assert code == 1
    assert doc["desiredSource"] == "profiles-head"
    found = {f["path"]: f for f in by_kind(doc, "KubeVirt")}
    gates_finding = found["/spec/configuration/developerConfiguration/featureGates"]
    assert gates_finding["managers"][0]["manager"] == "kubectl-patch"
    assert gates_finding["revert"] == "next-reconcile"
    assert gates_finding["source"]["field"] == "spec.kubevirt.featureGates"
    assert gates_finding["details"] == ["added Snapshot"]
    # the overlay is applied with ssa: Merge: what git does not declare is the creator's
    assert "/spec/imagePullPolicy" not in found and "/spec/monitorNamespace" not in found
    assert any("2 live-only field(s) of partially applied objects" in n for n in doc["notes"])
    missing = {(f["type"], f["object"]["kind"]) for f in doc["findings"]}
    assert ("missing", "HelmRelease") in missing  # the gpu-operator release is not installed


def by_kind(doc: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if f["object"]["kind"] == kind]


def test_pruned_from_git_and_operator_edits(repo_and_tip: tuple[Path, str], tmp_path: Path) -> None:
    repo, tip = repo_and_tip
    objects = demo_objects("ams1", tip)
    objects.append(
        {
            "apiVersion": "cozystack.io/v1alpha1",
            "kind": "Package",
            "metadata": {
                "name": "cozystack.old-thing",
                "labels": {
                    "kustomize.toolkit.fluxcd.io/name": "gpu-gitops",
                    "kustomize.toolkit.fluxcd.io/namespace": "cozy-fluxcd",
                },
            },
            "spec": {"variant": "default"},
        }
    )
    kubevirt_hr = next(
        o for o in objects if o["kind"] == "HelmRelease" and o["metadata"]["name"] == "kubevirt"
    )
    kubevirt_hr["spec"]["driftDetection"] = {"mode": "enabled"}
    kubevirt_hr["metadata"]["managedFields"].append(
        _entry("kubectl-edit", {"f:spec": {"f:driftDetection": {"f:mode": {}}}})
    )
    snapshot = write_snapshot(tmp_path / "ams1", objects)
    _, doc = audit_json(repo, snapshot, "ams1")
    [orphan] = [f for f in doc["findings"] if f["type"] == "orphan"]
    assert orphan["object"]["name"] == "cozystack.old-thing"
    assert "removed from git" in orphan["message"]
    [edit] = [f for f in by_kind(doc, "HelmRelease") if f["type"] == "modified"]
    assert edit["path"] == "/spec/driftDetection/mode"
    assert (edit["revert"], edit["missedByDriftDetection"]) == ("next-reconcile", False)
    assert "transient" in edit["message"]
    # the edit does not turn drift detection on: the operator-generated release stays blind
    [pci] = by(doc, "KubeVirt", PCI)
    assert pci["revert"] == "next-upgrade"


def test_every_snapshot_command_keeps_managed_fields() -> None:
    """Attribution needs managedFields, which `kubectl get -o yaml` hides: every dump command the
    README shows asks for them (the help: the next test)."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Auditing a snapshot", 1)[1].split("\n## ", 1)[0]
    commands = [line for line in section.splitlines() if line.strip().startswith("kubectl get")]
    assert len(commands) >= 2
    assert all("--show-managed-fields" in c for c in commands), commands


def test_audit_help_names_the_dump_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run("audit", "--help")
    text = capsys.readouterr().out
    dumps = [line for line in text.splitlines() if "kubectl get" in line]
    assert dumps and all("--show-managed-fields" in line for line in dumps), dumps


def test_an_applied_commit_the_checkout_lacks_is_a_note(
    repo_and_tip: tuple[Path, str], tmp_path: Path
) -> None:
    """The demo's own snapshot names the all-zero commit: GitPython hands it out unread."""
    repo, _ = repo_and_tip
    for sha in ("0" * 40, "1234567" * 5 + "89abc"):
        objects = demo_objects("ams1", sha)
        snapshot = write_snapshot(tmp_path / sha[:4], objects, demo_empty("ams1"))
        code, doc = audit_json(repo, snapshot, "ams1")
        assert (code, doc["problems"]) == (1, []), doc["problems"]  # the demo's drift, complete
        assert f"Flux applied rendered@sha1:{sha}, which this repository does not have" in " ".join(
            doc["notes"]
        )
        assert doc["desiredSource"] == "rendered-tip"


def test_ref_of_a_rendered_commit_or_an_unknown_cluster(
    repo_and_tip: tuple[Path, str], tmp_path: Path
) -> None:
    repo, tip = repo_and_tip
    snapshot = write_snapshot(tmp_path / "s", demo_objects("ams1", tip), demo_empty("ams1"))
    code, out, err = audit_cli("ams1", "--snapshot", snapshot, repo, "--ref", "rendered")
    assert (code, out) == (2, "")
    assert err == (
        f"gpu-gitops: error: rendered ({tip[:12]}) is a rendered commit (it holds ams1/, not "
        "clusters/ams1/): --ref takes a commit of the profiles, such as main; without --ref the "
        "audit reads what Flux applied from the rendered branch\n"
    )
    code, out, err = audit_cli("nope1", "--snapshot", snapshot, repo, "--ref", "main")
    assert (code, out) == (2, "")
    assert err.startswith("gpu-gitops: error: clusters/nope1/ does not exist at main (")
    assert err.endswith("(clusters there: ams1, sto1): check --cluster\n")


@pytest.mark.parametrize(
    ("worst", "fail_on", "code"),
    [
        ("high", "low", 1),
        ("high", "high", 1),
        ("medium", "high", 0),
        ("low", "medium", 0),
        ("low", "low", 1),
        ("info", "low", 0),
        ("info", "info", 1),
        ("high", "never", 0),
        (None, "info", 0),
    ],
)
def test_fail_on_sets_the_severity_that_exits_1(worst: str | None, fail_on: str, code: int) -> None:
    findings = [finding("a", worst)] if worst else []
    result = AuditResult("c1", "flux-applied", "r", findings=findings)
    assert result.exit_status(fail_on) == code
    result.problems.append("list nodes: 403")
    assert result.exit_status(fail_on) == 2, "incomplete is never clean, whatever --fail-on says"


def test_fail_on_from_the_command_line(
    repo_and_tip: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, tip = repo_and_tip
    snapshot = write_snapshot(tmp_path / "ams1", demo_objects("ams1", tip), demo_empty("ams1"))
    codes = {
        level: audit_cli("ams1", "--snapshot", snapshot, repo, "-o", "json", "--fail-on", level)[0]
        for level in ("never", "high")
    }
    assert codes == {"never": 0, "high": 1}, "ams1 has high drift"
    objects = [o for o in demo_objects("ams1", tip) if o["kind"] != "Node"]
    partial = write_snapshot(tmp_path / "partial", objects, demo_empty("ams1"))
    assert audit_cli("ams1", "--snapshot", partial, repo, "--fail-on", "never")[0] == 2
    with pytest.raises(SystemExit) as exit:
        audit_cli("ams1", "--snapshot", snapshot, repo, "--fail-on", "severe")
    assert exit.value.code == 2 and "invalid choice: 'severe'" in capsys.readouterr().err


def test_audit_help_says_what_the_cronjob_runs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run("audit", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "--fail-on {never,info,low,medium,high}" in text
    assert "the nightly CronJob runs --fail-on never" in text
