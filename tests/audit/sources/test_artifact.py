"""source-controller's artifact on a bad day: a gzip bomb, a trickling server, a wrong digest."""

from __future__ import annotations

import hashlib
import io
import tarfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from audit.errors import AuditError, IncompleteReadError
from audit.sources.artifact import MAX_TOTAL_BYTES, download_artifact, read_tarball
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
    bomb = _tarball({f"c1/f{i}.yaml": zeros for i in range(5)})
    assert len(bomb) < (1 << 20)
    with pytest.raises(AuditError) as exc:
        read_tarball(bomb)
    assert str(exc.value) == (
        f"the artifact's files add up to over {MAX_TOTAL_BYTES} bytes uncompressed; "
        "a rendered branch is a few MB"
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
