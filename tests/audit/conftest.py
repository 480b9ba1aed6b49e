"""Fixtures for the auditor's tests: the test API server loaded with live fixtures, clients for it,
and Helm release Secrets made at test time from Cozystack's kubevirt chart with the real helm.

    store                  a Store holding tests/data/crds and tests/data/live (fresh per test)
    api_server             an ApiServer on that store, started; token TOKEN maps to user "auditor"
    token_config           ClusterConfig for api_server with the bearer token
    cert_config            ClusterConfig for api_server with a client certificate (CN auditor)
    kube                   KubeApi(token_config) whose sleeps are recorded in `sleeps`, not slept
    kubevirt_releases      KubevirtReleases: Helm records and Secrets of revisions 1..3
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from audit.kube.api import KubeApi
from audit.kube.kubeconfig import ClusterConfig
from tests.apiserver import ApiServer, Store
from tests.apiserver.crds import load_crds, load_objects
from tests.apiserver.helm import kubevirt_chart as make_kubevirt_chart
from tests.apiserver.helm import release_record, release_secret
from tests.conftest import DATA

LIVE = DATA / "live"
TOKEN = "s3cr3t-t0ken-for-tests"
GPU_VALUES: dict[str, Any] = {
    "extraFeatureGates": ["HostDevices"],
    "permittedHostDevices": {
        "pciHostDevices": [
            {
                "pciVendorSelector": "10DE:2BB5",
                "resourceName": "nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_SERVER_EDITION",
                "externalResourceProvider": True,
            }
        ]
    },
}


@pytest.fixture(scope="session")
def crds() -> list[dict[str, Any]]:
    """The CRDs of every custom kind the auditor reads (tests/data/crds)."""
    return load_crds()


@pytest.fixture(scope="session")
def live_objects() -> list[dict[str, Any]]:
    return load_objects(LIVE)


@pytest.fixture
def store(crds: list[dict[str, Any]], live_objects: list[dict[str, Any]]) -> Store:
    store = Store()
    store.put_all(crds)
    store.put_all(live_objects)
    return store


@pytest.fixture
def api_server(store: Store) -> Iterator[ApiServer]:
    with ApiServer(store) as server:
        server.add_token(TOKEN, "auditor", ("gpu-gitops:auditors",))
        yield server


@pytest.fixture
def token_config(api_server: ApiServer) -> ClusterConfig:
    return ClusterConfig(server=api_server.url, ca_pem=api_server.ca.cert_pem, token=TOKEN)


@pytest.fixture
def cert_config(api_server: ApiServer) -> ClusterConfig:
    pair = api_server.client_cert("auditor", ("gpu-gitops:auditors",))
    return ClusterConfig(
        server=api_server.url,
        ca_pem=api_server.ca.cert_pem,
        client_cert_pem=pair.cert_pem,
        client_key_pem=pair.key_pem,
    )


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def kube(token_config: ClusterConfig, sleeps: list[float]) -> Iterator[KubeApi]:
    with KubeApi(token_config, sleep=sleeps.append, rng=random.Random(7)) as api:
        yield api


@dataclass(frozen=True)
class KubevirtReleases:
    chart: Path
    workdir: Path
    records: dict[int, dict[str, Any]]
    """Helm's release record per revision (as `helm install --dry-run -o json` printed it)."""
    values: dict[int, dict[str, Any]]
    secrets: list[dict[str, Any]]
    """Revision 1 superseded, 2 deployed, 3 failed (namespace cozy-kubevirt)."""


@pytest.fixture(scope="session")
def kubevirt_releases(
    helm_binary: Path, reference_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> KubevirtReleases:
    workdir = tmp_path_factory.mktemp("helm-releases")
    chart = make_kubevirt_chart(reference_dir, workdir)
    values = {1: {}, 2: GPU_VALUES, 3: {**GPU_VALUES, "cpuAllocationRatio": 10}}
    records = {
        rev: release_record(helm_binary, chart, "kubevirt", "cozy-kubevirt", vals, workdir)
        for rev, vals in values.items()
    }
    statuses = {1: "superseded", 2: "deployed", 3: "failed"}
    whens = {1: "2026-09-02T08:14:50Z", 2: "2026-10-14T09:02:10Z", 3: "2026-11-21T03:00:12Z"}
    secrets = [
        release_secret(records[rev], revision=rev, status=statuses[rev], when=whens[rev])
        for rev in (1, 2, 3)
    ]
    return KubevirtReleases(chart, workdir, records, values, secrets)
