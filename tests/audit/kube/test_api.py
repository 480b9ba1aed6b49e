"""KubeApi against the test API server: discovery, reads, pagination, faults, auth modes."""

from __future__ import annotations

import gc
import json
import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from audit.errors import IncompleteReadError, KubeApiError
from audit.kube.api import KubeApi, decode_json
from audit.kube.auth import build_ssl_context
from audit.kube.kubeconfig import ClusterConfig
from kubedata.objects import ObjectKey
from kubedata.retry import RetryPolicy
from tests.apiserver import ApiServer, Store
from tests.audit.conftest import TOKEN

SECRETS = 1  # fixture Secrets (flux-system/gpu-gitops-auth)


class HookTransport(httpx.HTTPTransport):
    """Runs `hook(request)` before each request: lets a test write to the store between pages."""

    def __init__(self, config: ClusterConfig, hook: Callable[[httpx.Request], None]) -> None:
        super().__init__(verify=build_ssl_context(config))
        self.hook = hook

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.hook(request)
        return super().handle_request(request)


def add_secrets(store: Store, count: int, namespace: str = "cozy-system") -> None:
    for i in range(count):
        store.put(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": f"s-{i:03d}", "namespace": namespace},
                "data": {"k": "dg=="},
            }
        )


def list_requests(server: ApiServer, plural: str) -> list[dict[str, str]]:
    return [r.query for r in server.requests if r.path.endswith(f"/{plural}")]


# -- discovery -----------------------------------------------------------------------------------


def test_discovery_resolves_kind_to_plural_scope_and_preferred_version(kube: KubeApi) -> None:
    kubevirt = kube.resolve("KubeVirt", "kubevirt.io")
    assert kubevirt is not None
    # v1 is preferred over the deprecated v1alpha3 that the CRD also serves.
    assert (kubevirt.plural, kubevirt.namespaced, kubevirt.version) == ("kubevirts", True, "v1")
    assert kubevirt.short_names == ("kv", "kvs")
    package = kube.resolve("Package", "cozystack.io")
    assert package is not None and (package.plural, package.namespaced) == ("packages", False)
    policy = kube.resolve("ClusterPolicy", "nvidia.com")
    assert policy is not None and policy.path("", "cluster-policy") == (
        "/apis/nvidia.com/v1/clusterpolicies/cluster-policy"
    )
    secret = kube.resolve("Secret")
    assert secret is not None and secret.path("ns1") == "/api/v1/namespaces/ns1/secrets"


def test_discovery_skips_subresources(kube: KubeApi) -> None:
    plurals = [r.plural for r in kube.discovery.resources("kubevirt.io", "v1")]
    assert "kubevirts" in plurals and not [p for p in plurals if "/" in p]


def test_unknown_kinds_are_reported_not_fatal(kube: KubeApi) -> None:
    found, missing = kube.resolve_all(
        [
            ("kubevirt.io", "KubeVirt"),
            ("snapshot.storage.k8s.io", "VolumeSnapshot"),
            ("kubevirt.io", "VirtualMachineInstance"),
        ]
    )
    assert list(found) == [("kubevirt.io", "KubeVirt")]
    assert missing == [
        ("snapshot.storage.k8s.io", "VolumeSnapshot"),
        ("kubevirt.io", "VirtualMachineInstance"),
    ]
    with pytest.raises(
        KubeApiError, match=r"VolumeSnapshot\.snapshot\.storage\.k8s\.io is not served"
    ):
        kube.list("VolumeSnapshot", "snapshot.storage.k8s.io")


def test_discovery_is_fetched_once(kube: KubeApi, api_server: ApiServer) -> None:
    kube.resolve("KubeVirt", "kubevirt.io")
    kube.resolve("KubeVirt", "kubevirt.io")
    kube.resolve("Package", "cozystack.io")
    paths = [r.path for r in api_server.requests]
    assert paths.count("/apis") == 1 and paths.count("/apis/kubevirt.io/v1") == 1


# -- get and list --------------------------------------------------------------------------------


def test_get_returns_the_object_or_none(kube: KubeApi, store: Store) -> None:
    live = kube.get(ObjectKey("kubevirt.io", "KubeVirt", "cozy-kubevirt", "kubevirt"))
    assert live is not None
    stored = store.get(store.resource("kubevirt.io", "kubevirts"), "cozy-kubevirt", "kubevirt")  # type: ignore[arg-type]
    assert stored is not None and live == stored.obj
    assert kube.get(ObjectKey("kubevirt.io", "KubeVirt", "cozy-kubevirt", "absent")) is None
    node = kube.get(ObjectKey("", "Node", "", "ams1-gpu-01"))
    assert node is not None and node["apiVersion"] == "v1" and node["kind"] == "Node"


def test_list_pages_and_fills_apiversion_and_kind(
    kube: KubeApi, store: Store, api_server: ApiServer
) -> None:
    add_secrets(store, 6)
    secrets = kube.list("Secret", "", limit=2)
    assert len(secrets) == SECRETS + 6
    assert all(s["apiVersion"] == "v1" and s["kind"] == "Secret" for s in secrets)
    queries = list_requests(api_server, "secrets")
    assert len(queries) == 4 and all(q["limit"] == "2" for q in queries)
    assert "continue" not in queries[0] and all("continue" in q for q in queries[1:])


def test_built_in_list_items_arrive_without_type(api_server: ApiServer) -> None:
    # What the client has to fill in: the server leaves apiVersion/kind off built-in items only.
    ctx = build_ssl_context(ClusterConfig(server=api_server.url, ca_pem=api_server.ca.cert_pem))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=api_server.url, verify=ctx, headers=headers) as client:
        nodes = client.get("/api/v1/nodes").json()
        kubevirts = client.get("/apis/kubevirt.io/v1/kubevirts").json()
    assert nodes["kind"] == "NodeList" and "kind" not in nodes["items"][0]
    assert kubevirts["items"][0]["kind"] == "KubeVirt"


def test_list_in_one_namespace_and_with_selectors(kube: KubeApi, store: Store) -> None:
    add_secrets(store, 3, "cozy-kubevirt")
    assert len(kube.list("Secret", "", namespace="cozy-kubevirt", limit=2)) == 3
    gpu = kube.list("Node", "", label_selector="nvidia.com/gpu.present=true", limit=1)
    assert sorted(n["metadata"]["name"] for n in gpu) == ["ams1-gpu-01", "ams1-gpu-02"]
    container = kube.list(
        "Node", "", label_selector="nvidia.com/gpu.workload.config in (container)"
    )
    assert [n["metadata"]["name"] for n in container] == ["ams1-gpu-02"]
    named = kube.list("Package", "cozystack.io", field_selector="metadata.name=cozystack.hami")
    assert [p["metadata"]["name"] for p in named] == ["cozystack.hami"]


def test_list_is_a_consistent_snapshot(token_config: ClusterConfig, store: Store) -> None:
    add_secrets(store, 4)

    def write_between_pages(request: httpx.Request) -> None:
        if "continue" in request.url.params:
            add_secrets(store, 1, "tenant-root")  # a write after the first page

    with KubeApi(token_config, transport=HookTransport(token_config, write_between_pages)) as api:
        names = [s["metadata"]["name"] for s in api.list("Secret", "", limit=2)]
    assert len(names) == SECRETS + 4  # the write is not in this list, which reads one revision


def test_expired_continue_restarts_the_list(
    token_config: ClusterConfig, store: Store, api_server: ApiServer
) -> None:
    add_secrets(store, 5)
    compactions: list[int] = []

    def compact_once(request: httpx.Request) -> None:
        if "continue" in request.url.params and not compactions:
            compactions.append(1)
            store.compact()

    transport = HookTransport(token_config, compact_once)
    with KubeApi(token_config, transport=transport, sleep=lambda s: None) as api:
        secrets = api.list("Secret", "", limit=2)
        assert api.restarts == 1
    assert len(secrets) == SECRETS + 5
    assert len({s["metadata"]["name"] for s in secrets}) == len(secrets)  # no page twice
    expired = [r for r in api_server.requests if r.path == "/api/v1/secrets"]
    assert "continue" not in expired[2].query  # the restart began without a token


def test_a_list_that_keeps_expiring_is_incomplete(
    token_config: ClusterConfig, store: Store
) -> None:
    add_secrets(store, 5)

    def always_compact(request: httpx.Request) -> None:
        if "continue" in request.url.params:
            store.compact()

    transport = HookTransport(token_config, always_compact)
    expired = r"list secrets in all namespaces: the list expired \(410\) 3 times"
    with (
        KubeApi(token_config, transport=transport, list_restarts=2) as api,
        pytest.raises(IncompleteReadError, match=expired),
    ):
        api.list("Secret", "", limit=2)


# -- faults --------------------------------------------------------------------------------------


FAULTS: dict[str, Callable[[ApiServer, int, str], Any]] = {
    "429": lambda s, n, m: s.faults.status(429, n, retry_after=3, match=m),
    "500": lambda s, n, m: s.faults.status(500, n, match=m),
    "502": lambda s, n, m: s.faults.status(502, n, match=m),
    "503": lambda s, n, m: s.faults.status(503, n, match=m),
    "504": lambda s, n, m: s.faults.status(504, n, match=m),
    "truncated": lambda s, n, m: s.faults.truncate(n, match=m),
    "malformed": lambda s, n, m: s.faults.malformed(n, match=m),
    "reset": lambda s, n, m: s.faults.reset(n, match=m),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_fault_is_recovered_by_retry(
    fault: str, kube: KubeApi, api_server: ApiServer, store: Store, sleeps: list[float]
) -> None:
    add_secrets(store, 3)
    FAULTS[fault](api_server, 2, "secrets")
    secrets = kube.list("Secret", "", limit=2)
    assert len(secrets) == SECRETS + 3
    assert kube.retries == 2 and len(sleeps) == 2
    if fault == "429":
        assert sleeps == [3.0, 3.0]  # Retry-After honoured (larger than the backoff)
    else:
        assert 0.125 <= sleeps[0] <= 0.25 and 0.25 <= sleeps[1] <= 0.5  # backoff with jitter


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_fault_exhausting_retries_is_an_incomplete_read(
    fault: str, kube: KubeApi, api_server: ApiServer, store: Store
) -> None:
    add_secrets(store, 3)
    # Only continue requests fail: the first page arrived, yet no partial list may come back.
    FAULTS[fault](api_server, 5, "continue=")
    with pytest.raises(IncompleteReadError) as caught:
        kube.list("Secret", "", limit=2)
    assert str(caught.value).startswith("list secrets in all namespaces: gave up after 5 attempts")
    assert TOKEN not in str(caught.value)
    assert kube.requests == 1 + 3 + 5  # discovery /api, /apis, /api/v1; first page; 5 attempts


def test_a_slow_server_is_retried_after_the_read_timeout(
    token_config: ClusterConfig, api_server: ApiServer, sleeps: list[float]
) -> None:
    api_server.faults.delay(0.6, 1, match="namespaces")
    timeout = httpx.Timeout(0.3, connect=2.0)
    with KubeApi(token_config, timeout=timeout, sleep=sleeps.append) as api:
        assert len(api.list("Namespace", "")) == 7
        assert api.retries == 1


def test_discovery_faults_are_retried_too(kube: KubeApi, api_server: ApiServer) -> None:
    api_server.faults.status(503, 2, match="GET /apis")
    api_server.faults.reset(1, match="/apis/kubevirt.io/v1")
    assert kube.resolve("KubeVirt", "kubevirt.io") is not None


def test_retry_after_is_capped(token_config: ClusterConfig, api_server: ApiServer) -> None:
    waits: list[float] = []
    api_server.faults.status(429, 1, retry_after=3600, match="nodes")
    with KubeApi(token_config, sleep=waits.append, retry=RetryPolicy(retry_after_max=20)) as api:
        api.list("Node", "")
    assert waits == [20]


# -- errors and auth -----------------------------------------------------------------------------


def test_forbidden_is_an_api_error_with_the_servers_reason(
    kube: KubeApi, api_server: ApiServer
) -> None:
    api_server.deny("auditor", "list", "secrets")
    with pytest.raises(KubeApiError) as caught:
        kube.list("Secret", "")
    assert (caught.value.status, caught.value.reason) == (403, "Forbidden")
    assert (
        'User "auditor" cannot list resource "secrets" in API group "" at the cluster scope'
        in str(caught.value)
    )
    assert "grant it get/list" in str(caught.value)


def test_a_refused_token_is_unauthorized_and_not_repeated(api_server: ApiServer) -> None:
    config = ClusterConfig(
        server=api_server.url, ca_pem=api_server.ca.cert_pem, token="wrong-token-abc"
    )
    with KubeApi(config) as api, pytest.raises(KubeApiError) as caught:
        api.list("Node", "")
    assert (caught.value.status, caught.value.reason) == (401, "Unauthorized")
    assert "wrong-token-abc" not in str(caught.value)


def test_client_certificate_auth(cert_config: ClusterConfig, api_server: ApiServer) -> None:
    with KubeApi(cert_config) as api:
        assert len(api.list("Node", "")) == 3
    assert {r.user for r in api_server.requests} == {"auditor"}


def test_no_credentials_is_unauthorized(api_server: ApiServer) -> None:
    config = ClusterConfig(server=api_server.url, ca_pem=api_server.ca.cert_pem)
    with KubeApi(config) as api, pytest.raises(KubeApiError, match="401 Unauthorized"):
        api.list("Node", "")


def test_an_untrusted_server_certificate_is_refused_at_once(api_server: ApiServer) -> None:
    other_ca = ApiServer().ca.cert_pem
    config = ClusterConfig(server=api_server.url, ca_pem=other_ca, token=TOKEN)
    with KubeApi(config) as api, pytest.raises(KubeApiError) as caught:
        api.list("Node", "")
    assert caught.value.reason == "TLSError" and api.requests == 1  # not worth retrying
    assert "(self-signed certificate in certificate chain)" in str(caught.value)


def test_tls_server_name_is_what_the_certificate_is_checked_against(api_server: ApiServer) -> None:
    ca = api_server.ca.cert_pem
    named = ClusterConfig(
        server=api_server.url, ca_pem=ca, token=TOKEN, tls_server_name="localhost"
    )
    with KubeApi(named) as api:
        assert len(api.list("Node", "")) == 3
    wrong = ClusterConfig(
        server=api_server.url, ca_pem=ca, token=TOKEN, tls_server_name="k8s.other"
    )
    with KubeApi(wrong) as api, pytest.raises(KubeApiError, match="Hostname mismatch"):
        api.list("Node", "")


def test_insecure_skip_tls_verify_connects_without_a_ca(api_server: ApiServer) -> None:
    config = ClusterConfig(server=api_server.url, insecure_skip_tls_verify=True, token=TOKEN)
    with KubeApi(config) as api:
        assert len(api.list("Node", "")) == 3


# -- garbage collector ---------------------------------------------------------------------------


def test_decoding_pauses_the_gc_and_restores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    real_loads = json.loads

    def loads(body: bytes) -> Any:
        seen.append(gc.isenabled())
        return real_loads(body)

    monkeypatch.setattr(json, "loads", loads)
    assert gc.isenabled()
    assert decode_json(b'{"a": [1, 2]}') == {"a": [1, 2]}
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        decode_json(b"[]")
        assert not gc.isenabled()  # a caller's own pause is left alone
    finally:
        gc.enable()
    with pytest.raises(ValueError):
        decode_json(b"{truncated")
    assert gc.isenabled()
    decode_json(b"[]", pause_gc=False)
    assert seen[-1] is True


@pytest.mark.parametrize("pause", [True, False])
def test_list_pages_are_decoded_with_the_gc_paused(
    pause: bool, token_config: ClusterConfig, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_secrets(store, 4)
    during_decode: list[bool] = []
    during_requests: list[bool] = []
    real_loads = json.loads

    def loads(body: bytes) -> Any:
        if threading.current_thread() is client_thread:  # not the server's own json.loads
            during_decode.append(gc.isenabled())
        return real_loads(body)

    client_thread = threading.current_thread()
    transport = HookTransport(token_config, lambda request: during_requests.append(gc.isenabled()))
    with KubeApi(token_config, transport=transport, pause_gc=pause) as api:
        api.resolve("Secret")
        monkeypatch.setattr(json, "loads", loads)
        assert len(api.list("Secret", "", limit=2)) == SECRETS + 4
    assert during_decode == [not pause] * 3
    assert all(during_requests) and gc.isenabled()  # only the decoding is paused
