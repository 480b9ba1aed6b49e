"""`gpu-gitops adopt --kubeconfig`: the live state read over HTTPS from the project's test API
server, as `audit` reads it; the token never reaches the console, the commit or the profile."""

from __future__ import annotations

from pathlib import Path

from tests.apiserver import ApiServer, Store
from tests.apiserver.crds import load_crds, load_objects
from tests.audit.audit_helpers import demo_objects, demo_repo, run
from tests.conftest import DATA

TOKEN = "adopt-t0ken-never-shown"


def test_adopt_reads_the_cluster_through_its_api(tmp_path: Path) -> None:
    repo, tip = demo_repo(tmp_path / "repo")
    assert tip
    store = Store()
    store.put_all(load_crds())
    store.put_all(o for o in load_objects(DATA / "live") if o["kind"] == "CustomResourceDefinition")
    objects = demo_objects("ams1", tip)
    namespaces = sorted(
        {o["metadata"]["namespace"] for o in objects if o["metadata"].get("namespace")}
    )
    store.put_all(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in namespaces
    )
    store.put_all(objects)
    with ApiServer(store) as server:
        server.add_token(TOKEN, "auditor")
        config = server.kubeconfig(tmp_path / "kubeconfig", token=TOKEN)
        code, out, err = run(
            "adopt",
            "--cluster",
            "ams1",
            "--kubeconfig",
            str(config),
            "--repo",
            str(tmp_path / "repo"),
        )
    assert code == 0, err
    (branch,) = [h.name for h in repo.heads if h.name.startswith("adopt/ams1/")]
    commit = repo.commit(branch)
    message = str(commit.message)
    assert "Adopted-From: cluster ams1 (the current context of " in message
    assert "10DE:2BB1" in repo.git.show(f"{branch}:clusters/ams1/gpu-profile.yaml")
    everything = out + err + message + repo.git.show(branch)
    assert TOKEN not in everything
    assert "read at 20" in err and f"from cluster ams1 (the current context of {config})" in err
