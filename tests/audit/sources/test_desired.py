"""Desired state: Flux-applied revision, rendered tip, profiles at HEAD, and Flux's artifact."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from audit.errors import AuditError, IncompleteReadError
from audit.result import AuditResult
from audit.run import audit_cluster
from audit.sources.artifact import artifact_of, download_artifact, read_tarball
from audit.sources.desired import desired_from_repo, parse_revision, rendered_objects
from audit.sources.live import Live, SnapshotReader
from renderer.publish.publish import publish
from tests.audit.audit_helpers import DEMO, EXAMPLES, demo_objects, init_repo

DEVICE = """    - class: RTX PRO 6000 Blackwell Workstation Edition
      pciVendorSelector: "10DE:2BB1"
      resourceName: nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_WORKSTATION_EDITION
"""


def pci(desired: Any) -> list[str]:
    platform = next(o for o in desired.objects if o["kind"] == "Package")
    values = platform["spec"]["components"]["platform"]["values"]
    return [d["pciVendorSelector"] for d in values["gpu"]["permittedHostDevices"]["pciHostDevices"]]


@pytest.mark.parametrize(
    ("revision", "expected"),
    [
        ("rendered@sha1:" + "a" * 40, ("rendered", "a" * 40)),
        ("sha1:" + "b" * 40, ("", "b" * 40)),
        ("main/" + "c" * 40, ("main", "c" * 40)),
        ("v1.0@sha256:" + "d" * 64, ("v1.0", "d" * 64)),
        ("rendered@sha1:not-a-sha", ("rendered", "")),
    ],
)
def test_parse_revision(revision: str, expected: tuple[str, str]) -> None:
    assert parse_revision(revision) == expected


@pytest.fixture
def two_publishes(tmp_path: Path) -> tuple[Any, str, str]:
    repo = init_repo(tmp_path, {"ams1": EXAMPLES / "ams1"})
    first = publish(tmp_path).tip
    profile = tmp_path / "clusters" / "ams1" / "gpu-profile.yaml"
    text = profile.read_text().replace(
        "      architecture: blackwell\n", "      architecture: blackwell\n" + DEVICE, 1
    )
    profile.write_text(text)
    repo.git.commit("-q", "-am", "ams1: add the Workstation Edition")
    second = publish(tmp_path).tip
    assert first and second and first != second
    return repo, first, second


def test_flux_applied_revision_wins_over_the_tip(two_publishes: tuple[Any, str, str]) -> None:
    repo, first, second = two_publishes
    desired = desired_from_repo(repo, "ams1", applied_revision=f"rendered@sha1:{first}")
    assert (desired.source, desired.revision) == ("flux-applied", f"rendered@sha1:{first}")
    assert pci(desired) == ["10DE:2BB5"]
    # the profile is read at the rendered commit's source commit (hydrator.metadata)
    assert desired.profile is not None
    assert [d.pci_vendor_selector for d in desired.profile.profile.spec.devices] == ["10DE:2BB5"]
    tip = desired_from_repo(repo, "ams1", applied_revision=None)
    assert (tip.source, tip.revision) == ("rendered-tip", f"rendered@sha1:{second}")
    assert pci(tip) == ["10DE:2BB5", "10DE:2BB1"]


def test_unknown_applied_revision_falls_back_to_the_tip(
    two_publishes: tuple[Any, str, str],
) -> None:
    repo, _, second = two_publishes
    desired = desired_from_repo(repo, "ams1", applied_revision="rendered@sha1:" + "e" * 40)
    assert (desired.source, desired.revision) == ("rendered-tip", f"rendered@sha1:{second}")
    assert any("does not have" in n for n in desired.notes)


def test_without_a_rendered_branch_the_profiles_are_built(tmp_path: Path) -> None:
    repo = init_repo(tmp_path, {"ams1": EXAMPLES / "ams1"})
    desired = desired_from_repo(repo, "ams1", applied_revision=None)
    assert desired.source == "profiles-head"
    assert desired.revision == f"main@sha1:{repo.head.commit.hexsha}"
    assert pci(desired) == ["10DE:2BB5"]
    with pytest.raises(AuditError, match="clusters/nowhere/ does not exist"):
        desired_from_repo(repo, "nowhere")


def test_ref_forces_a_build_from_the_profiles(two_publishes: tuple[Any, str, str]) -> None:
    repo, first, _ = two_publishes
    desired = desired_from_repo(
        repo, "ams1", applied_revision=f"rendered@sha1:{first}", ref="HEAD~1"
    )
    assert desired.source == "profiles-head"
    assert pci(desired) == ["10DE:2BB5"]


def _tarball(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _rendered_files(repo: Any, tip: str) -> dict[str, bytes]:
    commit = repo.commit(tip)
    return {
        str(item.path): item.data_stream.read()
        for item in commit.tree.traverse()
        if item.type == "blob"
    }


def _artifact_audit(tip: str, files: dict[str, bytes]) -> AuditResult:
    """An in-cluster audit of ams1 whose GitRepository serves `files` as its artifact of `tip`."""
    blob = _tarball(files)
    digest = "sha256:" + hashlib.sha256(blob).hexdigest()
    url = "http://source-controller.cozy-fluxcd.svc.cluster.local./gitrepository/cozy-fluxcd/gpu-gitops/x.tar.gz"
    requests: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(str(request.url))
        return httpx.Response(200, content=blob)

    objects = demo_objects("ams1", tip)
    for obj in objects:
        if obj["kind"] == "GitRepository":
            obj["status"]["artifact"] = {
                "url": url,
                "digest": digest,
                "revision": f"rendered@sha1:{tip}",
            }
    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        result = audit_cluster("ams1", Live(SnapshotReader(objects)), repo=None, http=http)
    assert requests == [url]
    return result


@pytest.fixture
def published(tmp_path: Path) -> tuple[Any, str]:
    repo = init_repo(tmp_path, {"ams1": EXAMPLES / "ams1", "sto1": DEMO / "clusters" / "sto1"})
    tip = publish(tmp_path).tip
    assert tip
    return repo, tip


NO_PROFILE_NOTES = (
    'Cozystack version unknown (no profile): wiring predicted as "1.6"',
    "no profile: the GPU wiring and Node labels were not checked",
)


def test_in_cluster_reads_the_verified_artifact(published: tuple[Any, str]) -> None:
    repo, tip = published
    files = _rendered_files(repo, tip)
    assert "ams1/source/gpu-profile.yaml" in files
    result = _artifact_audit(tip, files)
    assert (result.desired_source, result.desired_revision) == (
        "flux-applied",
        f"rendered@sha1:{tip}",
    )
    assert any("permittedHostDevices" in f.path for f in result.findings)
    # the profile published under ams1/source/: Node labels checked, with the profile's lines
    [node] = [f for f in result.findings if f.object.kind == "Node"]
    assert node.object.name == "gpu-ams1-02" and node.live == "container"
    assert node.source is not None
    assert (node.source.file, node.source.field) == (
        "clusters/ams1/gpu-profile.yaml",
        "spec.nodes.gpu-ams1-02",
    )
    profile = files["ams1/source/gpu-profile.yaml"].decode().splitlines()
    assert "gpu-ams1-02: vm-passthrough" in profile[node.source.line - 1]
    assert not [n for n in result.notes if n in NO_PROFILE_NOTES]


def test_in_cluster_without_a_published_profile_keeps_the_old_notes(
    published: tuple[Any, str],
) -> None:
    # a rendered branch published before source/ existed
    repo, tip = published
    files = {p: d for p, d in _rendered_files(repo, tip).items() if "/source/" not in p}
    result = _artifact_audit(tip, files)
    assert result.desired_source == "flux-applied"
    assert not [f for f in result.findings if f.object.kind == "Node"]
    assert NO_PROFILE_NOTES[0] in result.notes  # ams1 is on Cozystack: wiring from "1.6"


def test_rendered_objects_ignore_the_published_profile(published: tuple[Any, str]) -> None:
    repo, tip = published
    files = _rendered_files(repo, tip)
    sources = [p for p in files if p.startswith("ams1/source/")]
    assert sorted(sources) == ["ams1/source/gpu-profile.yaml", "ams1/source/platform.yaml"]
    objects = rendered_objects(files, "ams1", "test")
    assert objects
    assert not [o for o in objects if o["kind"] in ("GPUProfile", "Platform")]
    without = {p: d for p, d in files.items() if p not in sources}
    assert objects == rendered_objects(without, "ams1", "test")


def test_artifact_digest_must_match() -> None:
    blob = _tarball({"ams1/a.yaml": b"x: 1\n"})

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=blob)

    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        good = "sha256:" + hashlib.sha256(blob).hexdigest()
        assert download_artifact("http://sc/a.tar.gz", good, http) == blob
        with pytest.raises(IncompleteReadError, match="does not match"):
            download_artifact("http://sc/a.tar.gz", "sha256:" + "0" * 64, http)


def test_artifact_http_errors_are_incomplete_reads() -> None:
    transport = httpx.MockTransport(lambda r: httpx.Response(503))
    with httpx.Client(transport=transport) as http, pytest.raises(IncompleteReadError, match="503"):
        download_artifact("http://sc/a.tar.gz", "sha256:" + "0" * 64, http)


def test_tarball_members_cannot_escape() -> None:
    with pytest.raises(AuditError, match="escapes"):
        read_tarball(_tarball({"../../etc/passwd": b"x"}))
    with pytest.raises(IncompleteReadError):
        read_tarball(b"not a tarball")


def test_artifact_of_requires_a_sha256_digest() -> None:
    repo = {
        "metadata": {"name": "g", "namespace": "n"},
        "status": {"artifact": {"url": "u", "digest": "md5:x"}},
    }
    with pytest.raises(IncompleteReadError, match="not sha256"):
        artifact_of(repo)
    with pytest.raises(IncompleteReadError, match="no artifact"):
        artifact_of({"metadata": {}, "status": {}})
