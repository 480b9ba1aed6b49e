"""`gpu-gitops adopt --kubeconfig` and `--in-cluster`: the live state read over HTTPS from the
project's test API server, as `audit` reads it; the token never reaches the console, the commit or
the profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.kube.kubeconfig import IN_CLUSTER_DIR_ENV
from tests.apiserver import ApiServer, Store
from tests.apiserver.crds import load_crds, load_objects
from tests.audit.audit_helpers import demo_objects, demo_repo, run
from tests.audit.incluster import rendered_files
from tests.conftest import DATA

TOKEN = "adopt-t0ken-never-shown"


@pytest.mark.parametrize("access", ["kubeconfig", "in-cluster"])
def test_adopt_reads_the_cluster_through_its_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, access: str
) -> None:
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
        if access == "kubeconfig":
            config = server.kubeconfig(tmp_path / "kubeconfig", token=TOKEN)
            live, source = ["--kubeconfig", str(config)], f"the current context of {config}"
        else:  # as a pod: its service account's files, the API address in the environment,
            # and what git holds from source-controller's artifact, as the nightly job reads it
            (source_repo,) = [o["metadata"] for o in objects if o["kind"] == "GitRepository"]
            files = rendered_files(repo, tip)
            server.serve_artifact(source_repo["namespace"], source_repo["name"], tip, files)
            mount = tmp_path / "serviceaccount"
            mount.mkdir()
            (mount / "token").write_text(TOKEN)
            (mount / "ca.crt").write_bytes(server.ca.cert_pem)
            host, port = server.url.removeprefix("https://").rsplit(":", 1)
            monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)
            monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
            monkeypatch.setenv(IN_CLUSTER_DIR_ENV, str(mount))
            live, source = ["--in-cluster"], "in-cluster service account"
        code, out, err = run("adopt", "--cluster", "ams1", *live, "--repo", str(tmp_path / "repo"))
    assert code == 0, err
    (branch,) = [h.name for h in repo.heads if h.name.startswith("adopt/ams1/")]
    commit = repo.commit(branch)
    message = str(commit.message)
    assert f"Adopted-From: cluster ams1 ({source})" in message
    assert "10DE:2BB1" in repo.git.show(f"{branch}:clusters/ams1/gpu-profile.yaml")
    everything = out + err + message + repo.git.show(branch)
    assert TOKEN not in everything
    assert "read at 20" in err and f"from cluster ams1 ({source})" in err
