"""`gpu-gitops diff` on real git repositories holding the example clusters; a PR per risk."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import git
import pytest

from gpu_gitops.cli import main
from gpu_gitops.console import Console
from kubedata.diff import Item, show_path
from kubedata.objects import ObjectKey
from prbot import refdiff
from prbot.diff import diff_objects, index_objects, redact
from prbot.refdiff import RefDiff, diff_refs
from renderer.gitrepo import init_repo
from renderer.kustomize import workers
from tests.conftest import REPO_ROOT
from tests.renderer.profile_texts import IMPORTED

Edit = Callable[[str], str]


def _commit(repo: git.Repo, message: str) -> str:
    repo.git.add("-A")
    repo.git.commit("-q", "--allow-empty", "-m", message)
    return repo.head.commit.hexsha


@pytest.fixture
def repo(tmp_path: Path) -> git.Repo:
    """A repository whose first commit (tag `base`) holds the example clusters."""
    root = tmp_path / "gitops"
    shutil.copytree(REPO_ROOT / "clusters", root / "clusters")
    r = init_repo(root, "example clusters", user="t", email="t@example.invalid")
    r.create_tag("base")
    return r


def pr(repo: git.Repo, edits: Mapping[str, Edit | str | None]) -> None:
    """Commit a change: path -> new text, a function of the old text, or None to delete."""
    root = Path(repo.working_tree_dir or "")
    for rel, edit in edits.items():
        path = root / rel
        if edit is None:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        old = path.read_text() if path.exists() else ""
        new = edit if isinstance(edit, str) else edit(old)
        assert new != old or not isinstance(edit, str) or path.exists(), rel
        path.write_text(new)
    _commit(repo, "pull request")


def sub(old: str, new: str, count: int = 1) -> Edit:
    def edit(text: str) -> str:
        assert text.count(old) == count, f"{old!r} found {text.count(old)} times"
        return text.replace(old, new)

    return edit


def run(repo: git.Repo, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["diff", "--repo", str(repo.working_tree_dir), *argv], Console(out, err))
    return code, out.getvalue(), err.getvalue()


def kinds(d: RefDiff) -> list[tuple[str, str]]:
    return [(r.cluster, r.kind) for r in d.risks]


def risk(d: RefDiff, kind: str) -> Any:
    found = [r for r in d.risks if r.kind == kind]
    assert len(found) == 1, kinds(d)
    return found[0]


def line_of(repo: git.Repo, rel: str, text: str) -> int:
    lines = (Path(repo.working_tree_dir or "") / rel).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


# --- one pull request per risk -----------------------------------------------------------------


def test_variant_switch(repo: git.Repo) -> None:
    f = "clusters/fra1/gpu-profile.yaml"
    pr(
        repo,
        {
            f: lambda t: sub("variant: vgpu", "variant: passthrough")(
                sub("gpu-fra1-01: vm-vgpu", "gpu-fra1-01: vm-passthrough")(t)
            )
        },
    )
    d = diff_refs(Path(repo.working_tree_dir or ""), "base")
    r = risk(d, "variant-switch")
    assert (r.cluster, r.file, r.line, r.ref) == ("fra1", f, line_of(repo, f, "variant:"), "head")
    assert "vgpu -> passthrough" in r.message and "GPU VMs restart" in r.message
    # the cluster's own mdev type and the vGPU default table are no longer offered
    assert kinds(d) == [("fra1", "variant-switch"), *2 * [("fra1", "device-removed")]]
    own, table = d.risks[1:]
    assert own.ref == "base" and "nvidia.com/NVIDIA_A100-20C" in own.message
    assert "default device table no longer applies" in table.message
    (fra1,) = d.clusters
    paths = [fc.display for c in fra1.changes for fc in c.fields]
    assert "spec.components.platform.values.bundles.iaas.gpuOperatorVariant" in paths


def test_gpu_operator_removed_on_cozystack(repo: git.Repo) -> None:
    f = "clusters/ams1/gpu-profile.yaml"
    pr(repo, {f: sub("variant: passthrough", "variant: none")})
    d = diff_refs(Path(repo.working_tree_dir or ""), "base")
    assert kinds(d) == [
        ("ams1", "variant-switch"),
        ("ams1", "gpu-operator-removed"),
        ("ams1", "device-removed"),
    ]
    r = risk(d, "gpu-operator-removed")
    assert r.line == line_of(repo, f, "variant:")
    assert "helm.sh/resource-policy: keep" in r.message
    assert "kubectl delete packages.cozystack.io cozystack.gpu-operator" in r.message
    (change,) = d.clusters[0].changes
    (fc,) = change.fields
    assert fc.display == "spec.components.platform.values.bundles.enabledPackages"
    assert "cozystack.gpu-operator" in fc.before and "cozystack.gpu-operator" not in fc.after


def test_gpu_operator_removed_on_flux(repo: git.Repo) -> None:
    pr(repo, {"clusters/lab1/gpu-profile.yaml": sub("variant: passthrough", "variant: none")})
    d = diff_refs(Path(repo.working_tree_dir or ""), "base")
    r = risk(d, "gpu-operator-removed")
    assert "Flux prunes HelmRelease gpu-operator/gpu-operator" in r.message
    (lab1,) = d.clusters
    removed = {str(c.key) for c in lab1.changes if c.change == "removed"}
    assert "HelmRelease.helm.toolkit.fluxcd.io gpu-operator/gpu-operator" in removed


def test_device_renamed_and_removed(repo: git.Repo) -> None:
    f = "clusters/lab1/gpu-profile.yaml"
    pr(
        repo,
        {
            f: lambda t: sub("nvidia.com/AD102GL_L40S\n", "nvidia.com/AD102GL_L40S_48GB\n")(
                sub(
                    '    - class: H100 PCIe\n      pciVendorSelector: "10DE:2331"\n'
                    "      resourceName: nvidia.com/GH100_H100_PCIE\n      architecture: hopper\n",
                    "",
                )(t)
            )
        },
    )
    d = diff_refs(Path(repo.working_tree_dir or ""), "base")
    renamed, removed = d.risks
    assert renamed.kind == removed.kind == "device-removed"
    assert renamed.ref == "head" and renamed.line == line_of(repo, f, "AD102GL_L40S_48GB")
    assert "nvidia.com/AD102GL_L40S -> nvidia.com/AD102GL_L40S_48GB" in renamed.message
    assert "will not start" in renamed.message
    # removals point at the base profile, where the device still is
    assert removed.ref == "base" and removed.where.endswith(":19 (base)")
    assert '"H100 PCIe"' in removed.message and "nvidia.com/GH100_H100_PCIE" in removed.message
    (kv,) = d.clusters[0].changes
    assert [fc.path[-1] for fc in kv.fields] == [
        "resourceName",
        Item((("pciVendorSelector", "10DE:2331"),)),
    ]


def test_device_class_renamed_keeps_resource_quiet(repo: git.Repo) -> None:
    pr(repo, {"clusters/lab1/gpu-profile.yaml": sub("class: L40S", "class: L40S 48GB")})
    d = diff_refs(Path(repo.working_tree_dir or ""), "base")
    assert d.risks == () and d.clusters == ()  # a class is a label; VMs request resourceName


def test_replace_defaults_drops_default_table(repo: git.Repo) -> None:
    f = "clusters/ams1/gpu-profile.yaml"
    pr(
        repo,
        {f: sub("  variant: passthrough\n", "  variant: passthrough\n  replaceDefaults: true\n")},
    )
    d = diff_refs(Path(repo.working_tree_dir or ""), "base")
    r = risk(d, "device-removed")
    assert r.line == line_of(repo, f, "replaceDefaults")
    assert "nvidia.com/GH100_H100_PCIE" in r.message and "list the ones in use" in r.message


def test_replace_defaults_with_no_devices(repo: git.Repo) -> None:
    f = "clusters/ams1/gpu-profile.yaml"
    pr(
        repo,
        {
            f: lambda t: sub(
                "  variant: passthrough\n", "  variant: passthrough\n  replaceDefaults: true\n"
            )(t[: t.index("  devices:")] + t[t.index("  nodes:") :])
        },
    )
    d = diff_refs(Path(repo.working_tree_dir or ""), "base")
    assert kinds(d) == [("ams1", "no-devices")]
    r = d.risks[0]
    assert r.line == line_of(repo, f, "replaceDefaults")
    assert "every GPU VM fails to start" in r.message


def test_container_with_hami_on_flux(repo: git.Repo) -> None:
    f = "clusters/lab1/gpu-profile.yaml"
    pr(
        repo,
        {
            f: lambda t: (
                t[: t.index("  variant:")]
                + "  variant: container\n  hami: true\n"
                + t[t.index("  flux:") :]
            )
        },
    )
    d = diff_refs(Path(repo.working_tree_dir or ""), "base")
    r = risk(d, "container-hami")
    assert r.line == line_of(repo, f, "hami:")
    assert "device plugin is turned off" in r.message
    assert ("lab1", "variant-switch") in kinds(d)


def test_container_with_hami_on_cozystack_is_an_error_naming_the_ref(repo: git.Repo) -> None:
    pr(
        repo,
        {
            "clusters/par1/gpu-profile.yaml": sub(
                "  variant: container\n", "  variant: container\n  hami: true\n"
            )
        },
    )
    code, out, err = run(repo, "--base", "base")
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith("HEAD:clusters/par1/gpu-profile.yaml:")
    assert "hami" in line and "error" in line


def test_drift_detection_turned_off(repo: git.Repo) -> None:
    f = "clusters/lab1/gpu-profile.yaml"
    pr(repo, {f: sub("driftDetection: enabled", "driftDetection: disabled")})
    d = diff_refs(Path(repo.working_tree_dir or ""), "base")
    r = risk(d, "drift-detection-off")
    assert r.line == line_of(repo, f, "driftDetection")
    assert "gpu-operator/gpu-operator" in r.message
    (change,) = d.clusters[0].changes
    (fc,) = change.fields
    assert (fc.display, fc.before, fc.after) == ("spec.driftDetection.mode", "enabled", "disabled")


def test_platform_version_change(repo: git.Repo) -> None:
    f = "clusters/fra1/gpu-profile.yaml"
    pr(repo, {f: sub('version: "1.6"', 'version: "main"')})
    d = diff_refs(Path(repo.working_tree_dir or ""), "base")
    r = risk(d, "platform-version")
    assert r.line == line_of(repo, f, "version: ")
    assert "1.6 -> main" in r.message and "does not upgrade" in r.message
    # no rendered change, but a warning: still reported, and diff exits 1
    assert d.clusters[0].status == "unchanged"
    assert run(repo, "--base", "base")[0] == 1


# --- what gets built, exit codes, refs -----------------------------------------------------------


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    calls: list[list[str]] = []
    real = workers.build_overlays

    def counting(overlays: Mapping[str, Any], *a: Any, **kw: Any) -> dict[str, str]:
        calls.append(sorted(overlays))
        return real(overlays, *a, **kw)

    monkeypatch.setattr(refdiff, "build_overlays", counting)
    return calls


def test_unchanged_clusters_are_not_rebuilt(repo: git.Repo, builds: list[list[str]]) -> None:
    pr(
        repo,
        {
            "clusters/lab1/gpu-profile.yaml": sub("interval: 5m", "interval: 6m"),
            "clusters/ams1/README.md": "notes are not an input\n",
        },
    )
    d = diff_refs(Path(repo.working_tree_dir or ""), "base")
    assert builds == [["lab1"], ["lab1"]]
    assert d.rebuilt == ("lab1",) and d.total == 6
    builds.clear()
    full = diff_refs(Path(repo.working_tree_dir or ""), "base", reuse=False)
    everything = ["ams1", "ber1", "edge1", "fra1", "lab1", "par1"]
    assert builds == [everything, everything] and list(full.rebuilt) == everything
    assert full.clusters == d.clusters


def test_no_change_exit_0_and_working_tree_ignored(repo: git.Repo, builds: list[list[str]]) -> None:
    root = Path(repo.working_tree_dir or "")
    (root / "clusters/ams1/gpu-profile.yaml").write_text("not: [valid")  # uncommitted
    code, out, err = run(repo, "--base", "base")
    assert (code, err) == (0, "")
    assert "no changes: all 6 cluster(s) render the same objects" in out
    assert builds == []


def test_comment_only_change_is_rebuilt_and_clean(repo: git.Repo, builds: list[list[str]]) -> None:
    pr(repo, {"clusters/ber1/gpu-profile.yaml": lambda t: "# reviewed\n" + t})
    code, out, _ = run(repo, "--base", "base", "-o", "json")
    assert code == 0 and json.loads(out)["changed"] is False
    assert builds == [["ber1"], ["ber1"]]


def test_invalid_base_names_the_ref(repo: git.Repo) -> None:
    pr(repo, {"clusters/lab1/gpu-profile.yaml": sub("interval: 5m", "interval: soon")})
    pr(repo, {"clusters/lab1/gpu-profile.yaml": sub("interval: soon", "interval: 6m")})
    code, out, err = run(repo, "--base", "HEAD~1", "--head", "HEAD")
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith("HEAD~1:clusters/lab1/gpu-profile.yaml:")
    assert "spec.flux.interval" in line


def test_unknown_ref_exit_2(repo: git.Repo) -> None:
    code, _, err = run(repo, "--base", "no-such-branch")
    assert code == 2 and 'unknown git ref "no-such-branch"' in err


def test_cluster_added_and_removed(repo: git.Repo) -> None:
    lab2 = (REPO_ROOT / "clusters/lab1/gpu-profile.yaml").read_text().replace("lab1", "lab2")
    live = (REPO_ROOT / "clusters/lab1/kubevirt.yaml").read_text()
    pr(
        repo,
        {
            "clusters/par1": None,
            "clusters/lab2/gpu-profile.yaml": lab2,
            "clusters/lab2/kubevirt.yaml": live,
        },
    )
    d = diff_refs(Path(repo.working_tree_dir or ""), "base")
    status = {c.name: c.status for c in d.clusters}
    assert status == {"lab2": "added", "par1": "removed"}
    added = next(c for c in d.clusters if c.name == "lab2")
    assert {c.change for c in added.changes} == {"added"} and added.count("added") == 4
    assert d.total == 7


def test_json_output_shape(repo: git.Repo) -> None:
    pr(
        repo,
        {
            "clusters/lab1/gpu-profile.yaml": sub(
                "driftDetection: enabled", "driftDetection: disabled"
            )
        },
    )
    code, out, err = run(repo, "--base", "base", "-o", "json")
    assert (code, err) == (1, "")
    doc = json.loads(out)
    assert doc["schemaVersion"] == 1 and doc["changed"] is True
    assert doc["base"]["ref"] == "base" and len(doc["head"]["commit"]) == 40
    assert doc["summary"] == {
        "clusters": 6,
        "changedClusters": 1,
        "added": 0,
        "changed": 1,
        "removed": 0,
        "warnings": 1,
        "validateWarnings": 1,
        "nodes": 0,
    }
    (w,) = doc["warnings"]
    assert set(w) == {"cluster", "kind", "file", "line", "ref", "message"}
    (cluster,) = doc["clusters"]
    assert cluster["name"] == "lab1" and cluster["warnings"] == [w]
    (obj,) = cluster["objects"]
    assert obj["object"] == {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "namespace": "gpu-operator",
        "name": "gpu-operator",
    }
    assert obj["fields"] == [
        {
            "path": "spec.driftDetection.mode",
            "pointer": "/spec/driftDetection/mode",
            "change": "changed",
            "before": "enabled",
            "after": "disabled",
        }
    ]


def test_text_output_puts_warnings_first(repo: git.Repo) -> None:
    pr(repo, {"clusters/ams1/gpu-profile.yaml": sub("variant: passthrough", "variant: none")})
    code, out, _ = run(repo, "--base", "base")
    assert code == 1
    assert out.index("WARNINGS (3)") < out.index("ams1: 0 added, 1 changed, 0 removed")
    assert "      ± one list entry removed\n        - cozystack.gpu-operator\n" in out


def test_markdown_output_from_cli(repo: git.Repo) -> None:
    pr(repo, {"clusters/ams1/gpu-profile.yaml": sub("variant: passthrough", "variant: none")})
    code, out, _ = run(repo, "--base", "base", "-o", "markdown")
    assert code == 1 and out.startswith("<!-- gpu-gitops:diff -->\n")
    assert out.index("[!WARNING]") < out.index("| Cluster |") < out.index("<details>")


# --- the pure comparison -----------------------------------------------------------------------


def _obj(kind: str, name: str, spec: Any, api: str = "example.io/v1") -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name}, "spec": spec}


def test_lists_matched_by_key_index_or_whole() -> None:
    base = index_objects(
        [
            _obj(
                "X",
                "a",
                {
                    "byName": [{"name": "a", "v": 1}, {"name": "b", "v": 2}],
                    "byIndex": [{"v": 1}, {"v": 2}],
                    "scalars": ["x", "y", "z"],
                    "order": ["p", "q"],
                    "flag": 1,
                },
            )
        ]
    )
    head = index_objects(
        [
            _obj(
                "X",
                "a",
                {
                    "byName": [
                        {"name": "new", "v": 0},
                        {"name": "b", "v": 3},
                        {"name": "a", "v": 1},
                    ],
                    "byIndex": [{"v": 1}],
                    "scalars": ["x", "z", "w"],
                    "order": ["q", "p"],
                    "flag": True,
                },
            )
        ]
    )
    (change,) = diff_objects(base, head)
    got = [(fc.display, fc.change, fc.pointer) for fc in change.fields]
    assert got == [
        ("spec.byIndex[1]", "removed", "/spec/byIndex/1"),
        ("spec.byName[name=new]", "added", "/spec/byName/0"),
        ("spec.byName[name=b].v", "changed", "/spec/byName/1/v"),
        ("spec.byName", "reordered", "/spec/byName"),
        ("spec.flag", "changed", "/spec/flag"),  # 1 -> true is a change
        ("spec.order", "reordered", "/spec/order"),
        ("spec.scalars", "changed", "/spec/scalars"),
    ]


def test_objects_added_removed_in_key_order() -> None:
    base = index_objects([_obj("B", "x", {}), _obj("A", "gone", {})])
    head = index_objects([_obj("B", "x", {}), _obj("A", "new", {})])
    assert [(str(c.key), c.change) for c in diff_objects(base, head)] == [
        ("A.example.io gone", "removed"),
        ("A.example.io new", "added"),
    ]


def test_secret_values_never_appear() -> None:
    def secret(value: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "lic", "namespace": "gpu-operator"},
            "data": {"token": value},
            "stringData": {"gridd.conf": value + "-conf"},
        }

    (change,) = diff_objects(
        index_objects([secret("s3cr3t-old")]), index_objects([secret("s3cr3t-new")])
    )
    assert change.key == ObjectKey("", "Secret", "gpu-operator", "lic")
    assert "s3cr3t" not in repr(change)
    token = change.fields[0]
    assert token.display == "data.token" and token.before["redacted"].startswith("sha256:")
    assert token.before != token.after
    assert change.fields[1].display == 'stringData["gridd.conf"]'
    assert redact(_obj("X", "a", {})) == _obj("X", "a", {})


def test_display_path_quotes_odd_keys() -> None:
    path = ("metadata", "annotations", "helm.sh/resource-policy", 0, Item((("name", "a"),)))
    assert show_path(path) == 'metadata.annotations["helm.sh/resource-policy"][0][name=a]'


# --- what changes on nodes, what validate warns, clusters new to git --------------------------


def test_node_moves_are_shown_with_their_label_commands(repo: git.Repo) -> None:
    f = "clusters/ber1/gpu-profile.yaml"
    pr(
        repo,
        {
            f: sub(
                "    gpu-ber1-01: vm-passthrough\n    gpu-ber1-02: container\n",
                "    gpu-ber1-01: container\n    gpu-ber1-03: container\n",
            )
        },
    )
    d = diff_refs(Path(repo.working_tree_dir or ""), "base")
    (ber1,) = d.clusters
    assert ber1.changes == () and ber1.status == "unchanged", "labels are not in git"
    assert [n.command for n in ber1.nodes] == [
        "kubectl label node gpu-ber1-01 nvidia.com/gpu.workload.config=container --overwrite",
        "kubectl label node gpu-ber1-02 nvidia.com/gpu.workload.config-",
        "kubectl label node gpu-ber1-03 nvidia.com/gpu.workload.config=container --overwrite",
    ]
    code, md, _ = run(repo, "--base", "base", "-o", "markdown")
    assert code == 1
    assert "No rendered changes" not in md
    assert "**Node labels to set by hand** (3 node(s)" in md
    assert "# ber1: gpu-ber1-02: container -> (label removed: no longer in spec.nodes)\n" in md
    assert "kubectl label node gpu-ber1-02 nvidia.com/gpu.workload.config-\n" in md
    code, text, _ = run(repo, "--base", "base")
    assert "      kubectl label node gpu-ber1-02 nvidia.com/gpu.workload.config-\n" in text


def test_validate_warnings_reach_the_comment(repo: git.Repo) -> None:
    pr(repo, {"clusters/ams1/gpu-profile.yaml": sub("variant: passthrough", "variant: none")})
    code, md, _ = run(repo, "--base", "base", "-o", "markdown")
    assert code == 1
    assert "**validate: 2 warning(s) at head**" in md
    assert "clusters/ams1/gpu-profile.yaml:17: warning: spec.nodes: ignored" in md
    code, md, _ = run(repo, "--base", "base", "--head", "base", "-o", "markdown")
    assert code == 0 and "validate:" not in md, "only clusters that change are reviewed"


NEW_PLATFORM = f"""\
apiVersion: cozystack.io/v1alpha1
kind: Package
metadata:
  name: cozystack.cozystack-platform
  annotations: {IMPORTED}
spec:
  variant: isp-full
  components:
    platform:
      values:
        bundles:
          enabledPackages: [cozystack.gpu-operator]
        gpu:
          permittedHostDevices:
            pciHostDevices:
              - pciVendorSelector: "10DE:2BB5"
                resourceName: nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_SERVER_EDITION
"""


def _new_cluster(repo: git.Repo, variant: str) -> RefDiff:
    profile = (REPO_ROOT / "clusters" / "par1" / "gpu-profile.yaml").read_text()
    profile = profile.replace("name: par1", "name: new1").replace("version: main", '"1.6"')
    profile = profile.replace("variant: container", f"variant: {variant}")
    profile = profile.replace('"1.6"', 'version: "1.6"') + "  nodes:\n    n1: container\n"
    pr(
        repo,
        {"clusters/new1/gpu-profile.yaml": profile, "clusters/new1/platform.yaml": NEW_PLATFORM},
    )
    return diff_refs(Path(repo.working_tree_dir or ""), "base")


def test_a_cluster_new_to_git_is_reviewed_against_its_platform_yaml(repo: git.Repo) -> None:
    d = _new_cluster(repo, "passthrough")
    (new1,) = d.clusters
    assert new1.status == "added"
    # live (platform.yaml): passthrough with an RTX PRO 6000 the profile does not list
    (boot, lost) = new1.risks
    assert (
        boot.kind == "cluster-bootstrap" and "kubectl apply -f clusters/new1/flux/" in boot.message
    )
    assert (lost.kind, lost.file, lost.line, lost.ref) == (
        "device-removed",
        "clusters/new1/platform.yaml",
        16,
        "base",
    )
    assert "nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_SERVER_EDITION" in lost.message
    (moved,) = [w for w in new1.warnings if w.message.endswith("move it to spec.devices")]
    assert (moved.file, moved.line) == ("clusters/new1/platform.yaml", 16)
    assert [n.command for n in new1.nodes] == [
        "kubectl label node n1 nvidia.com/gpu.workload.config=container --overwrite"
    ]


def test_a_cluster_new_to_git_switching_the_live_variant_is_warned(repo: git.Repo) -> None:
    d = _new_cluster(repo, "container")
    got = {r.kind: r for r in d.risks}
    assert "variant passthrough -> container" in got["variant-switch"].message
    assert got["variant-switch"].message.endswith(
        "then relabel the nodes: kubectl label node n1 nvidia.com/gpu.workload.config=container "
        "--overwrite"
    )
    # the live default table and the live RTX PRO 6000: every name the cluster permits today
    assert "so 20 GPU resource name(s) are no longer permitted" in got["device-removed"].message


def test_plain_flux_switch_to_container_says_what_flux_deletes(repo: git.Repo) -> None:
    f = "clusters/lab1/gpu-profile.yaml"
    pr(repo, {f: sub("variant: passthrough", "variant: container")})
    d = diff_refs(Path(repo.working_tree_dir or ""), "base")
    (lab1,) = d.clusters
    removed = [c.key for c in lab1.changes if c.change == "removed"]
    assert removed == [], "the partial KubeVirt object stays, with the wiring emptied"
    (kv,) = [c for c in lab1.changes if c.key.kind == "KubeVirt"]
    shown = [fc.display for fc in kv.fields]
    assert any(
        p.startswith("spec.configuration.permittedHostDevices.pciHostDevices") for p in shown
    )
