"""The README's snapshot loop is the tested loop: its commands, run as written with the installed
kubectl against the test API server, give a folder that audits complete and with the same findings
as the live audit of the same server, for every example cluster (Cozystack and plain Flux, every
variant), and for the plain-Flux clusters that need no KubeVirt also on a cluster that does not
serve KubeVirt's kinds at all."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from renderer.profile import load_profile
from renderer.publish.publish import publish
from tests.apiserver import ApiServer, Store
from tests.audit.audit_helpers import DEMO, EXAMPLES, audit_cli, init_repo
from tests.audit.conftest import TOKEN
from tests.audit.incluster import live_cluster, rendered_files
from tests.audit.test_audit_job_e2e import CLUSTERS, FLX0, crds
from tests.conftest import REPO_ROOT

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed")
NO_KUBEVIRT = ("edge1", "flx0")
"""Plain-Flux clusters whose profile needs no KubeVirt: also audited on a cluster without it."""


def readme_loop() -> str:
    """The first sh block of the README's "Auditing a snapshot" section."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Auditing a snapshot", 1)[1]
    found = re.search(r"```sh\n(.*?)```", section, re.S)
    assert found, "the README's snapshot section has no sh block"
    return found.group(1)


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, bytes]]:
    root = tmp_path_factory.mktemp("readme-loop")
    flx0 = root / "flx0"
    flx0.mkdir()
    (flx0 / "gpu-profile.yaml").write_text(FLX0)
    sources = {n: EXAMPLES / n for n in CLUSTERS} | {"sto1": DEMO / "clusters" / "sto1"}
    repo = init_repo(root / "repo", {**sources, "flx0": flx0})
    tip = publish(root / "repo").tip
    assert tip
    return root / "repo", tip, rendered_files(repo, tip)


EDITS = {"Package": ("variant", "hand-picked"), "HelmRelease": ("interval", "47m")}


def hand_edit(server: ApiServer, objects: list[dict[str, Any]]) -> bool:
    """A kubectl edit of a Package or HelmRelease Flux applied, so there is drift to find; False
    when Flux applied neither (plain Flux without GPUs)."""
    found = next((o for o in objects if o["kind"] in EDITS), None)
    if found is None:
        return False
    target = copy.deepcopy(found)
    field, value = EDITS[target["kind"]]
    target["spec"][field] = value
    server.store.put(target, manager="kubectl-edit", keep_server_fields=False)
    return True


def dump(folder: Path, kubeconfig: Path) -> subprocess.CompletedProcess[str]:
    folder.mkdir()
    script = readme_loop().replace("DIR", str(folder))
    env = {
        "KUBECONFIG": str(kubeconfig),
        "HOME": str(kubeconfig.parent),
        "KUBECACHEDIR": str(kubeconfig.parent / "cache"),
        "PATH": f"{Path(str(KUBECTL)).parent}:/usr/bin:/bin",
    }
    return subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def findings(doc: dict[str, Any]) -> list[tuple[str, ...]]:
    return sorted(
        (f["id"], f["type"], f["object"]["kind"], f["path"], f["severity"], f["revert"])
        for f in doc["findings"]
    )


@pytest.mark.parametrize(
    ("cluster", "kubevirt"),
    [*((c, True) for c in [*CLUSTERS, "sto1", "flx0"]), *((c, False) for c in NO_KUBEVIRT)],
)
def test_the_readmes_dump_loop_gives_a_complete_audit(
    cluster: str,
    kubevirt: bool,
    published: tuple[Path, str, dict[str, bytes]],
    tmp_path: Path,
) -> None:
    repo, tip, files = published
    lp = load_profile(repo, cluster)
    served = [c for c in crds() if kubevirt or c["spec"]["group"] != "kubevirt.io"]
    store = Store()
    store.put_all(served)
    with ApiServer(store) as server:
        server.add_token(TOKEN, "auditor")
        objects = live_cluster(server, lp, files, tip, "ssh://git@example.com/gitops.git")
        edited = hand_edit(server, objects)
        kubeconfig = server.kubeconfig(tmp_path / "kubeconfig", token=TOKEN)
        done = dump(tmp_path / "snapshot", kubeconfig)
        live_code, live_out, live_err = audit_cli(
            cluster, "--kubeconfig", kubeconfig, repo, "-o", "json"
        )
    if kubevirt:
        assert done.returncode == 0 and done.stderr == "", done.stderr
    else:  # kubectl fails on the kinds not served, and leaves their files empty
        assert "the server doesn't have a resource type" in done.stderr
        assert (tmp_path / "snapshot" / "kubevirts.kubevirt.io.yaml").read_text() == ""
    code, out, err = audit_cli(cluster, "--snapshot", tmp_path / "snapshot", repo, "-o", "json")
    live, snap = json.loads(live_out), json.loads(out)
    assert (live["complete"], live["problems"]) == (True, []), live_err
    assert (snap["complete"], snap["problems"]) == (True, []), err
    assert findings(snap) == findings(live)
    assert bool(findings(snap)) == edited, "the hand edit is found, and nothing else"
    assert code == live_code == int(edited)
    assert "--show-managed-fields" not in " ".join(snap["warnings"]), "managedFields were dumped"
