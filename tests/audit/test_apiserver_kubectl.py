"""Fidelity of the test API server, judged by an independent client: the installed kubectl."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.apiserver import ApiServer, Store
from tests.audit.conftest import TOKEN, KubevirtReleases
from tests.audit.kube.test_snapshot import KINDS

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl not installed: no independent client"
)


def kubectl(kubeconfig: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {
        "KUBECONFIG": str(kubeconfig),
        "HOME": str(kubeconfig.parent),
        "KUBECACHEDIR": str(kubeconfig.parent / "cache"),
        "PATH": os.environ.get("PATH", ""),
    }
    return subprocess.run(
        [str(KUBECTL), *args], env=env, capture_output=True, text=True, timeout=60, check=check
    )


@pytest.fixture(params=["token", "client-certificate"])
def kubeconfig(request: pytest.FixtureRequest, api_server: ApiServer, tmp_path: Path) -> Path:
    if request.param == "token":
        return api_server.kubeconfig(tmp_path / "kubeconfig", token=TOKEN)
    pair = api_server.client_cert("auditor", ("gpu-gitops:auditors",))
    return api_server.kubeconfig(tmp_path / "kubeconfig", cert=pair)


def stored_keys(store: Store) -> set[tuple[str, str, str]]:
    wanted = {kind for _, kind, _ in KINDS}
    return {
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])
        for o in store.all_objects()
        if o["kind"] in wanted
    }


def test_kubectl_lists_every_kind_in_chunks(
    kubeconfig: Path, api_server: ApiServer, store: Store, kubevirt_releases: KubevirtReleases
) -> None:
    for secret in kubevirt_releases.secrets:
        store.put(secret)
    plurals = ",".join(plural for _, _, plural in KINDS)
    out = kubectl(kubeconfig, "get", plurals, "-A", "--chunk-size=2", "-o", "json").stdout
    listed = json.loads(out)["items"]
    got = {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in listed}
    assert got == stored_keys(store)
    assert all(o["apiVersion"] and o["kind"] for o in listed)  # kubectl restored built-in types
    lists = [r for r in api_server.requests if r.query.get("limit") == "2"]
    assert {r.path for r in lists} >= {
        "/api/v1/secrets",
        "/api/v1/nodes",
        "/apis/kubevirt.io/v1/kubevirts",
        "/apis/cozystack.io/v1alpha1/packages",
    }
    assert any("continue" in r.query for r in lists)  # kubectl followed continue tokens
    assert {r.user for r in api_server.requests} == {"auditor"}


def test_kubectl_gets_objects_by_name(kubeconfig: Path) -> None:
    for args, name in [
        (("kubevirt", "-n", "cozy-kubevirt", "kubevirt"), "kubevirt"),
        (("packages.cozystack.io", "cozystack.kubevirt"), "cozystack.kubevirt"),
        (("clusterpolicy", "cluster-policy"), "cluster-policy"),
        (("node", "ams1-gpu-01"), "ams1-gpu-01"),
        (("hr", "-n", "cozy-kubevirt", "kubevirt"), "kubevirt"),
        (("ks", "-n", "flux-system", "gpu-gitops-ams1"), "gpu-gitops-ams1"),
        (("gitrepo", "-n", "flux-system", "gpu-gitops"), "gpu-gitops"),
        (("secret", "-n", "flux-system", "gpu-gitops-auth"), "gpu-gitops-auth"),
        (("vm", "-n", "tenant-root", "vm-instance-train01"), "vm-instance-train01"),
    ]:
        obj: dict[str, Any] = json.loads(kubectl(kubeconfig, "get", *args, "-o", "json").stdout)
        assert obj["metadata"]["name"] == name


def test_kubectl_table_output(kubeconfig: Path) -> None:
    out = kubectl(kubeconfig, "get", "nodes").stdout.splitlines()
    assert out[0].split() == ["NAME", "AGE"]
    assert [line.split()[0] for line in out[1:]] == ["ams1-cp-01", "ams1-gpu-01", "ams1-gpu-02"]


def test_kubectl_reads_the_error_statuses(api_server: ApiServer, tmp_path: Path) -> None:
    good = api_server.kubeconfig(tmp_path / "good", token=TOKEN)
    missing = kubectl(good, "get", "kubevirt", "-n", "cozy-kubevirt", "nope", check=False)
    assert (
        missing.stderr.strip()
        == 'Error from server (NotFound): kubevirts.kubevirt.io "nope" not found'
    )
    api_server.deny("auditor", "list", "secrets")
    denied = kubectl(good, "get", "secrets", "-A", check=False)
    assert denied.stderr.strip() == (
        'Error from server (Forbidden): secrets is forbidden: User "auditor" cannot list resource '
        '"secrets" in API group "" at the cluster scope'
    )
    bad = api_server.kubeconfig(tmp_path / "bad", token="not-a-valid-token")
    refused = kubectl(bad, "get", "nodes", check=False)
    assert refused.returncode == 1
    assert "You must be logged in to the server (Unauthorized)" in refused.stderr


def test_kubectl_sees_an_expired_continue_token(
    api_server: ApiServer, store: Store, tmp_path: Path
) -> None:
    good = api_server.kubeconfig(tmp_path / "good", token=TOKEN)
    api_server.faults.status(410, 1, match="continue=")
    expired = kubectl(good, "get", "namespaces", "--chunk-size=2", "-o", "name", check=False)
    assert "Error from server (Expired)" in expired.stderr
