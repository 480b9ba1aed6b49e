"""The audit against hostile and broken API servers: small loopback HTTP servers in this file.

Each attack runs `gpu-gitops audit` in a subprocess whose address space is capped at 500 MB
(RLIMIT_AS): an endless body, endless pages, a server trickling one byte at a time, Retry-After of
a day on every read, a server echoing the Authorization header, a 401. Each must end with the
report printed and exit 2 (incomplete, never clean), within its deadline, without the token in any
output. The subprocess's own timeout only guards the test suite against a hang.
"""

from __future__ import annotations

import contextlib
import json
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.audit.audit_helpers import demo_repo
from tests.audit.test_report import samples

TOKEN = "hostile-test-t0ken-0123456789"
MEMORY_LIMIT = 500 << 20
GROUPS = {
    # group/version -> (plural, kind, namespaced): the kinds the audit of ams1 asks for
    "v1": [
        ("nodes", "Node", False),
        ("secrets", "Secret", True),
        ("namespaces", "Namespace", False),
    ],
    "kustomize.toolkit.fluxcd.io/v1": [("kustomizations", "Kustomization", True)],
    "source.toolkit.fluxcd.io/v1": [("gitrepositories", "GitRepository", True)],
    "helm.toolkit.fluxcd.io/v2": [("helmreleases", "HelmRelease", True)],
    "kubevirt.io/v1": [
        ("kubevirts", "KubeVirt", True),
        ("virtualmachines", "VirtualMachine", True),
    ],
    "cozystack.io/v1alpha1": [("packages", "Package", False)],
    "nvidia.com/v1": [("clusterpolicies", "ClusterPolicy", False)],
}


def _discovery(path: str) -> dict[str, Any] | None:
    if path == "/api":
        return {"kind": "APIVersions", "versions": ["v1"]}
    if path == "/apis":
        groups = []
        for gv in GROUPS:
            if "/" in gv:
                name, version = gv.split("/")
                v = {"groupVersion": gv, "version": version}
                groups.append({"name": name, "versions": [v], "preferredVersion": v})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
    gv = path.removeprefix("/apis/").removeprefix("/api/")
    if gv in GROUPS and path in (f"/api/{gv}", f"/apis/{gv}"):
        resources = [
            {"name": p, "kind": k, "namespaced": ns, "verbs": ["get", "list"]}
            for p, k, ns in GROUPS[gv]
        ]
        return {"kind": "APIResourceList", "groupVersion": gv, "resources": resources}
    return None


def _item(i: int) -> dict[str, Any]:
    """A realistic object of about 1 KB (the amplification of decoding is that of real ones)."""
    return {
        "metadata": {
            "name": f"obj-{i:09d}",
            "namespace": "default",
            "uid": f"00000000-0000-0000-0000-{i:012d}",
            "resourceVersion": str(i),
            "labels": {"app": "x", "tier": "y"},
        },
        "data": {"a": "x" * 500, "b": "y" * 300},
    }


Handler = Callable[[BaseHTTPRequestHandler], None]


def _json(
    h: BaseHTTPRequestHandler, status: int, body: Any, headers: dict[str, str] | None = None
) -> None:
    data = json.dumps(body).encode()
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(data)))
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(data)


def endless_body(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.end_headers()  # no Content-Length: the body ends when the connection does, never
    h.wfile.write(b'{"kind": "APIVersions", "versions": ["v1"')
    chunk = b" " * 65536
    while True:
        h.wfile.write(chunk)


def endless_pages(h: BaseHTTPRequestHandler) -> None:
    path, _, query = h.path.partition("?")
    found = _discovery(path)
    if found is not None:
        _json(h, 200, found)
        return
    start = int(query.partition("continue=")[2].partition("&")[0] or 0)
    items = [_item(start + i) for i in range(500)]
    page = {"kind": "List", "metadata": {"continue": str(start + 500)}, "items": items}
    _json(h, 200, page)


def scalar_items(h: BaseHTTPRequestHandler) -> None:
    found = _discovery(h.path.partition("?")[0])
    _json(h, 200, found if found is not None else {"kind": "List", "metadata": {}, "items": [1]})


def trickle(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.end_headers()
    while True:  # one byte at a time, well inside any read timeout
        h.wfile.write(b" ")
        h.wfile.flush()
        time.sleep(0.2)


def retry_after_a_day(h: BaseHTTPRequestHandler) -> None:
    status = {"kind": "Status", "status": "Failure", "reason": "TooManyRequests", "code": 429}
    _json(h, 429, status, {"Retry-After": "100000"})


def echo_authorization(h: BaseHTTPRequestHandler) -> None:
    message = f"forbidden for {h.headers.get('Authorization')}"
    _json(h, 403, {"kind": "Status", "reason": "Forbidden", "message": message, "code": 403})


def unauthorized(h: BaseHTTPRequestHandler) -> None:
    _json(h, 401, {"kind": "Status", "reason": "Unauthorized", "message": "no", "code": 401})


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile-repo")
    demo_repo(root)
    return root


def _serve(handler: Handler) -> Iterator[str]:
    class Server(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                handler(self)  # a broken pipe: the client gave up, as it should

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Server)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _kubeconfig(path: Path, url: str) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "h", "cluster": {"server": url}}],
                "users": [{"name": "u", "user": {"token": TOKEN}}],
                "contexts": [{"name": "h", "context": {"cluster": "h", "user": "u"}}],
                "current-context": "h",
            }
        )
    )
    return path


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _audit(handler: Handler, repo: Path, tmp_path: Path, *options: str) -> tuple[int, str, str]:
    for url in _serve(handler):
        config = _kubeconfig(tmp_path / "kubeconfig", url)
        argv = [sys.executable, "-m", "gpu_gitops.cli", "audit", "--cluster", "ams1"]
        argv += ["--kubeconfig", str(config), "--repo", str(repo), *options]
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=300, preexec_fn=_limit_memory
        )
        assert TOKEN not in done.stdout + done.stderr
        assert "MemoryError" not in done.stderr
        return done.returncode, done.stdout, done.stderr
    raise AssertionError("unreachable")


def _incomplete(code: int, out: str, err: str) -> list[str]:
    assert code == 2, err
    doc = json.loads(out)
    assert doc["complete"] is False
    assert "incomplete" in err
    problems: list[str] = doc["problems"]
    return problems


def test_an_endless_body_is_cut_at_the_response_cap(repo: Path, tmp_path: Path):
    problems = _incomplete(*_audit(endless_body, repo, tmp_path, "-o", "json"))
    assert any("the answer is over 33554432 bytes" in p for p in problems), problems


def test_endless_pages_end_at_the_read_budget(repo: Path, tmp_path: Path):
    # 128Mi of ~1 KB objects decode to about three times that: inside the 500 MB cap
    code, out, err = _audit(
        endless_pages, repo, tmp_path, "-o", "json", "--max-read-bytes", "128Mi"
    )
    problems = _incomplete(code, out, err)
    [spent] = [p for p in problems if "--max-read-bytes" in p]
    assert "the answers add up to over 128Mi bytes (--max-read-bytes 128Mi)" in spent, problems


def test_a_trickling_server_is_given_up_at_the_deadline(repo: Path, tmp_path: Path):
    code, out, err = _audit(trickle, repo, tmp_path, "-o", "json", "--deadline", "3")
    problems = _incomplete(code, out, err)
    assert any("the deadline of 3 s (--deadline) passed" in p for p in problems), problems


def test_retry_after_a_day_on_every_read_is_not_waited_for(repo: Path, tmp_path: Path):
    code, out, err = _audit(retry_after_a_day, repo, tmp_path, "-o", "json", "--deadline", "60")
    problems = _incomplete(code, out, err)
    assert any("of waiting in all, over the 30 s this command may wait" in p for p in problems)


def test_a_server_echoing_the_authorization_header_gets_the_token_masked(
    repo: Path, tmp_path: Path
):
    code, out, err = _audit(echo_authorization, repo, tmp_path, "-o", "json")
    problems = _incomplete(code, out, err)
    assert any("forbidden for Bearer [masked]" in p for p in problems), problems


def test_a_401_still_prints_the_prometheus_report(repo: Path, tmp_path: Path):
    code, out, err = _audit(unauthorized, repo, tmp_path, "-o", "prometheus")
    assert code == 2, err
    assert samples(out)[("gpu_gitops_audit_complete", ())] == 0, out


def test_list_items_that_are_not_objects_are_a_failed_read(repo: Path, tmp_path: Path):
    problems = _incomplete(*_audit(scalar_items, repo, tmp_path, "-o", "json"))
    assert any("a list item is not an object; rerun" in p for p in problems), problems
