"""Snapshot folders: kubectl dumps read into the objects the API client returns."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from audit.errors import SnapshotError
from audit.kube.api import KubeApi
from audit.kube.snapshot import _yaml_documents, load_snapshot, read_snapshot_file
from kubedata.objects import key_of
from kubedata.yaml_io import documents
from tests.apiserver import ApiServer
from tests.audit.conftest import LIVE, TOKEN

KUBECTL = shutil.which("kubectl")
# (group, kind, plural) of everything the auditor reads.
KINDS = [
    ("", "Namespace", "namespaces"),
    ("", "Node", "nodes"),
    ("", "Secret", "secrets"),
    ("kubevirt.io", "KubeVirt", "kubevirts.kubevirt.io"),
    ("kubevirt.io", "VirtualMachine", "virtualmachines.kubevirt.io"),
    ("cozystack.io", "Package", "packages.cozystack.io"),
    ("helm.toolkit.fluxcd.io", "HelmRelease", "helmreleases.helm.toolkit.fluxcd.io"),
    ("kustomize.toolkit.fluxcd.io", "Kustomization", "kustomizations.kustomize.toolkit.fluxcd.io"),
    ("source.toolkit.fluxcd.io", "GitRepository", "gitrepositories.source.toolkit.fluxcd.io"),
    ("nvidia.com", "ClusterPolicy", "clusterpolicies.nvidia.com"),
]


def test_the_live_fixtures_load_with_types_filled_in() -> None:
    objects = load_snapshot(LIVE)
    kinds = Counter(o["kind"] for o in objects)
    assert kinds == {
        "Namespace": 7,
        "Package": 4,
        "Node": 3,
        "HelmRelease": 2,
        "KubeVirt": 1,
        "ClusterPolicy": 1,
        "GitRepository": 1,
        "Kustomization": 1,
        "Secret": 1,
        "VirtualMachine": 1,
        "CustomResourceDefinition": 1,
    }
    releases = [o for o in objects if o["kind"] == "HelmRelease"]
    # helmreleases.json is a raw HelmReleaseList: its items carry no type until loaded.
    assert {o["apiVersion"] for o in releases} == {"helm.toolkit.fluxcd.io/v2"}
    assert [str(key_of(o)) for o in releases] == [
        "HelmRelease.helm.toolkit.fluxcd.io cozy-kubevirt/kubevirt",
        "HelmRelease.helm.toolkit.fluxcd.io cozy-gpu-operator/gpu-operator",
    ]


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed: no independent dump to read")
def test_kubectl_dumps_read_back_as_the_api_client_reads(
    api_server: ApiServer, kube: KubeApi, tmp_path: Path
) -> None:
    kubeconfig = api_server.kubeconfig(tmp_path / "kubeconfig", token=TOKEN)
    env = {
        "KUBECONFIG": str(kubeconfig),
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", ""),
        "KUBECACHEDIR": str(tmp_path / "cache"),
    }
    dump = tmp_path / "dump"
    dump.mkdir()
    plurals = ",".join(plural for _, _, plural in KINDS)
    for fmt in ("yaml", "json"):
        out = subprocess.run(
            [str(KUBECTL), "get", plurals, "-A", "-o", fmt, "--show-managed-fields"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
        (dump / fmt / f"all.{fmt}").parent.mkdir()
        (dump / fmt / f"all.{fmt}").write_text(out)
    from_api = [obj for group, kind, _ in KINDS for obj in kube.list(kind, group)]
    for fmt in ("yaml", "json"):
        snapshot = load_snapshot(dump / fmt)
        assert sorted(map(key_of, snapshot)) == sorted(map(key_of, from_api))
        by_key = {key_of(o): o for o in from_api}
        assert all(by_key[key_of(o)] == o for o in snapshot), fmt


def test_multi_document_files_skip_empty_documents(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        "---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\n---\n"
        "apiVersion: v1\nkind: ConfigMapList\nitems:\n- metadata: {name: b, namespace: x}\n---\n"
    )
    objects = read_snapshot_file(tmp_path / "a.yaml")
    assert [(o["kind"], o["apiVersion"], o["metadata"]["name"]) for o in objects] == [
        ("ConfigMap", "v1", "a"),
        ("ConfigMap", "v1", "b"),
    ]


def test_folders_are_read_recursively_in_path_order_skipping_hidden(tmp_path: Path) -> None:
    for rel, name in (
        ("b/x.yml", "two"),
        ("a.json", "one"),
        (".git/c.yaml", "hidden"),
        ("notes.txt", "ignored"),
    ):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        path.write_text(json.dumps(doc))
    assert [o["metadata"]["name"] for o in load_snapshot(tmp_path)] == ["one", "two"]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "bad.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: [unclosed\n",
            r"bad.yaml:5: not valid YAML",
        ),
        ("bad.json", '{"apiVersion": "v1",\n "kind": }', r"bad.json:2: not valid JSON"),
        (
            "notobj.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\n---\n"
            "just: a mapping\n",
            r"notobj.yaml:5: not a Kubernetes object",
        ),
        (
            "noname.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: x}\n",
            r"noname.yaml:1: ConfigMap without metadata.name",
        ),
        (
            "list.yaml",
            "apiVersion: v1\nkind: List\nitems:\n- {kind: ConfigMap}\n",
            r"list.yaml:1: items\[0\]: not a Kubernetes object",
        ),
        (
            "noitems.yaml",
            "apiVersion: v1\nkind: SecretList\nitems: {}\n",
            r"noitems.yaml:1: SecretList without an items list",
        ),
    ],
)
def test_errors_name_the_file_and_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(SnapshotError, match=message):
        load_snapshot(tmp_path)


ALIKE_OR_NOT = {
    "comments first": "# kubectl get cm -o yaml\n\n  # x\napiVersion: v1\nkind: ConfigMap\n",
    "a quoted timestamp": "apiVersion: v1\nkind: ConfigMap\ndata: {t: '2026-11-20T15:41:07Z'}\n",
    "a byte-order mark": "\ufeffapiVersion: v1\nkind: ConfigMap\n",
    "CRLF line breaks": "\r\n\r\napiVersion: v1\r\nkind: ConfigMap\r\n",
    "a NEL in a plain scalar": "apiVersion: v1\nkind: ConfigMap\ndata: {a: x\x85y}\n",
    "a duplicate key": "apiVersion: v1\nkind: ConfigMap\nkind: Secret\n",
    "only a comment": "# nothing\n",
}


@pytest.mark.parametrize("text", ALIKE_OR_NOT.values(), ids=ALIKE_OR_NOT.keys())
def test_either_parser_gives_pyyaml_s_documents_and_lines(text: str) -> None:
    """yaml-rs reads what it reads as PyYAML does; anything else is left to PyYAML."""
    path = Path("f.yaml")  # repr: True is not 1, and key order counts
    assert repr(list(_yaml_documents(path, text))) == repr(list(documents(text, "f.yaml")))


def test_the_live_fixtures_read_as_pyyaml_reads_them() -> None:
    for path in sorted(LIVE.rglob("*.yaml")):
        text = path.read_text()
        assert repr(list(_yaml_documents(path, text))) == repr(list(documents(text, str(path))))


def test_duplicates_must_agree(tmp_path: Path) -> None:
    doc = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"
    (tmp_path / "1.yaml").write_text(doc)
    (tmp_path / "2.yaml").write_text(doc)
    assert len(load_snapshot(tmp_path)) == 1
    (tmp_path / "3.yaml").write_text(doc + "spec: {finalizers: [kubernetes]}\n")
    with pytest.raises(
        SnapshotError, match=r"Namespace a is in .*1.yaml and in .*3.yaml with different"
    ):
        load_snapshot(tmp_path)


def test_missing_or_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="does not exist: check --snapshot"):
        load_snapshot(tmp_path / "nope")
    with pytest.raises(SnapshotError, match=r"holds no \.yaml, \.yml or \.json file"):
        load_snapshot(tmp_path)
