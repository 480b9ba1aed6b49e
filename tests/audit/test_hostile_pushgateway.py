"""The nightly push against hostile Pushgateways: small loopback HTTP servers in this file.

A Pushgateway that trickles its answer (the status line and headers a byte at a time, or an
endless body) must not hold the audit past `--deadline`: the push is inside the command's
deadline (kubedata.budget). One that redirects is not followed: the push is an error, not reported
as done, and nothing reaches the redirect's target. The audit runs in a subprocess; its timeout
only guards the test suite against a hang.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from audit.kube.api import audit_budget
from audit.metrics import PushError, push_metrics
from tests.audit.audit_helpers import demo_objects, demo_repo, write_snapshot
from tests.audit.test_metrics import result

Handler = Callable[[BaseHTTPRequestHandler], None]


def _read_request(h: BaseHTTPRequestHandler) -> None:
    h.rfile.read(int(h.headers.get("Content-Length") or 0))


def trickle_headers(h: BaseHTTPRequestHandler) -> None:
    _read_request(h)
    h.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
    while True:  # one byte at a time, well inside any read timeout, never ending the headers
        h.wfile.write(b"x")
        h.wfile.flush()
        time.sleep(0.2)


def trickle_body(h: BaseHTTPRequestHandler) -> None:
    _read_request(h)
    h.send_response(200)
    h.send_header("Content-Length", str(1 << 30))
    h.end_headers()
    while True:
        h.wfile.write(b" ")
        h.wfile.flush()
        time.sleep(0.2)


@contextlib.contextmanager
def serve(handler: Handler) -> Iterator[tuple[str, list[str]]]:
    """(URL, the requests it got as "METHOD path")."""
    seen: list[str] = []

    class Server(BaseHTTPRequestHandler):
        def handle_one(self) -> None:
            seen.append(f"{self.command} {self.path}")
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                handler(self)  # a broken pipe: the client gave up, as it should

        do_GET = do_PUT = do_POST = handle_one

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Server)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(repo, snapshot folder) of the demo's ams1: an audit that finds drift."""
    root = tmp_path_factory.mktemp("hostile-pgw")
    _, tip = demo_repo(root / "repo")
    return root / "repo", write_snapshot(root / "ams1", demo_objects("ams1", tip))


def _audit(
    snapshot: tuple[Path, Path], url: str, *options: str
) -> subprocess.CompletedProcess[str]:
    repo, folder = snapshot
    argv = [sys.executable, "-m", "gpu_gitops.cli", "audit", "--cluster", "ams1"]
    argv += ["--snapshot", str(folder), "--repo", str(repo), "-o", "json", "--pushgateway", url]
    return subprocess.run([*argv, *options], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("handler", [trickle_headers, trickle_body])
def test_a_trickling_pushgateway_is_given_up_at_the_deadline(
    handler: Handler, snapshot: tuple[Path, Path]
) -> None:
    with serve(handler) as (url, seen):
        done = _audit(snapshot, url, "--deadline", "3")
    assert seen == ["PUT /metrics/job/gpu-gitops-audit/cluster/ams1"], "it did push"
    assert done.returncode == 2, done.stderr
    assert done.stdout.startswith("{"), "the report is printed"
    assert done.stderr.splitlines() == [
        f"gpu-gitops: error: the Pushgateway at {url}: the deadline of 3 s (--deadline) passed "
        "before the Pushgateway's answer ended; the report above stands, the metrics were not "
        "delivered"
    ]


def test_a_redirect_is_not_followed(snapshot: tuple[Path, Path]) -> None:
    with serve(lambda h: None) as (elsewhere, reached):

        def redirect(h: BaseHTTPRequestHandler) -> None:
            _read_request(h)
            h.send_response(302)
            h.send_header("Location", f"{elsewhere}{h.path}")
            h.send_header("Content-Length", "0")
            h.end_headers()

        with serve(redirect) as (url, seen):
            with pytest.raises(PushError, match="HTTP 302 \\(a redirect\\), which is not followed"):
                push_metrics(result("r1", True, 1.0), url, audit_budget(30))
            done = _audit(snapshot, url, "--fail-on", "never")
    assert len(seen) == 2 and reached == [], "nothing went to the redirect's target"
    assert done.returncode == 2, "drift is not failed on, the push failed: exit 2"
    assert done.stderr.splitlines() == [
        f"gpu-gitops: error: the Pushgateway at {url} answered HTTP 302 (a redirect), which is "
        "not followed: the metrics were not delivered; set --pushgateway to the Pushgateway's "
        "own address"
    ]
