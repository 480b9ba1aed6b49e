"""`gpu-gitops import` on plain Flux, end to end against the project's test API server: the live
KubeVirt CR (with gates and a device the profile does not list) becomes kubevirt.yaml, the build
keeps the live gates, and the device the profile's list drops is a warning in `validate` and in
the pull-request comment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import git
import pytest

from kubedata.yaml_io import load_all
from tests.apiserver import ApiServer, Store
from tests.audit.audit_helpers import run
from tests.audit.conftest import TOKEN

PROFILE = """\
apiVersion: gpu-gitops/v1alpha1
kind: GPUProfile
metadata:
  name: lab3
spec:
  platform: {type: flux}
  variant: passthrough
  devices:
    - class: RTX PRO 6000 Blackwell Server Edition
      pciVendorSelector: "10DE:2BB5"
      resourceName: nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_SERVER_EDITION
  flux: {url: "ssh://git@git.example.com/platform/gitops.git"}
  kubevirt:
    namespace: cozy-kubevirt
    name: kubevirt
    featureGates: [ExpandDisks]
"""
H200 = (
    "device 10DE:2335 (nvidia.com/GH100_H200_SXM_141GB) is permitted live but not in spec.devices"
)


@pytest.fixture
def server(store: Store) -> Any:
    """The live fixtures, with Snapshot turned on by hand in the KubeVirt CR (LiveMigration and
    the H200 next to the RTX PRO 6000 are there already: tests/data/live/README.md)."""
    [kubevirt] = store.objects_of("kubevirt.io", "kubevirts")
    gates = kubevirt["spec"]["configuration"]["developerConfiguration"]["featureGates"]
    assert "LiveMigration" in gates and "Snapshot" not in gates
    gates.append("Snapshot")
    store.put(kubevirt)
    with ApiServer(store) as api:
        api.add_token(TOKEN, "auditor", ("gpu-gitops:auditors",))
        yield api


def _repo(tmp_path: Path) -> tuple[Path, git.Repo]:
    root = tmp_path / "repo"
    (root / "clusters" / "lab3").mkdir(parents=True)
    repo = git.Repo.init(root)
    (root / "README.md").write_text("gitops\n")
    repo.index.add(["README.md"])
    repo.index.commit("base")
    repo.create_tag("base")
    (root / "clusters" / "lab3" / "gpu-profile.yaml").write_text(PROFILE)
    return root, repo


def test_import_render_validate_and_comment_keep_the_live_state(
    server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764493200")
    root, repo = _repo(tmp_path)
    # without the live CR captured, nothing builds: the command to capture it is named
    code, _, err = run("validate", "--repo", str(root))
    assert code == 2 and "clusters/lab3/kubevirt.yaml is missing" in err
    assert "gpu-gitops import --cluster lab3" in err

    config = server.kubeconfig(tmp_path / "kubeconfig", token=TOKEN)
    code, _, err = run(
        "import", "--cluster", "lab3", "--kubeconfig", str(config), "--repo", str(root)
    )
    assert (code, err) == (0, "wrote clusters/lab3/kubevirt.yaml\n")
    text = (root / "clusters" / "lab3" / "kubevirt.yaml").read_text()
    [doc] = load_all(text)
    assert "status" not in doc and "managedFields" not in doc["metadata"]
    assert doc["metadata"]["annotations"]["gpu-gitops.io/imported-at"] == "2025-11-30T09:00:00Z"
    assert doc["metadata"]["annotations"]["gpu-gitops.io/imported-from"] == (
        f"{server.url} (context test)"
    )
    # a second import of the same live CR changes nothing, whatever the clock says
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764600000")
    code, _, err = run(
        "import", "--cluster", "lab3", "--kubeconfig", str(config), "--repo", str(root)
    )
    assert (code, err) == (0, "clusters/lab3/kubevirt.yaml is up to date\n")

    code, out, err = run("validate", "--repo", str(root))
    assert code == 0, err
    [warning] = [ln for ln in err.splitlines() if H200 in ln]
    assert warning.startswith("clusters/lab3/kubevirt.yaml:")

    code, out, err = run("build", "--cluster", "lab3", "--repo", str(root))
    assert code == 0, err
    [kubevirt] = [o for o in load_all(out) if o["kind"] == "KubeVirt"]
    live_gates = doc["spec"]["configuration"]["developerConfiguration"]["featureGates"]
    gates = kubevirt["spec"]["configuration"]["developerConfiguration"]["featureGates"]
    assert gates == [*live_gates, *(["ExpandDisks"] if "ExpandDisks" not in live_gates else [])]
    assert {"LiveMigration", "Snapshot", "HostDevices"} <= set(gates)
    pci = kubevirt["spec"]["configuration"]["permittedHostDevices"]["pciHostDevices"]
    assert [d["pciVendorSelector"] for d in pci] == ["10DE:2BB5"]

    repo.index.add(["clusters/lab3/gpu-profile.yaml", "clusters/lab3/kubevirt.yaml"])
    repo.index.commit("add lab3")
    code, out, err = run("diff", "--base", "base", "-o", "markdown", "--repo", str(root))
    assert code == 1, err
    # the comment escapes Markdown's emphasis characters
    assert "> - clusters/lab3/kubevirt.yaml:" in out and H200.replace("_", "&#95;") in out
    assert "imported-at" not in out, "the import mark is never applied to the cluster"


def test_a_live_gate_leaves_only_when_the_profile_says_so(
    server: ApiServer, tmp_path: Path
) -> None:
    root, _ = _repo(tmp_path)
    profile = root / "clusters" / "lab3" / "gpu-profile.yaml"
    profile.write_text(
        PROFILE.replace("featureGates: [ExpandDisks]", "removeFeatureGates: [Snapshot, Nope]")
    )
    config = server.kubeconfig(tmp_path / "kubeconfig", token=TOKEN)
    assert (
        run("import", "--cluster", "lab3", "--kubeconfig", str(config), "--repo", str(root))[0] == 0
    )
    code, out, err = run("build", "--cluster", "lab3", "--repo", str(root))
    assert code == 0, err
    [kubevirt] = [o for o in load_all(out) if o["kind"] == "KubeVirt"]
    gates = kubevirt["spec"]["configuration"]["developerConfiguration"]["featureGates"]
    assert "Snapshot" not in gates and "LiveMigration" in gates
    code, _, err = run("validate", "--repo", str(root))
    assert code == 0
    assert "spec.kubevirt.removeFeatureGates[1]: Nope is not a live gate (kubevirt.yaml)" in err
