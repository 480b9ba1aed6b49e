"""Flux source-controller's artifact server, for the in-cluster audit: plain HTTP on 127.0.0.1.

source-controller packs the tree of the revision it fetched into a tar.gz, serves it over plain
HTTP at `/gitrepository/<namespace>/<name>/<sha>.tar.gz` and publishes `status.artifact` on the
GitRepository: url, revision, digest (`sha256:<hex>` of the bytes served), size, lastUpdateTime
(fluxcd/source-controller api/v1 Artifact; internal/controller/gitrepository_controller.go).
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ArtifactServer", "artifact_status", "tarball"]


def tarball(files: dict[str, bytes]) -> bytes:
    """A tar.gz of `files` (path -> bytes), in path order, as source-controller packs a tree."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


class ArtifactServer:
    """Serves published artifacts by path; `requests` logs every path asked for."""

    def __init__(self) -> None:
        self.artifacts: dict[str, bytes] = {}
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                server.requests.append(self.path)
                data = server.artifacts.get(self.path)
                self.send_response(200 if data is not None else 404)
                body = data if data is not None else b"404 page not found\n"
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._http.serve_forever, name="test-source-controller", daemon=True
        )
        self._thread.start()

    def publish(self, namespace: str, name: str, sha: str, data: bytes) -> str:
        """Serve `data` as the artifact of GitRepository namespace/name at commit `sha`: its URL."""
        path = f"/gitrepository/{namespace}/{name}/{sha}.tar.gz"
        self.artifacts[path] = data
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}{path}"

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()


def artifact_status(url: str, revision: str, data: bytes, now: str) -> dict[str, Any]:
    """`status.artifact` of a GitRepository serving `data`."""
    return {
        "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
        "lastUpdateTime": now,
        "path": url.split("/", 3)[3],
        "revision": revision,
        "size": len(data),
        "url": url,
    }
