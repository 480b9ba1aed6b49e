"""The test API server authorizes service accounts as the RBAC authorizer does (rbac.py), and
serves source-controller's artifact of a GitRepository."""

from __future__ import annotations

import hashlib
import io
import tarfile
from typing import Any

import httpx
import pytest

from tests.apiserver import ApiServer, Store
from tests.apiserver.crds import load_crd
from tests.apiserver.rbac import Attributes, allowed

RBAC = "rbac.authorization.k8s.io"
SA = "system:serviceaccount:gpu-gitops:auditor"


def role(kind: str, name: str, rules: list[dict[str, Any]], namespace: str = "") -> dict[str, Any]:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": f"{RBAC}/v1", "kind": kind, "metadata": meta, "rules": rules}


def binding(kind: str, role_kind: str, name: str, namespace: str = "") -> dict[str, Any]:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": "auditor", "namespace": "gpu-gitops"}],
    }


OBJECTS = [
    role("ClusterRole", "nodes", [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]),
    binding("ClusterRoleBinding", "ClusterRole", "nodes"),
    role(
        "Role",
        "secrets",
        [
            {
                "apiGroups": [""],
                "resources": ["secrets"],
                "verbs": ["get"],
                "resourceNames": ["sh.helm.release.v1.x.v1"],
            }
        ],
        "cozy-system",
    ),
    binding("RoleBinding", "Role", "secrets", "cozy-system"),
    role("ClusterRole", "crds", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get"]}]),
    binding("RoleBinding", "ClusterRole", "crds", "tenant-a"),
]


@pytest.mark.parametrize(
    ("want", "ok"),
    [
        (Attributes("list", "", "nodes", "", ""), True),
        (Attributes("get", "", "nodes", "", "n1"), False),  # verb
        (Attributes("list", "apps", "nodes", "", ""), False),  # API group
        (Attributes("get", "", "secrets", "cozy-system", "sh.helm.release.v1.x.v1"), True),
        (Attributes("get", "", "secrets", "cozy-system", "kubevirt-ca"), False),  # resourceNames
        (Attributes("list", "", "secrets", "cozy-system", ""), False),  # a list has no name
        (Attributes("get", "", "secrets", "kube-system", "sh.helm.release.v1.x.v1"), False),
        (Attributes("get", "apps", "deployments", "tenant-a", "d"), True),  # wildcards
        (Attributes("get", "apps", "deployments", "tenant-b", "d"), False),  # RoleBinding: one ns
        (Attributes("get", "apps", "deployments", "", "d"), False),
    ],
)
def test_rbac_rules_match_verb_group_resource_namespace_and_name(
    want: Attributes, ok: bool
) -> None:
    assert allowed(OBJECTS, SA, (), want) is ok
    assert allowed(OBJECTS, "system:serviceaccount:other:auditor", (), want) is False


def test_service_accounts_get_exactly_their_rbac_and_a_403_status(tmp_path: Any) -> None:
    store = Store()
    store.put_all(
        [
            *(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}
                for n in ("gpu-gitops", "cozy-system", "tenant-a")
            ),
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
            *OBJECTS,
        ]
    )
    with ApiServer(store) as server:
        server.service_account("sa-t0ken", "gpu-gitops", "auditor")
        server.add_token("admin-t0ken", "admin")
        with httpx.Client(verify=False, base_url=server.url) as http:
            sa = {"Authorization": "Bearer sa-t0ken"}
            assert http.get("/api/v1/nodes", headers=sa).status_code == 200
            assert http.get("/api", headers=sa).status_code == 200, "discovery needs no rule"
            denied = http.get("/api/v1/nodes/n1", headers=sa)
            assert denied.status_code == 403
            status = denied.json()
            assert (status["kind"], status["reason"], status["code"]) == (
                "Status",
                "Forbidden",
                403,
            )
            assert status["message"] == (
                'nodes "n1" is forbidden: User "system:serviceaccount:gpu-gitops:auditor" cannot '
                'get resource "nodes" in API group "" at the cluster scope'
            )
            assert status["details"] == {"name": "n1", "kind": "nodes"}
            assert server.forbidden == [status["message"]]
            admin = {"Authorization": "Bearer admin-t0ken"}
            assert http.get("/api/v1/nodes/n1", headers=admin).status_code == 200, "not an SA"


def test_serves_the_artifact_of_a_git_repository() -> None:
    store = Store()
    store.put_all(
        [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "flux-system"}},
            load_crd("gitrepositories.source.toolkit.fluxcd.io"),
        ]
    )
    store.put(
        {
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "GitRepository",
            "metadata": {"name": "gitops", "namespace": "flux-system"},
            "spec": {"url": "ssh://git@example.com/x.git", "ref": {"branch": "rendered"}},
        }
    )
    sha = "a" * 40
    with ApiServer(store) as server:
        url = server.serve_artifact("flux-system", "gitops", sha, {"c1/x.yaml": b"a: 1\n"})
        resource = store.resource("source.toolkit.fluxcd.io", "gitrepositories")
        assert resource is not None
        stored = store.get(resource, "flux-system", "gitops")
        assert stored is not None
        artifact = stored.obj["status"]["artifact"]
        assert artifact["url"] == url
        assert artifact["revision"] == f"rendered@sha1:{sha}"
        assert url.startswith("http://127.0.0.1:") and url.endswith(f"/{sha}.tar.gz")
        data = httpx.get(url).content
        assert artifact["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
        assert artifact["size"] == len(data)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            assert tar.getnames() == ["c1/x.yaml"]
        assert httpx.get(url.replace(sha, "b" * 40)).status_code == 404
