"""The rendered branch's layout: one file per object at a stable, unique path."""

from __future__ import annotations

import dataclasses
import json
import subprocess

import pytest

from kubedata.yaml_io import dump_all
from renderer.errors import BuildError
from renderer.profile import ClusterFiles
from renderer.publish.flat import (
    KUSTOMIZATION_FILE,
    METADATA_FILE,
    Metadata,
    blob_id,
    cluster_files,
    cluster_objects,
    folder_digest,
    object_file,
    profile_digest,
    split_documents,
)

META = Metadata("a" * 40, "sha256:" + "0" * 64, "gpu-gitops test", False)


def obj(kind: str, name: str, namespace: str | None = None, api: str = "v1") -> dict[str, object]:
    meta: dict[str, str] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": {"x": [1, 2]}}


def test_file_names_by_kind_namespace_and_name():
    assert (
        object_file(dump_all([obj("Namespace", "gpu-operator")])) == "namespace_gpu-operator.yaml"
    )
    assert (
        object_file(dump_all([obj("HelmRelease", "gpu-operator", "gpu-operator")]))
        == "helmrelease_gpu-operator_gpu-operator.yaml"
    )
    # ':' (RBAC names), capitals and '_' cannot appear raw: '_' is the separator
    assert object_file(dump_all([obj("ClusterRole", "system:Auth_x")])) == (
        "clusterrole_system%3a%41uth%5fx.yaml"
    )


def test_dash_separated_names_cannot_collide():
    a = object_file(dump_all([obj("Role", "system-x", "cozy")]))
    b = object_file(dump_all([obj("Role", "x", "cozy-system")]))
    assert a != b


def test_head_is_read_without_the_rest_of_the_document():
    doc = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    a: |\n      kind: Secret\n"
        "  name: 'quoted'\n  namespace: ns\ndata:\n  kind: not-me\n"
    )
    assert object_file(doc) == "configmap_ns_quoted.yaml"


def test_cluster_files_keep_documents_verbatim_and_list_them():
    built = (
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: b\n"
    )
    files = cluster_files(built, META)
    assert list(files) == sorted(files)
    assert set(files) == {
        "configmap_b_a.yaml",
        "namespace_b.yaml",
        KUSTOMIZATION_FILE,
        METADATA_FILE,
    }
    assert b"".join(files[f] for f in ("namespace_b.yaml", "configmap_b_a.yaml")) == (
        built.replace("---\n", "").encode()
    )
    assert [o["kind"] for o in cluster_objects(files)] == ["ConfigMap", "Namespace"]
    meta = json.loads(files[METADATA_FILE])
    assert list(meta) == [
        "allowDirty",
        "outputDigest",
        "profileDigest",
        "sourceCommit",
        "toolVersion",
    ]
    # the digest of the other files, from their git blob ids
    blobs = {f: blob_id(data) for f, data in files.items()}
    assert meta["outputDigest"] == folder_digest(blobs)
    hashed = subprocess.run(
        ["git", "hash-object", "--stdin"], input=files["namespace_b.yaml"], capture_output=True
    )
    assert blobs["namespace_b.yaml"] == hashed.stdout.decode().strip()
    assert Metadata.from_bytes(files[METADATA_FILE]) == dataclasses.replace(
        META, output_digest=meta["outputDigest"]
    )


def test_two_objects_on_one_path_are_an_error():
    built = dump_all([obj("Thing", "x", "n", "a.io/v1"), obj("Thing", "x", "n", "b.io/v1")])
    with pytest.raises(BuildError, match=r"both be written to thing_n_x\.yaml"):
        cluster_files(built, META)


def test_a_document_without_kind_is_an_error():
    with pytest.raises(BuildError, match="without kind or name"):
        object_file("apiVersion: v1\nmetadata:\n  name: x\n")


def test_split_documents_ignores_empty_ones():
    assert split_documents("---\na: 1\n---\n\n---\nb: 2") == ["a: 1\n", "b: 2\n"]


def test_profile_digest_depends_on_every_file_and_their_boundary():
    assert profile_digest(ClusterFiles(b"ab")) != profile_digest(ClusterFiles(b"a", b"b"))
    assert profile_digest(ClusterFiles(b"ab")) != profile_digest(ClusterFiles(b"ab", b""))
    assert profile_digest(ClusterFiles(b"a", b"b")) != profile_digest(
        ClusterFiles(b"a", None, b"b")
    )
    assert profile_digest(ClusterFiles(b"ab")) == profile_digest(ClusterFiles(b"ab", None, None))


def test_unreadable_metadata_is_none():
    assert Metadata.from_bytes(b"{") is None
    assert Metadata.from_bytes(b'{"sourceCommit": 1}') is None
    assert not META.same_input(Metadata("b" * 40, META.profile_digest, "other", False))
    assert META.same_input(Metadata("b" * 40, META.profile_digest, META.tool_version, False))
