"""The nightly audit job's RBAC against what the auditor really requests from an API server.

The rendered RBAC (renderer.audit_rbac) must allow every request an audit makes, and grant nothing
the audit does not use: run the audit of a profile with spec.audit against the test API server
(which serves the built-in kinds the job's own objects have: batch, RBAC) and compare its request
log with the rules.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from renderer.audit_rbac import audit_rbac_rules
from renderer.profile import load_profile
from renderer.publish.publish import publish
from tests.apiserver import ApiServer, Store
from tests.apiserver.crds import HELM_REPOSITORY, load_crd, load_objects
from tests.audit.audit_helpers import EXAMPLES, audit_cli, demo_objects, init_repo
from tests.conftest import DATA
from tests.renderer.rbac_paths import uncovered, unused

TOKEN = "audit-job-t0ken"
AUDIT = "  audit:\n    image: ghcr.io/example/gpu-gitops:0.1.0\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """ams1 with the nightly audit job on, published to the rendered branch."""
    folder = tmp_path / "ams1"
    shutil.copytree(EXAMPLES / "ams1", folder, ignore=shutil.ignore_patterns("flux"))
    profile = folder / "gpu-profile.yaml"
    profile.write_text(profile.read_text() + AUDIT)
    root = tmp_path / "repo"
    init_repo(root, {"ams1": folder})
    publish(root)
    return root


@pytest.fixture
def server(crds: list[dict[str, Any]], repo: Path) -> Iterator[ApiServer]:
    tip = publish(repo).tip
    store = Store()
    store.put_all(crds)
    store.put_all([load_crd(HELM_REPOSITORY)])  # the auditor lists HelmRepositories
    store.put_all(o for o in load_objects(DATA / "live") if o["kind"] == "CustomResourceDefinition")
    namespaces = ("cozy-system", "cozy-kubevirt", "cozy-gpu-operator", "cozy-fluxcd", "tenant-root")
    store.put_all(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in namespaces
    )
    store.put_all(demo_objects("ams1", tip))
    with ApiServer(store) as api:
        api.add_token(TOKEN, "auditor")
        yield api


def test_the_audit_job_may_make_every_request_of_an_audit_and_no_more(
    server: ApiServer, repo: Path, tmp_path: Path
) -> None:
    config = server.kubeconfig(tmp_path / "kubeconfig", token=TOKEN)
    code, _, err = audit_cli("ams1", "--kubeconfig", config, repo, "-o", "json")
    assert code in (0, 1), err
    requests = [r for r in server.requests if r.user == "auditor"]
    assert requests and all(r.method == "GET" for r in requests), "read-only"
    paths = sorted({r.path for r in requests})
    rules = audit_rbac_rules(load_profile(repo, "ams1").profile.spec)
    assert uncovered(rules, paths) == []
    assert unused(rules, paths) == []
