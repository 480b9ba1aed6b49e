"""`gpu-gitops import` against the project's test API server: the live platform Package of the
issue 4 fixtures (tests/data/live/packages.yaml) becomes clusters/<name>/platform.yaml."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
import yaml_rs

from kubedata.yaml_io import load_all
from kubedata.yaml_scalars import same_data
from renderer.kustomize.workers import build_overlays
from renderer.overlays import cluster_overlay
from renderer.profile import load_profile
from tests.apiserver import ApiServer, Store
from tests.audit.audit_helpers import run
from tests.audit.conftest import TOKEN
from tests.conftest import REPO_ROOT


def _import(server: ApiServer, repo: Path, *extra: str) -> tuple[int, str, str]:
    config = server.kubeconfig(repo.parent / "kubeconfig", token=TOKEN)
    return run(
        "import", "--cluster", "ams1", "--kubeconfig", str(config), "--repo", str(repo), *extra
    )


def test_import_writes_the_live_package_without_server_fields(
    api_server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764493200")
    repo = tmp_path / "repo"
    code, _, err = _import(api_server, repo)
    assert (code, err) == (0, "wrote clusters/ams1/platform.yaml\n"), err
    text = (repo / "clusters" / "ams1" / "platform.yaml").read_text()
    for server_field in (
        "status:",
        "uid:",
        "resourceVersion:",
        "managedFields",
        "creationTimestamp",
        "generation:",
        "ReconciliationSucceeded",
    ):
        assert server_field not in text
    assert text.splitlines()[3:] == [
        "apiVersion: cozystack.io/v1alpha1",
        "kind: Package",
        "metadata:",
        "  name: cozystack.cozystack-platform",
        "  annotations:",
        "    gpu-gitops.io/imported-at: '2025-11-30T09:00:00Z'",
        f"    gpu-gitops.io/imported-from: {api_server.url} (context test)",
        "spec:",
        "  components:",
        "    platform:",
        "      values:",
        "        bundles:",
        "          enabledPackages:",
        "          - cozystack.gpu-operator",
        "          iaas:",
        "            enabled: true",
        "            gpuOperatorVariant: default",
        "          system:",
        "            enabled: true",
        "            variant: isp-full",
        "        gpu:",
        "          permittedHostDevices:",
        "            pciHostDevices:",
        "            - externalResourceProvider: true",
        "              pciVendorSelector: 10DE:2BB5",
        "              resourceName: nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_SERVER_EDITION",
        "          replaceDefaults: true",
        "        publishing:",
        "          apiServerEndpoint: https://api.ams1.example.net",
        "          host: ams1.example.net",
        "  variant: isp-full",
    ]
    # same live object, same bytes: a second import changes nothing
    before = text
    code, _, err = _import(api_server, repo)
    assert (code, err) == (0, "clusters/ams1/platform.yaml is up to date\n")
    assert (repo / "clusters" / "ams1" / "platform.yaml").read_text() == before


def test_imported_file_renders_and_every_value_is_kept(
    api_server: ApiServer, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / "clusters").mkdir(parents=True)
    shutil.copytree(REPO_ROOT / "clusters" / "ams1", repo / "clusters" / "ams1")
    (repo / "clusters" / "ams1" / "platform.yaml").unlink()
    assert _import(api_server, repo)[0] == 0
    lp = load_profile(repo, "ams1")
    [package] = [
        o
        for o in load_all(build_overlays({"ams1": cluster_overlay(lp)})["ams1"])
        if o["kind"] == "Package"
    ]
    values = package["spec"]["components"]["platform"]["values"]
    assert values["publishing"] == {
        "apiServerEndpoint": "https://api.ams1.example.net",
        "host": "ams1.example.net",
    }
    assert values["bundles"]["system"] == {"enabled": True, "variant": "isp-full"}
    assert values["bundles"]["enabledPackages"] == ["cozystack.gpu-operator"]
    assert "disabledPackages" not in values["bundles"]  # the profile does not change it
    assert package["metadata"]["annotations"] == {"kustomize.toolkit.fluxcd.io/prune": "disabled"}


def test_import_without_the_package_writes_nothing(store: Store, tmp_path: Path) -> None:
    assert store.delete("cozystack.io", "packages", "", "cozystack.cozystack-platform")
    with ApiServer(store) as server:
        server.add_token(TOKEN, "auditor")
        repo = tmp_path / "repo"
        code, out, err = _import(server, repo)
    assert code == 2 and out == ""
    assert "has no Package.cozystack.io cozystack.cozystack-platform" in err
    assert not (repo / "clusters").exists()


def test_import_with_an_unknown_context_writes_nothing(
    api_server: ApiServer, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    code, _, err = _import(api_server, repo, "--context", "nope")
    assert code == 2 and "nope" in err and err.count("\n") == 1
    assert not (repo / "clusters").exists()


def test_import_refuses_a_bad_cluster_name(api_server: ApiServer, tmp_path: Path) -> None:
    config = api_server.kubeconfig(tmp_path / "kc", token=TOKEN)
    code, _, err = run(
        "import", "--cluster", "../x", "--kubeconfig", str(config), "--repo", str(tmp_path)
    )
    assert code == 2 and "not a cluster name" in err
    assert list(tmp_path.iterdir()) == [tmp_path / "kc"]


def test_import_never_writes_through_a_symbolic_link(api_server: ApiServer, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "clusters").mkdir(parents=True)
    (repo / "clusters" / "ams1").symlink_to(outside)
    code, _, err = _import(api_server, repo)
    assert code == 2 and err.startswith("clusters/ams1: error: is a symbolic link")
    assert list(outside.iterdir()) == []


TRICKY = ["on", "1:20", "NO", "Off", "0x1F", "1e3", "~", "", "null", "012", "2024-01-01", "y",
          " lead", "trail ", "two\nlines", "0o12"]  # fmt: skip


def _platform(store: Store) -> dict[str, Any]:
    (package,) = [
        o
        for o in store.objects_of("cozystack.io", "packages")
        if o["metadata"]["name"] == "cozystack.cozystack-platform"
    ]
    return package


def test_import_keeps_every_live_string_a_string(store: Store, tmp_path: Path) -> None:
    package = _platform(store)
    extra = {f"k{i}": v for i, v in enumerate(TRICKY)} | {
        v or "empty": i for i, v in enumerate(TRICKY)
    }
    package["spec"]["components"]["platform"]["values"]["extra"] = extra
    store.put(package)
    with ApiServer(store) as server:
        server.add_token(TOKEN, "auditor")
        repo = tmp_path / "repo"
        code, _, err = _import(server, repo)
    assert code == 0, err
    text = (repo / "clusters" / "ams1" / "platform.yaml").read_text()
    for doc in (yaml.safe_load(text), yaml_rs.loads(text, parse_datetime=False)):
        assert isinstance(doc, dict)
        got = doc["spec"]["components"]["platform"]["values"]["extra"]
        assert same_data(got, extra), got
    assert "k0: on\n" not in text and "k5: 1e3\n" not in text


def test_import_refuses_a_package_validate_would_refuse(store: Store, tmp_path: Path) -> None:
    package = _platform(store)
    package["spec"]["components"]["platform"]["values"]["blob"] = "x" * (300 * 1024)
    store.put(package)
    with ApiServer(store) as server:
        server.add_token(TOKEN, "auditor")
        repo = tmp_path / "repo"
        code, out, err = _import(server, repo)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "clusters/ams1/platform.yaml" in err
    assert "over the 262144 bytes validate reads; nothing was written" in err
    assert not (repo / "clusters").exists()


def test_import_leaves_secret_looking_values_out(store: Store, tmp_path: Path) -> None:
    package = _platform(store)
    values = package["spec"]["components"]["platform"]["values"]
    values["oidc"] = {"clientSecret": "oidc-s3cret-value", "clientId": "gpu"}
    values["backup"] = {"s3": [{"password": "backup-pa55word", "existingSecret": "backup-creds"}]}
    values["monitoring"] = {"apiToken": "mon-t0ken-value", "tokenTTL": ""}
    store.put(package)
    with ApiServer(store) as server:
        server.add_token(TOKEN, "auditor")
        repo = tmp_path / "repo"
        code, out, err = _import(server, repo)
    assert code == 0, err
    text = (repo / "clusters" / "ams1" / "platform.yaml").read_text()
    for secret in ("oidc-s3cret-value", "backup-pa55word", "mon-t0ken-value"):
        assert secret not in text + out + err
    kept = yaml.safe_load(text)["spec"]["components"]["platform"]["values"]
    assert kept["oidc"] == {"clientId": "gpu"}
    assert kept["backup"] == {"s3": [{"existingSecret": "backup-creds"}]}  # a Secret's name
    assert kept["monitoring"] == {"tokenTTL": ""}
    warned = [ln for ln in err.splitlines() if "looks like a secret" in ln]
    assert [ln.split(": warning: ")[1].split(" ")[0] for ln in warned] == [
        "spec.components.platform.values.backup.s3.0.password",
        "spec.components.platform.values.monitoring.apiToken",
        "spec.components.platform.values.oidc.clientSecret",
    ]
    assert warned[0].startswith(
        "clients/ams1/platform.yaml: warning: ".replace("clients", "clusters")
    )
    assert err.endswith("wrote clusters/ams1/platform.yaml\n")
