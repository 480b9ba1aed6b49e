"""source-controller's artifact on a bad day: a gzip bomb, a trickling server, a wrong digest."""

from __future__ import annotations

import hashlib
import io
import tarfile
import threading
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from audit.errors import AuditError, IncompleteReadError
from audit.sources.artifact import (
    ARTIFACT_HOSTS_ENV,
    MAX_TOTAL_BYTES,
    check_artifact_url,
    download_artifact,
    read_tarball,
)
from kubedata.budget import Budget


def _tarball(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", compresslevel=9) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_a_gzip_bomb_stops_at_the_total_after_decompression():
    """Files each under the per-file cap, small compressed, over the total once expanded."""
    zeros = b"\0" * (15 << 20)
    count = MAX_TOTAL_BYTES // len(zeros) + 1
    bomb = _tarball({f"c1/f{i}.yaml": zeros for i in range(count)})
    assert len(bomb) < (1 << 20)
    with pytest.raises(AuditError) as exc:
        read_tarball(bomb)
    assert str(exc.value) == (
        f"the artifact's members add up to over {MAX_TOTAL_BYTES} bytes uncompressed "
        f"(at 'c1/f{count - 1}.yaml'); a rendered branch is at most a few hundred MB"
    )


def _crafted(header: tarfile.TarInfo, inflated: int) -> bytes:
    """One tar header and `inflated` zero bytes after it, gzipped (a thousandth of the size)."""
    gz = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [gz.compress(header.tobuf(tarfile.GNU_FORMAT))]
    block = b"\0" * (1 << 20)
    parts += [gz.compress(block) for _ in range(inflated >> 20)]
    return b"".join([*parts, gz.flush()])


@pytest.mark.parametrize("kind", [b"Z", tarfile.CHRTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE])
def test_a_member_of_any_type_counts_against_the_cap(kind: bytes):
    """A member that is no regular file (an unknown type: tarfile inflates its data to skip it)
    claims 16 GiB: refused on its header, before any of it is inflated."""
    info = tarfile.TarInfo("c1/huge")
    info.type, info.size = kind, 16 << 30
    bomb = _crafted(info, 256 << 20)
    assert len(bomb) < (1 << 20)
    with pytest.raises(AuditError) as exc:
        read_tarball(bomb)
    assert str(exc.value) == (
        f"the artifact's members add up to over {MAX_TOTAL_BYTES} bytes uncompressed "
        "(at 'c1/huge'); a rendered branch is at most a few hundred MB"
    )


def test_a_header_that_inflates_past_the_cap_stops_there():
    """A pax header tarfile reads whole before it yields the member: the inflated stream itself
    is capped."""
    info = tarfile.TarInfo("././@PaxHeader")
    info.type, info.size = tarfile.XHDTYPE, 1 << 30
    with pytest.raises(AuditError) as exc:
        read_tarball(_crafted(info, MAX_TOTAL_BYTES + (1 << 20)))
    assert str(exc.value) == (
        f"the artifact inflates to over {MAX_TOTAL_BYTES} bytes (every tar member counted); "
        "a rendered branch is at most a few hundred MB"
    )


def test_a_normal_artifact_reads():
    data = _tarball({"c1/kustomization.yaml": b"resources: []\n"})
    assert read_tarball(data) == {"c1/kustomization.yaml": b"resources: []\n"}


@pytest.fixture
def trickling() -> Iterator[str]:
    class Trickle(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            try:
                for _ in range(600):
                    self.wfile.write(b"\0")
                    self.wfile.flush()
                    time.sleep(0.1)
            except (BrokenPipeError, ConnectionResetError):
                return

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/artifact.tar.gz"
    server.shutdown()
    server.server_close()


def test_a_trickling_artifact_server_is_given_up_at_the_deadline(trickling: str):
    budget = Budget(1.5, max_wait=1, max_bytes=1 << 20, setting="--deadline")
    digest = "sha256:" + hashlib.sha256(b"").hexdigest()
    with pytest.raises(IncompleteReadError) as exc:
        download_artifact(trickling, digest, budget=budget)
    assert str(exc.value) == (
        f"artifact {trickling}: the deadline of 1.5 s (--deadline) passed before it was read"
    )


@pytest.mark.parametrize(
    "url",
    [
        "http://source-controller.flux-system.svc.cluster.local./gitrepository/flux-system/gitops/a.tar.gz",
        "http://source-controller.flux-system.svc/gitrepository/flux-system/gitops/a.tar.gz",
        "http://source-controller.cozy-fluxcd.svc.cluster.local/gitrepository/flux-system/gitops/a.tar.gz",
    ],
)
def test_source_controllers_service_is_where_the_artifact_comes_from(url, monkeypatch):
    monkeypatch.delenv(ARTIFACT_HOSTS_ENV)
    check_artifact_url(url, "flux-system", "gitops")


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://evil.example/gitrepository/flux-system/gitops/a.tar.gz", "not source-controller"),
        ("http://source-controller.tenant-x.svc/gitrepository/flux-system/gitops/a.tgz",
         "not source-controller"),
        ("http://169.254.169.254/latest/meta-data", "not source-controller"),
        ("file:///etc/passwd", "not source-controller"),
        ("http://source-controller.flux-system.svc/gitrepository/other/repo/a.tar.gz",
         "not the path of GitRepository flux-system/gitops"),
        ("http://127.0.0.1:9/gitrepository/flux-system/gitops/a.tar.gz", "not source-controller"),
    ],
)  # fmt: skip
def test_any_other_artifact_url_is_refused(url, why, monkeypatch):
    monkeypatch.delenv(ARTIFACT_HOSTS_ENV)
    with pytest.raises(IncompleteReadError, match=why):
        check_artifact_url(url, "flux-system", "gitops")


def test_a_host_the_user_allows_is_taken(monkeypatch):
    monkeypatch.setenv(ARTIFACT_HOSTS_ENV, "artifacts.internal:8080, 10.0.0.5")
    check_artifact_url("http://artifacts.internal:8080/gitrepository/ns/r/a.tgz", "ns", "r")
    check_artifact_url("http://10.0.0.5:9000/gitrepository/ns/r/a.tgz", "ns", "r")
    with pytest.raises(IncompleteReadError):
        check_artifact_url("http://artifacts.internal:9999/gitrepository/ns/r/a.tgz", "ns", "r")
