"""Live's list-ahead against the test API server, read off its request log: a kind wanted often is
listed whole and looked up, a refused list falls back to GETs, and Secrets are listed only by the
audited Kustomization's labels, per namespace, so no Secret git does not declare is read."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from audit.checks.flux import applied_by
from audit.kube.api import KubeApi, audit_budget
from audit.kube.kubeconfig import ClusterConfig
from audit.run import audit
from audit.sources.desired import Desired
from audit.sources.live import LABEL_LIST_MIN, PREFETCH_MIN, ApiReader, Live, SnapshotReader
from audit.sources.packed import PackedObjects
from kubedata.budget import OverReadBudget
from kubedata.objects import ObjectKey, key_of
from tests.apiserver import ApiServer, RequestRecord, Store

NS = "tenant-a"
KUSTOMIZATION: dict[str, Any] = {
    "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
    "kind": "Kustomization",
    "metadata": {"name": "t1", "namespace": "flux-system"},
    "spec": {"path": "./t1", "sourceRef": {"kind": "GitRepository", "name": "rendered"}},
}
FLUX_LABELS = {
    "kustomize.toolkit.fluxcd.io/name": "t1",
    "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
}


def configmap(i: int, value: str = "v") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"cm-{i:02d}", "namespace": NS},
        "data": {"k": value},
    }


def secret(name: str, namespace: str = NS, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "data": {"k": "dg=="}}


def requests_for(server: ApiServer, plural: str, since: int = 0) -> list[RequestRecord]:
    return [r for r in server.requests[since:] if f"/{plural}" in r.path]


def desired(objects: list[dict[str, Any]]) -> Desired:
    return Desired("t1", "rendered-tip", "rendered@sha1:" + "0" * 40, PackedObjects(objects))


@pytest.fixture(autouse=True)
def namespaces(store: Store) -> None:
    store.put_all(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in (NS, "tenant-b")
    )


# -- list-ahead ----------------------------------------------------------------------------------


def test_a_kind_wanted_often_is_listed_whole_and_looked_up(
    store: Store, api_server: ApiServer, kube: KubeApi
) -> None:
    store.put_all(configmap(i) for i in range(PREFETCH_MIN))
    keys = [key_of(configmap(i)) for i in range(PREFETCH_MIN - 1)]
    keys.append(ObjectKey("", "ConfigMap", NS, "absent"))  # wanted PREFETCH_MIN times in all
    live = Live(ApiReader(kube))
    live.prefetch(keys)
    found = [live.get(k) for k in keys]
    [listed] = requests_for(api_server, "configmaps")
    assert listed.path == "/api/v1/configmaps"  # every namespace, once
    assert [o["metadata"]["name"] for o in found[:-1] if o] == [k.name for k in keys[:-1]]
    assert found[-1] is None  # absent from the whole list: absent, without a GET
    assert requests_for(api_server, "configmaps") == [listed]
    assert live.complete and not live.unread


def test_a_kind_wanted_less_often_is_read_by_get(
    store: Store, api_server: ApiServer, kube: KubeApi
) -> None:
    store.put_all(configmap(i) for i in range(PREFETCH_MIN))
    keys = [key_of(configmap(i)) for i in range(PREFETCH_MIN - 1)]
    live = Live(ApiReader(kube))
    live.prefetch(keys)
    assert requests_for(api_server, "configmaps") == []  # nothing read ahead
    assert all(live.get(k) is not None for k in keys)
    paths = [r.path for r in requests_for(api_server, "configmaps")]
    assert paths == [f"/api/v1/namespaces/{NS}/configmaps/{k.name}" for k in keys]


def test_a_refused_list_falls_back_to_gets_and_the_audit_stays_complete(
    store: Store, api_server: ApiServer, kube: KubeApi
) -> None:
    live_objects = [configmap(i) for i in range(PREFETCH_MIN + 4)]
    live_objects[3] = configmap(3, "edited")
    store.put_all(live_objects)
    api_server.deny("auditor", "list", "configmaps")
    since = len(api_server.requests)
    result = audit(desired([configmap(i) for i in range(PREFETCH_MIN + 4)]), Live(ApiReader(kube)))
    assert result.complete and result.problems == []
    [modified] = [f for f in result.findings if f.object.kind == "ConfigMap"]
    assert (modified.object.name, modified.path, modified.live) == ("cm-03", "/data/k", "edited")
    reads = requests_for(api_server, "configmaps", since)
    assert reads[0].path == "/api/v1/configmaps"  # tried once (403)...
    assert [r.path for r in reads[1:]] == [  # ...then each object by name, as before
        f"/api/v1/namespaces/{NS}/configmaps/cm-{i:02d}" for i in range(PREFETCH_MIN + 4)
    ]


def test_a_kind_listed_whole_is_compared_as_its_pages_arrive_and_not_kept(
    store: Store, api_server: ApiServer, kube: KubeApi
) -> None:
    count = PREFETCH_MIN + 4
    live_objects = [configmap(i) for i in range(count)]
    live_objects[3] = configmap(3, "edited")
    store.put_all(live_objects[1:])  # cm-00 was deleted
    since = len(api_server.requests)
    live = Live(ApiReader(kube))
    result = audit(desired([configmap(i) for i in range(count)]), live)
    assert result.complete
    found = [
        (f.type, f.object.name, f.path) for f in result.findings if f.object.kind == "ConfigMap"
    ]
    assert sorted(found) == [("missing", "cm-00", ""), ("modified", "cm-03", "/data/k")]
    # one list, no GET (absent from the whole list is absent), and nothing of it kept
    assert [r.path for r in requests_for(api_server, "configmaps", since)] == ["/api/v1/configmaps"]
    assert not [key for key in live._gets if key.kind == "ConfigMap"]
    assert not [cache for cache in live._lists if cache[1] == "ConfigMap"]


def test_a_spent_read_budget_ends_the_audit_at_the_first_refusal(
    store: Store, api_server: ApiServer, token_config: ClusterConfig
) -> None:
    count = 200  # one page of ~2 KB objects, over the budget: refused while it is read
    store.put_all(configmap(i, "x" * 2000) for i in range(count))
    with KubeApi(token_config, budget=audit_budget(60, max_bytes=64 << 10)) as kube:
        since = len(api_server.requests)
        with pytest.raises(OverReadBudget) as refused:
            audit(desired([configmap(i) for i in range(count)]), Live(ApiReader(kube)))
        # the list, never each object by name after it (what a failed list falls back to)
        assert [r.path for r in requests_for(api_server, "configmaps", since)] == [
            "/api/v1/configmaps"
        ]
        sent = len(api_server.requests)
        with pytest.raises(OverReadBudget):  # final: refused before it is sent
            kube.get(key_of(configmap(0)))
        assert len(api_server.requests) == sent
    assert str(refused.value) == (
        "the answers add up to over 64Ki bytes (--max-read-bytes 64Ki), so the rest was not "
        "read: rerun with a larger --max-read-bytes (e.g. 128Ki)"
    )


# -- Secrets -------------------------------------------------------------------------------------


@pytest.fixture
def secrets(store: Store) -> dict[str, list[str]]:
    """Live Secrets: declared ones the Kustomization applied (labelled), a declared one that lost
    its labels, a declared one alone in its namespace, and undeclared ones (one labelled by
    another Kustomization)."""
    labelled = [f"app-{i:02d}" for i in range(PREFETCH_MIN + 1)]
    store.put_all(secret(name, labels=FLUX_LABELS) for name in labelled)
    store.put_all(
        [
            secret("hand-relabelled"),
            secret("alone", "tenant-b", FLUX_LABELS),
            secret("undeclared"),
            secret("other-ks", labels={**FLUX_LABELS, "kustomize.toolkit.fluxcd.io/name": "t2"}),
        ]
    )
    return {
        NS: [*labelled, "hand-relabelled"],
        "tenant-b": ["alone"],
        "undeclared": ["undeclared", "other-ks"],
    }


def test_secrets_are_listed_by_the_kustomizations_labels_and_undeclared_ones_never_read(
    secrets: dict[str, list[str]], api_server: ApiServer, kube: KubeApi
) -> None:
    declared = [secret(name) for name in secrets[NS]] + [secret("alone", "tenant-b")]
    since = len(api_server.requests)
    result = audit(desired(declared), Live(ApiReader(kube)), KUSTOMIZATION)
    assert result.complete
    assert not [f for f in result.findings if f.type == "missing"]  # every declared one was read
    selector = applied_by(KUSTOMIZATION)
    assert selector == ",".join(f"{k}={v}" for k, v in FLUX_LABELS.items())
    ours = [
        r
        for r in requests_for(api_server, "secrets", since)
        if r.query.get("labelSelector") != "owner=helm"  # Helm release Secrets: by their label
    ]
    lists = [r for r in ours if r.path.endswith("/secrets")]
    gets = [r.path.rpartition("/")[2] for r in ours if not r.path.endswith("/secrets")]
    assert [(r.path, r.query.get("labelSelector")) for r in lists] == [
        (f"/api/v1/namespaces/{NS}/secrets", selector)  # never all namespaces, never unlabelled
    ]
    assert LABEL_LIST_MIN > 1  # tenant-b wants one Secret: a GET, not a list
    assert gets == ["hand-relabelled", "alone"]  # declared, but not in the labelled list
    assert not {"undeclared", "other-ks"} & set(gets)


def test_without_a_kustomization_secrets_are_read_by_name_only(
    secrets: dict[str, list[str]], api_server: ApiServer, kube: KubeApi
) -> None:
    declared = [secret(name) for name in secrets[NS]]
    live = Live(ApiReader(kube))
    live.prefetch((key_of(o) for o in declared), applied_by(None))
    assert requests_for(api_server, "secrets") == []  # no label to list by: nothing ahead
    assert all(live.get(key_of(o)) is not None for o in declared)
    paths = [r.path for r in requests_for(api_server, "secrets")]
    assert paths == [f"/api/v1/namespaces/{NS}/secrets/{o['metadata']['name']}" for o in declared]


# -- the CRDs of compared kinds ------------------------------------------------------------------

CLUSTER_POLICY: dict[str, Any] = {
    "apiVersion": "nvidia.com/v1",
    "kind": "ClusterPolicy",
    "metadata": {"name": "gpu-policy"},
    "spec": {"sandboxWorkloads": {"enabled": True}},
}
APPLIED = {
    "apiVersion": "nvidia.com/v1",
    "fieldsType": "FieldsV1",
    "fieldsV1": {"f:spec": {"f:sandboxWorkloads": {"f:enabled": {}}}},
    "manager": "kustomize-controller",
    "operation": "Apply",
    "time": "2026-11-02T17:20:44Z",
}
"""What kustomize-controller owns after applying CLUSTER_POLICY: the declared field only (an
Apply owns what it applied; the server's defaults are nobody's)."""
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def applied(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"]["managedFields"] = [APPLIED]
    return out


def policy_findings(result: Any) -> list[Any]:
    return [f for f in result.findings if f.object.kind == "ClusterPolicy"]


def test_the_crd_of_a_compared_custom_kind_is_read_once(
    store: Store, api_server: ApiServer, kube: KubeApi
) -> None:
    two = copy.deepcopy(CLUSTER_POLICY)
    two["metadata"]["name"] = "second"
    store.put_all([applied(CLUSTER_POLICY), applied(two), configmap(1)])
    result = audit(desired([CLUSTER_POLICY, two, configmap(1)]), Live(ApiReader(kube)), None)
    crd_reads = [r.path for r in api_server.requests if r.path.startswith(CRD_PATH)]
    assert crd_reads == [f"{CRD_PATH}/clusterpolicies.nvidia.com"]  # once; none for ConfigMap
    # what the served v26 CRD defaulted (the test server fills it in) is not drift
    assert result.complete and policy_findings(result) == []
    assert not [n for n in result.notes if "CRD of" in n]


def test_a_crd_the_auditor_may_not_read_leaves_the_tables_and_a_note(
    store: Store, api_server: ApiServer, kube: KubeApi
) -> None:
    api_server.deny("auditor", "get", "customresourcedefinitions", "apiextensions.k8s.io")
    store.put(applied(CLUSTER_POLICY))
    result = audit(desired([CLUSTER_POLICY]), Live(ApiReader(kube)), None)
    assert result.complete and result.problems == [] and policy_findings(result) == []
    [note] = [n for n in result.notes if "CRD of ClusterPolicy.nvidia.com" in n]
    assert "could not be read" in note and "built-in tables" in note


# -- what a snapshot folder says about kinds it does not hold ---------------------------------

KUBEVIRT_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "kubevirts.kubevirt.io"},
    "spec": {"group": "kubevirt.io", "names": {"kind": "KubeVirt", "plural": "kubevirts"}},
}
OTHER_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "packages.cozystack.io"},
    "spec": {"group": "cozystack.io", "names": {"kind": "Package", "plural": "packages"}},
}
CRDS = "customresourcedefinitions.apiextensions.k8s.io"
KV = "kubevirts.kubevirt.io"


@pytest.mark.parametrize(
    ("files", "group", "kind", "problem"),
    [
        # no CRD list: a kind not dumped is not read, and the command that dumps it is named
        ({}, "kubevirt.io", "KubeVirt", f"holds no KubeVirt ({KV}), so X was not done: capture"),
        # the CRD list lacks KubeVirt's CRD: not served, nothing of it exists, nothing to do
        ({CRDS: [OTHER_CRD]}, "kubevirt.io", "KubeVirt", None),
        ({KV: "", CRDS: [OTHER_CRD]}, "kubevirt.io", "KubeVirt", None),
        # an empty CRD list is a CRD list too
        ({CRDS: []}, "kubevirt.io", "KubeVirt", None),
        # an empty file without a CRD list: served or not is unknown, and the CRDs tell
        ({KV: ""}, "kubevirt.io", "KubeVirt", f"dump the cluster's CRDs (`kubectl get {CRDS}"),
        # served (its CRD is listed) but the dump is empty: kubectl failed there
        ({KV: "", CRDS: [KUBEVIRT_CRD]}, "kubevirt.io", "KubeVirt", "although the cluster serves"),
        # served, not dumped at all
        ({CRDS: [KUBEVIRT_CRD]}, "kubevirt.io", "KubeVirt", f"holds no KubeVirt ({KV})"),
        # a built-in kind is always served: a CRD list says nothing about it
        ({CRDS: []}, "", "Node", "holds no Node (nodes)"),
        ({"nodes": "", CRDS: []}, "", "Node", "although the cluster serves Node"),
        # an empty list names no kind, and says that none exist
        ({KV: []}, "kubevirt.io", "KubeVirt", None),
    ],
)
def test_a_snapshot_says_which_kinds_it_can_tell_about(
    tmp_path: Path, files: dict[str, Any], group: str, kind: str, problem: str | None
) -> None:
    for name, content in files.items():
        text = (
            content
            if isinstance(content, str)
            else yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": content})
        )
        (tmp_path / f"{name}.yaml").write_text(text)
    (tmp_path / "namespaces.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
    )
    live = Live(SnapshotReader.of_folder(tmp_path))
    assert live.requires(group, kind, "X") is (problem is None)
    if problem is None:
        assert live.problems == []
        assert live.get(ObjectKey(group, kind, "kubevirt", "kubevirt")) is None
        assert live.unread == set()  # not served: absent, not unread
    else:
        (line,) = live.problems
        assert problem in line
        assert "rerun" not in line
        if "empty" in line and "although" not in line:
            assert f"kubectl get {KV}" not in line, "never the command that cannot work"
