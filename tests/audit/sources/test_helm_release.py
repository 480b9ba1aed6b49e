"""Helm release Secrets made by the real helm from Cozystack's kubevirt chart, decoded."""

from __future__ import annotations

import base64
import copy
import gzip
import hashlib
import json
from typing import Any

import pytest
import yaml

import audit.sources.helm_release as helm_release
from audit.errors import ReleaseDecodeError
from audit.kube.api import KubeApi
from audit.sources.helm_release import (
    decode_release,
    is_release_secret,
    load_releases,
    newest_deployed,
)
from tests.apiserver import Store
from tests.apiserver.helm import helm_template, release_record, release_secret
from tests.audit.conftest import GPU_VALUES, KubevirtReleases


def canonical_digest(values: Any) -> str:
    text = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def with_payload(secret: dict[str, Any], helm_layer: bytes) -> dict[str, Any]:
    out = copy.deepcopy(secret)
    out["data"]["release"] = base64.b64encode(helm_layer).decode()
    return out


def test_decodes_a_release_made_by_helm(kubevirt_releases: KubevirtReleases) -> None:
    release = decode_release(kubevirt_releases.secrets[1])
    assert (release.name, release.namespace, release.revision, release.status) == (
        "kubevirt",
        "cozy-kubevirt",
        2,
        "deployed",
    )
    assert (release.chart_name, release.chart_version) == ("cozy-kubevirt", "0.0.0")
    assert release.apply_method == "ssa"  # Helm 4 installs server-side by default
    assert release.values_digest == canonical_digest(GPU_VALUES)
    assert release.secret == "cozy-kubevirt/sh.helm.release.v1.kubevirt.v2"
    [kubevirt] = release.objects
    assert (kubevirt["kind"], kubevirt["metadata"]["name"]) == ("KubeVirt", "kubevirt")
    config = kubevirt["spec"]["configuration"]
    assert config["developerConfiguration"]["featureGates"][-1] == "HostDevices"
    assert config["permittedHostDevices"] == GPU_VALUES["permittedHostDevices"]


def test_manifest_objects_are_what_helm_template_renders(
    kubevirt_releases: KubevirtReleases, helm_binary: Any
) -> None:
    rendered = helm_template(
        helm_binary,
        kubevirt_releases.chart,
        "kubevirt",
        "cozy-kubevirt",
        GPU_VALUES,
        kubevirt_releases.workdir,
    )
    expected = [d for d in yaml.safe_load_all(rendered) if d]
    assert list(decode_release(kubevirt_releases.secrets[1]).objects) == expected


def test_newest_deployed_revision_wins_over_superseded_and_failed(
    kubevirt_releases: KubevirtReleases,
) -> None:
    secrets = kubevirt_releases.secrets
    assert [s["metadata"]["labels"]["status"] for s in secrets] == [
        "superseded",
        "deployed",
        "failed",
    ]
    other = release_secret(
        kubevirt_releases.records[1], revision=7, status="deployed", when="2026-09-01T00:00:00Z"
    )
    other["metadata"]["namespace"] = "cozy-other"  # same release name, another namespace
    chosen = newest_deployed(
        [*reversed(secrets), other, {"kind": "Secret", "metadata": {"name": "x"}}]
    )
    assert [s["metadata"]["name"] for s in chosen] == [
        "sh.helm.release.v1.kubevirt.v2",
        "sh.helm.release.v1.kubevirt.v7",
    ]
    [release] = load_releases(secrets)
    assert release.revision == 2 and release.values_digest == canonical_digest(GPU_VALUES)
    # A later deployed revision (after a rollback) replaces it.
    rollback = release_secret(
        kubevirt_releases.records[1], revision=4, status="deployed", when="2026-11-22T00:00:00Z"
    )
    [release] = load_releases([*secrets, rollback])
    assert release.revision == 4 and release.values_digest == canonical_digest({})


def test_uncompressed_payload_decodes_the_same(kubevirt_releases: KubevirtReleases) -> None:
    plain = release_secret(
        kubevirt_releases.records[2],
        revision=2,
        status="deployed",
        when="2026-10-14T09:02:10Z",
        compress=False,
    )
    helm_layer = base64.b64decode(plain["data"]["release"])
    assert base64.b64decode(helm_layer)[:1] == b"{"  # really no gzip
    assert decode_release(plain) == decode_release(kubevirt_releases.secrets[1])


def test_apply_method_csa_and_empty(kubevirt_releases: KubevirtReleases, helm_binary: Any) -> None:
    csa = release_record(
        helm_binary,
        kubevirt_releases.chart,
        "kubevirt",
        "cozy-kubevirt",
        GPU_VALUES,
        kubevirt_releases.workdir,
        server_side=False,
    )
    assert csa["apply_method"] == "csa"
    secret = release_secret(csa, revision=1, status="deployed", when="2026-01-01T00:00:00Z")
    assert decode_release(secret).apply_method == "csa"
    helm3 = {k: v for k, v in csa.items() if k != "apply_method"}  # Helm 3 never wrote the field
    secret = release_secret(helm3, revision=1, status="deployed", when="2026-01-01T00:00:00Z")
    assert decode_release(secret).apply_method == "csa"


def test_values_never_leave_as_values(
    kubevirt_releases: KubevirtReleases, helm_binary: Any
) -> None:
    values = {**GPU_VALUES, "licensing": {"token": "NLS-TOKEN-SHOULD-NOT-LEAK"}}
    record = release_record(
        helm_binary,
        kubevirt_releases.chart,
        "kubevirt",
        "cozy-kubevirt",
        values,
        kubevirt_releases.workdir,
    )
    release = decode_release(
        release_secret(record, revision=5, status="deployed", when="2026-01-01T00:00:00Z")
    )
    assert "NLS-TOKEN-SHOULD-NOT-LEAK" not in repr(release)
    assert release.values_digest == canonical_digest(values)


@pytest.mark.parametrize(
    ("helm_layer", "message"),
    [
        (b"%%% not base64 %%%", "not base64 inside base64"),
        # a gzip header, then a deflate block of the reserved type 3
        (
            base64.b64encode(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x07garbage"),
            "gzip stream is corrupt",
        ),
        (
            base64.b64encode(gzip.compress(b'{"name": "kubevirt", "manifest": "a: b"}')[:-12]),
            "gzip stream is truncated",
        ),
        (
            base64.b64encode(b'{"name": "kubevirt", "config": {"password": "hunter2"'),
            "not Helm's JSON",
        ),
        (
            base64.b64encode(json.dumps({"manifest": "- just\n- a list\n"}).encode()),
            "holds a document that is not an object",
        ),
        (
            base64.b64encode(json.dumps({"manifest": "a: [\n"}).encode()),
            "manifest line 2 is not valid YAML",
        ),
    ],
)
def test_bad_payloads_name_the_secret_not_its_content(
    kubevirt_releases: KubevirtReleases, helm_layer: bytes, message: str
) -> None:
    secret = with_payload(kubevirt_releases.secrets[1], helm_layer)
    with pytest.raises(ReleaseDecodeError) as caught:
        decode_release(secret)
    text = str(caught.value)
    assert text.startswith("Helm release Secret cozy-kubevirt/sh.helm.release.v1.kubevirt.v2")
    assert message in text
    assert "hunter2" not in text and "garbage" not in text and caught.value.__cause__ is None


def test_decompression_is_bounded(
    kubevirt_releases: KubevirtReleases, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(helm_release, "MAX_RELEASE_BYTES", 1024)
    with pytest.raises(ReleaseDecodeError, match="decompresses to more than 1024 bytes"):
        decode_release(kubevirt_releases.secrets[1])


def test_missing_data_and_the_secret_filter(kubevirt_releases: KubevirtReleases) -> None:
    secret = copy.deepcopy(kubevirt_releases.secrets[1])
    del secret["data"]
    with pytest.raises(ReleaseDecodeError, match=r"has no data\.release"):
        decode_release(secret)
    assert is_release_secret(kubevirt_releases.secrets[0])
    opaque = {**kubevirt_releases.secrets[0], "type": "Opaque"}
    assert not is_release_secret(opaque)


def test_releases_read_through_the_api(
    kubevirt_releases: KubevirtReleases, store: Store, kube: KubeApi
) -> None:
    for secret in kubevirt_releases.secrets:
        store.put(secret)
    secrets = kube.list("Secret", "", label_selector="owner=helm", limit=2)
    assert len(secrets) == 3
    [release] = load_releases(secrets)
    assert (release.name, release.revision, release.apply_method) == ("kubevirt", 2, "ssa")
