"""The test server on the wire: TLS accept, HTTP/1.1 keep-alive, fault injection, auth, dispatch.

`ApiServer` (server.py) decides what to answer; this module reads requests, injects the faults
queued in `ApiServer.faults`, authenticates, and writes the answer (or half of it, or nothing).
"""

from __future__ import annotations

import socket
import ssl
import struct
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from tests.apiserver import responses
from tests.apiserver.faults import Fault

if TYPE_CHECKING:
    from tests.apiserver.server import ApiServer

__all__ = ["Answer", "HTTPServer", "Handler", "RequestRecord", "User"]


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...] = ()


@dataclass(frozen=True)
class RequestRecord:
    method: str
    path: str
    query: dict[str, str]
    user: str
    accept: str
    fault: str = ""


@dataclass
class Answer:
    code: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], app: ApiServer, ctx: ssl.SSLContext) -> None:
        self.app, self.ctx = app, ctx
        super().__init__(address, Handler)

    def get_request(self) -> tuple[Any, Any]:
        sock, addr = self.socket.accept()
        # Headers and body go out in separate writes: without this, Nagle + delayed ACK add 40 ms.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # The handshake runs in the handler's thread, so one slow client cannot stall accept().
        return self.ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hang up, handshakes fail, faults reset connections: all expected here


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: HTTPServer

    def setup(self) -> None:
        self.request.settimeout(10)
        self.request.do_handshake()
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, answer: Answer, fault: Fault | None = None) -> None:
        body = answer.body
        self.send_response(answer.code)
        self.send_header("Content-Type", answer.content_type)
        for key, value in answer.headers.items():
            self.send_header(key, value)
        if fault is not None and fault.kind == "malformed":
            body = body[: len(body) // 2]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.server.app.sent.append(len(body))  # append: atomic across handler threads
        if fault is not None and fault.kind == "truncate":
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.request.close()
            return
        self.wfile.write(body)

    def _reset(self) -> None:
        self.close_connection = True
        self.request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.request.close()

    def _handle(self, method: str) -> None:
        app = self.server.app
        if method != "GET":
            self.close_connection = True  # bodies of writes are not read: do not reuse the stream
        fault = app.faults.take(f"{method} {self.path}")
        peer = self.request.getpeercert()
        user = app.authenticate(peer, self.headers.get("Authorization", ""))
        url = urlsplit(self.path)
        app.requests.append(
            RequestRecord(
                method,
                url.path,
                {k: v[-1] for k, v in parse_qs(url.query).items()},
                user.name if user else "",
                self.headers.get("Accept", ""),
                fault.kind if fault else "",
            )
        )
        if fault is not None:
            if fault.kind == "reset":
                return self._reset()
            if fault.kind == "delay":
                time.sleep(fault.seconds)
            if fault.kind == "status":
                headers = (
                    {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
                )
                body = responses.status_body(fault.status)
                return self._send(Answer(fault.status, body, headers))
        if user is None:
            return self._send(Answer(401, responses.status_body(401)))
        self._send(app.answer(method, self.path, user, self.headers.get("Accept", "")), fault)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")
