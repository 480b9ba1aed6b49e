"""The test API server itself: what it answers must be what kube-apiserver answers."""

from __future__ import annotations

import base64
import json
import re
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.apiserver import ApiServer, Store
from tests.apiserver.crds import CRD_FIXTURES, crd_fixture_texts
from tests.audit.conftest import TOKEN


@pytest.fixture
def raw(api_server: ApiServer) -> Iterator[httpx.Client]:
    ctx = ssl.create_default_context(cadata=api_server.ca.cert_pem.decode())
    with httpx.Client(
        base_url=api_server.url, verify=ctx, headers={"Authorization": f"Bearer {TOKEN}"}
    ) as client:
        yield client


def status(
    code: int, reason: str, message: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


# -- Status bodies -------------------------------------------------------------------------------


def test_error_bodies_are_written_as_the_real_server_writes_them(
    raw: httpx.Client, api_server: ApiServer
) -> None:
    ctx = ssl.create_default_context(cadata=api_server.ca.cert_pem.decode())
    anonymous = httpx.get(f"{api_server.url}/api/v1/nodes", verify=ctx)
    assert anonymous.status_code == 401
    assert anonymous.json() == status(401, "Unauthorized", "Unauthorized")
    missing = raw.get("/apis/kubevirt.io/v1/namespaces/cozy-kubevirt/kubevirts/nope")
    assert missing.status_code == 404
    assert missing.json() == status(
        404,
        "NotFound",
        'kubevirts.kubevirt.io "nope" not found',
        {"name": "nope", "group": "kubevirt.io", "kind": "kubevirts"},
    )
    assert raw.get("/api/v1/namespaces/default/secrets/nope").json()["details"] == {
        "name": "nope",
        "kind": "secrets",
    }
    unknown = raw.get("/apis/kubevirt.io/v1/virtualmachineinstances")
    assert unknown.json() == status(
        404, "NotFound", "the server could not find the requested resource", {}
    )
    assert raw.get("/metrics").text == "404 page not found\n"
    api_server.deny("auditor", "get", "secrets")
    forbidden = raw.get("/api/v1/namespaces/flux-system/secrets/gpu-gitops-auth")
    assert forbidden.json() == status(
        403,
        "Forbidden",
        'secrets "gpu-gitops-auth" is forbidden: User "auditor" cannot get resource "secrets" in '
        'API group "" in the namespace "flux-system"',
        {"name": "gpu-gitops-auth", "kind": "secrets"},
    )


def test_client_certificates_name_user_and_groups(api_server: ApiServer, tmp_path: Any) -> None:
    pair = api_server.client_cert("alice", ("team-a", "system:masters"))
    ctx = ssl.create_default_context(cadata=api_server.ca.cert_pem.decode())
    (tmp_path / "c").write_bytes(pair.cert_pem)
    (tmp_path / "k").write_bytes(pair.key_pem)
    ctx.load_cert_chain(tmp_path / "c", tmp_path / "k")
    assert httpx.get(f"{api_server.url}/api/v1/nodes", verify=ctx).status_code == 200
    peer = api_server.authenticate(
        {"subject": ((("organizationName", "team-a"),), (("commonName", "alice"),))}, ""
    )
    assert peer is not None and (peer.name, peer.groups) == ("alice", ("team-a",))
    assert api_server.requests[-1].user == "alice"


# -- discovery -----------------------------------------------------------------------------------


def test_discovery_documents(raw: httpx.Client) -> None:
    core = raw.get("/api/v1").json()
    assert core["groupVersion"] == "v1" and "apiVersion" not in core
    names = {r["name"] for r in core["resources"]}
    assert {"namespaces", "nodes", "secrets", "namespaces/status"} <= names
    groups = {g["name"]: g for g in raw.get("/apis").json()["groups"]}
    kubevirt = groups["kubevirt.io"]
    assert [v["groupVersion"] for v in kubevirt["versions"]] == [
        "kubevirt.io/v1",
        "kubevirt.io/v1alpha3",
    ]
    assert kubevirt["preferredVersion"] == {"groupVersion": "kubevirt.io/v1", "version": "v1"}
    doc = raw.get("/apis/kubevirt.io/v1").json()
    assert (doc["kind"], doc["apiVersion"], doc["groupVersion"]) == (
        "APIResourceList",
        "v1",
        "kubevirt.io/v1",
    )
    entry = next(r for r in doc["resources"] if r["name"] == "kubevirts")
    assert {
        k: entry[k] for k in ("singularName", "namespaced", "kind", "shortNames", "categories")
    } == {
        "singularName": "kubevirt",
        "namespaced": True,
        "kind": "KubeVirt",
        "shortNames": ["kv", "kvs"],
        "categories": ["all"],
    }
    assert "list" in entry["verbs"] and "get" in entry["verbs"]
    assert raw.get("/apis/nvidia.com").json()["preferredVersion"]["version"] == "v1"
    assert raw.get("/version").json()["gitVersion"] == "v1.32.4"


def test_objects_are_served_at_every_served_version(raw: httpx.Client) -> None:
    old = raw.get("/apis/kubevirt.io/v1alpha3/namespaces/cozy-kubevirt/kubevirts/kubevirt").json()
    assert old["apiVersion"] == "kubevirt.io/v1alpha3" and old["metadata"]["name"] == "kubevirt"


# -- server-set metadata and defaults ------------------------------------------------------------


def test_server_sets_metadata_and_secret_type(store: Store) -> None:
    first = store.put(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "a", "namespace": "default"},
            "stringData": {"k": "v"},
        }
    )
    second = store.put(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "b", "namespace": "default"},
            "data": {"x": "y"},
        }
    )
    meta = first["metadata"]
    assert (
        first["type"] == "Opaque" and first["data"] == {"k": "dg=="} and "stringData" not in first
    )
    assert re.fullmatch(r"[0-9a-f-]{36}", meta["uid"]) and meta["uid"][14] == "4"
    assert int(second["metadata"]["resourceVersion"]) == int(meta["resourceVersion"]) + 1
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["creationTimestamp"])
    assert "generation" not in meta
    [entry] = meta["managedFields"]
    assert {k: entry[k] for k in ("manager", "operation", "apiVersion", "fieldsType")} == {
        "manager": "kubectl-create",
        "operation": "Update",
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
    }
    assert entry["fieldsV1"] == {"f:data": {"f:k": {}}, "f:type": {}}


def test_generation_counts_spec_changes_only(store: Store) -> None:
    repo = {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": "r", "namespace": "flux-system"},
        "spec": {"interval": "1m", "url": "https://git.example.com/r.git"},
    }
    created = store.put(repo)
    assert created["metadata"]["generation"] == 1
    # Flux CRD defaults: spec.timeout and the status default observedGeneration -1.
    assert created["spec"]["timeout"] == "60s" and created["status"] == {"observedGeneration": -1}
    created["status"] = {"observedGeneration": 1}
    assert store.put(created)["metadata"]["generation"] == 1
    created["spec"]["interval"] = "5m"
    updated = store.put(created)
    assert updated["metadata"]["generation"] == 2
    assert updated["metadata"]["uid"] == created["metadata"]["uid"]


def test_custom_resources_are_pruned_and_defaulted_by_their_crd(store: Store) -> None:
    policy = store.get(store.resource("nvidia.com", "clusterpolicies"), "", "cluster-policy")  # type: ignore[arg-type]
    assert policy is not None
    spec = policy.obj["spec"]
    assert spec["cdi"]["nriPluginEnabled"] is False and spec["driver"]["kernelModuleType"] == "auto"
    kubevirt = store.put(
        {
            "apiVersion": "kubevirt.io/v1",
            "kind": "KubeVirt",
            "metadata": {"name": "kv2", "namespace": "default"},
            "spec": {
                "imagePullPolicy": "Always",
                "notAField": 1,
                "configuration": {"developerConfiguration": {"typo": True}},
            },
        }
    )
    assert kubevirt["spec"] == {
        "imagePullPolicy": "Always",
        "configuration": {"developerConfiguration": {}},
    }
    package = store.put(
        {
            "apiVersion": "cozystack.io/v1alpha1",
            "kind": "Package",
            "metadata": {"name": "p"},
            "spec": {"components": {"c": {"values": {"any": {"x": 1}}}}, "unknown": 1},
        }
    )
    assert package["spec"] == {
        "components": {"c": {"values": {"any": {"x": 1}}}}
    }  # values preserved


def test_fixtures_survive_their_crds(store: Store, live_objects: list[dict[str, Any]]) -> None:
    """Nothing in tests/data/live is pruned: every fixture field is known to the real CRD."""

    def missing(want: Any, have: Any, path: str) -> list[str]:
        if isinstance(want, dict) and isinstance(have, dict):
            return [
                m
                for k, v in want.items()
                for m in (missing(v, have[k], f"{path}/{k}") if k in have else [f"{path}/{k}"])
            ]
        if isinstance(want, list) and isinstance(have, list) and len(want) == len(have):
            return [
                m
                for i, (w, h) in enumerate(zip(want, have, strict=True))
                for m in missing(w, h, f"{path}/{i}")
            ]
        return [] if want == have else [path]

    for obj in live_objects:
        group = obj["apiVersion"].rpartition("/")[0]
        resource = store.resource_for_kind(group, obj["kind"])
        assert resource is not None
        meta = obj["metadata"]
        stored = store.get(resource, meta.get("namespace", ""), meta["name"])
        assert stored is not None
        body = {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion")}
        kept_meta = {k: v for k, v in meta.items() if k != "resourceVersion"}
        assert missing(body, stored.obj, "") == [], obj["kind"]
        assert missing(kept_meta, stored.obj["metadata"], "/metadata") == [], obj["kind"]


def test_built_in_defaults(store: Store) -> None:
    ns = store.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fresh"}})
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "fresh"}
    assert ns["spec"] == {"finalizers": ["kubernetes"]} and ns["status"] == {"phase": "Active"}
    svc = store.put(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "s", "namespace": "fresh"},
            "spec": {"selector": {"app": "x"}, "ports": [{"name": "http", "port": 80}]},
        }
    )
    assert svc["spec"]["ports"] == [
        {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 80}
    ]
    assert svc["spec"]["type"] == "ClusterIP" and svc["spec"]["clusterIPs"] == [
        svc["spec"]["clusterIP"]
    ]
    deploy = store.put(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "fresh"},
            "spec": {
                "selector": {"matchLabels": {"app": "d"}},
                "template": {
                    "metadata": {"labels": {"app": "d"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            },
        }
    )
    spec = deploy["spec"]
    assert (spec["replicas"], spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (
        1,
        10,
        600,
    )
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    container = spec["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "Always"  # untagged image
    assert deploy["metadata"]["generation"] == 1
    with pytest.raises(ValueError, match="namespace nowhere does not exist"):
        store.put(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "x", "namespace": "nowhere"},
            }
        )


# -- lists ---------------------------------------------------------------------------------------


def test_pages_carry_continue_and_remaining_item_count(raw: httpx.Client) -> None:
    first = raw.get("/api/v1/namespaces", params={"limit": 3}).json()
    assert first["kind"] == "NamespaceList" and len(first["items"]) == 3
    assert first["metadata"]["remainingItemCount"] == 4
    token = json.loads(base64.urlsafe_b64decode(first["metadata"]["continue"] + "=="))
    assert (
        token["v"] == "meta.k8s.io/v1" and str(token["rv"]) == first["metadata"]["resourceVersion"]
    )
    rest = raw.get(
        "/api/v1/namespaces", params={"limit": 10, "continue": first["metadata"]["continue"]}
    ).json()
    assert len(rest["items"]) == 4 and "continue" not in rest["metadata"]
    assert "remainingItemCount" not in rest["metadata"]
    assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    names = [i["metadata"]["name"] for i in first["items"] + rest["items"]]
    assert names == sorted(names)  # etcd key order
    labelled = raw.get(
        "/api/v1/namespaces", params={"limit": 1, "labelSelector": "cozystack.io/system"}
    ).json()
    assert "remainingItemCount" not in labelled["metadata"] and labelled["metadata"]["continue"]


def test_expired_and_invalid_continue_tokens(raw: httpx.Client, store: Store) -> None:
    first = raw.get("/api/v1/namespaces", params={"limit": 2}).json()
    store.compact()
    expired = raw.get(
        "/api/v1/namespaces", params={"limit": 2, "continue": first["metadata"]["continue"]}
    )
    assert expired.status_code == 410
    body = expired.json()
    assert (body["reason"], body["code"]) == ("Expired", 410)
    assert body["message"].startswith("The provided continue parameter is too old")
    # the fresh token continues after the same key, at the latest state (rv -1 as etcd3 encodes)
    fresh = body["metadata"]["continue"]
    token = json.loads(base64.urlsafe_b64decode(fresh + "=="))
    assert token["rv"] == -1
    rest = raw.get("/api/v1/namespaces", params={"limit": 100, "continue": fresh}).json()
    names = [i["metadata"]["name"] for i in first["items"] + rest["items"]]
    everything = raw.get("/api/v1/namespaces").json()
    assert names == [i["metadata"]["name"] for i in everything["items"]]
    assert rest["metadata"]["resourceVersion"] == everything["metadata"]["resourceVersion"]
    assert "continue" not in rest["metadata"]
    bad = raw.get("/api/v1/namespaces", params={"limit": 2, "continue": "!!"})
    assert bad.status_code == 400 and bad.json()["reason"] == "BadRequest"


def test_selectors(raw: httpx.Client) -> None:
    def names(**params: str) -> list[str]:
        return [
            i["metadata"]["name"] for i in raw.get("/api/v1/nodes", params=params).json()["items"]
        ]

    assert names(labelSelector="nvidia.com/gpu.workload.config=vm-passthrough") == ["ams1-gpu-01"]
    assert names(labelSelector="nvidia.com/gpu.workload.config!=vm-passthrough") == [
        "ams1-cp-01",
        "ams1-gpu-02",
    ]
    assert names(labelSelector="!nvidia.com/gpu.present") == ["ams1-cp-01"]
    assert names(
        labelSelector="nvidia.com/gpu.workload.config notin (container),nvidia.com/gpu.present"
    ) == ["ams1-gpu-01"]
    assert names(fieldSelector="metadata.name=ams1-gpu-02") == ["ams1-gpu-02"]
    secrets = raw.get(
        "/api/v1/secrets", params={"fieldSelector": "metadata.namespace=flux-system"}
    ).json()
    assert [i["metadata"]["name"] for i in secrets["items"]] == ["gpu-gitops-auth"]
    # Nodes select on spec.unschedulable (NodeToSelectableFields); absent reads as false
    assert names(fieldSelector="spec.unschedulable=true") == []
    assert names(fieldSelector="spec.unschedulable=false") == [
        "ams1-cp-01",
        "ams1-gpu-01",
        "ams1-gpu-02",
    ]
    assert names(fieldSelector="spec.unschedulable!=false,metadata.name=ams1-gpu-01") == []
    # ...which other kinds do not
    bad = raw.get("/api/v1/namespaces", params={"fieldSelector": "spec.unschedulable=true"})
    assert bad.status_code == 400 and "field label not supported" in bad.json()["message"]
    bad = raw.get("/api/v1/nodes", params={"fieldSelector": "spec.podCIDR=10.0.0.0/24"})
    assert bad.status_code == 400 and "field label not supported" in bad.json()["message"]


# -- faults --------------------------------------------------------------------------------------


def test_fault_knobs(raw: httpx.Client, api_server: ApiServer) -> None:
    api_server.faults.status(429, 1, retry_after=7)
    throttled = raw.get("/api/v1/nodes")
    assert (throttled.status_code, throttled.headers["Retry-After"]) == (429, "7")
    assert throttled.json()["reason"] == "TooManyRequests"
    api_server.faults.truncate(1)
    with pytest.raises(httpx.RemoteProtocolError):
        raw.get("/api/v1/nodes")
    api_server.faults.malformed(1)
    with pytest.raises(json.JSONDecodeError):
        raw.get("/api/v1/nodes").json()
    api_server.faults.reset(1)
    with pytest.raises(httpx.TransportError):
        raw.get("/api/v1/nodes")
    assert raw.get("/api/v1/nodes").status_code == 200
    assert [r.fault for r in api_server.requests] == [
        "status",
        "truncate",
        "malformed",
        "reset",
        "",
    ]


def test_crd_fixtures_are_the_upstream_crds_without_descriptions(reference_dir: Path):
    """tests/data/crds/ as `python -m tests.apiserver.crds` makes it from the reference files."""
    made = crd_fixture_texts(reference_dir)
    held = {p.name: p.read_text(encoding="utf-8") for p in CRD_FIXTURES.glob("*.yaml")}
    assert made == held
