"""TLS and request authentication for a ClusterConfig, as httpx pieces.

Tokens are looked up per request, not once: a token file (the in-cluster service account token,
rotated by the kubelet) is re-read when it changes, and an exec plugin's token is cached until its
`expirationTimestamp`. On a 401 the credential is refreshed once and the request repeated, as
client-go does. Nothing here logs or repeats a token, key or plugin output in an error.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import selectors
import signal
import ssl
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from kubedata.files import NotRegularFile, TooLarge, read_regular
from kubedata.text import mask_secret

from audit.errors import KubeConfigError
from audit.kube.kubeconfig import ClusterConfig, ExecConfig

__all__ = [
    "BearerAuth",
    "ExecAuth",
    "Runner",
    "TokenFileAuth",
    "build_auth",
    "build_ssl_context",
    "load_client_cert",
    "run_plugin",
]

Runner = Callable[..., "subprocess.CompletedProcess[bytes]"]
"""`subprocess.run`'s shape; tests may pass their own."""

EXEC_TIMEOUT = 60.0
EXEC_MAX_OUTPUT = 1024 * 1024
"""An ExecCredential is a few KB (a certificate chain at most); more is not one."""
TOKEN_FILE_MAX = 64 * 1024
"""A service-account token is about 1 KB."""


def _exited(pid: int) -> bool:
    """Whether the child has exited, without reaping it (its group stays its own to kill)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def run_plugin(
    args: list[str], *, env: dict[str, str], timeout: float, **_: object
) -> subprocess.CompletedProcess[bytes]:
    """Run an exec plugin in a session of its own: stdout capped at EXEC_MAX_OUTPUT bytes, the
    whole run bounded by `timeout`, and every process it started ended with it (a child left
    holding stdout would otherwise hang the read). Stderr is dropped: plugins print secrets there.
    """
    proc = subprocess.Popen(
        args,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    out = bytearray()
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(args, timeout)
                if not sel.select(min(left, 0.05)):
                    # the plugin is gone and its stdout quiet: what it printed is its answer,
                    # even if a child it left still holds the pipe open
                    if _exited(proc.pid):
                        break
                    continue
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                out += chunk
                if len(out) > EXEC_MAX_OUTPUT:
                    raise KubeConfigError(
                        f"exec plugin {args[0]!r} printed over {EXEC_MAX_OUTPUT} bytes; "
                        "an ExecCredential is a few KB: run it by hand"
                    )
        while not _exited(proc.pid):
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(args, timeout)
            time.sleep(0.01)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the plugin and whatever it left running
        proc.wait()
        proc.stdout.close()
    return subprocess.CompletedProcess(args, proc.returncode, bytes(out), b"")


def load_client_cert(ctx: ssl.SSLContext, cert_pem: bytes, key_pem: bytes) -> None:
    """Load a PEM certificate and key held in memory (ssl reads files: use a private temp dir)."""
    with tempfile.TemporaryDirectory(prefix="gpu-gitops-") as tmp:
        cert_path, key_path = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
        for path, data in ((cert_path, cert_pem), (key_path, key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
        try:
            ctx.load_cert_chain(cert_path, key_path)
        except ssl.SSLError as exc:
            raise KubeConfigError(
                f"client certificate and key cannot be used ({exc.reason or 'bad PEM'}): "
                "check that they are PEM and belong together"
            ) from None


def build_ssl_context(config: ClusterConfig) -> ssl.SSLContext:
    """Server verification (CA, or none when insecure) and the client certificate, if any."""
    ctx = ssl.create_default_context()
    if config.insecure_skip_tls_verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif config.ca_pem:
        try:
            # Trust only the cluster's CA, as kubectl does when one is given.
            ctx = ssl.create_default_context(cadata=config.ca_pem.decode("ascii", "replace"))
        except ssl.SSLError:
            raise KubeConfigError(
                f"{config.source}: certificate authority is not a PEM certificate"
            ) from None
    if config.client_cert_pem and config.client_key_pem:
        load_client_cert(ctx, config.client_cert_pem, config.client_key_pem)
    return ctx


class BearerAuth(httpx.Auth):
    """A fixed bearer token."""

    def __init__(self, token: str) -> None:
        mask_secret(token)
        self._header = f"Bearer {token}"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = self._header
        yield request


class TokenFileAuth(httpx.Auth):
    """A bearer token read from a file, re-read whenever the file changes (or after a 401)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._token = ""

    def token(self, force: bool = False) -> str:
        with self._lock:
            try:
                st = self._path.stat()
                stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
                if force or stamp != self._stamp:
                    data = read_regular(self._path, TOKEN_FILE_MAX)
                    token = data.decode("utf-8", "replace").strip()
                    if token:
                        mask_secret(token)
                        self._token, self._stamp = token, stamp
            except (NotRegularFile, TooLarge) as exc:
                what = "not a regular file" if isinstance(exc, NotRegularFile) else "too large"
                raise KubeConfigError(
                    f"token file {self._path} is {what}: point tokenFile at the token itself"
                ) from None
            except OSError:
                pass  # mid-rotation: keep the last good token, as client-go does
            if not self._token:
                raise KubeConfigError(
                    f"token file {self._path} is missing or empty: check the service account mount"
                )
            return self._token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        used = self.token()
        request.headers["Authorization"] = f"Bearer {used}"
        response = yield request
        if response.status_code == 401 and (fresh := self.token(force=True)) != used:
            request.headers["Authorization"] = f"Bearer {fresh}"
            yield request


@dataclass(frozen=True)
class _Credential:
    token: str = field(default="", repr=False)
    cert_pem: bytes = field(default=b"", repr=False)
    key_pem: bytes = field(default=b"", repr=False)
    expires: float | None = None


class ExecAuth(httpx.Auth):
    """client.authentication.k8s.io ExecCredential plugins, cached until they expire."""

    def __init__(
        self,
        exec_config: ExecConfig,
        config: ClusterConfig,
        ssl_context: ssl.SSLContext | None = None,
        *,
        clock: Callable[[], float] = time.time,
        run: Runner = run_plugin,
        timeout: float = EXEC_TIMEOUT,
    ) -> None:
        self._exec, self._config, self._ssl = exec_config, config, ssl_context
        self._clock, self._run, self._timeout = clock, run, timeout
        self._lock = threading.Lock()
        self._cred: _Credential | None = None
        self.runs = 0
        """How many times the plugin ran (tests check the cache with it)."""

    def credential(self, force: bool = False) -> _Credential:
        with self._lock:
            cred = self._cred
            if (
                force
                or cred is None
                or (cred.expires is not None and self._clock() >= cred.expires)
            ):
                cred = self._call()
                if cred.cert_pem and self._ssl is not None:
                    load_client_cert(self._ssl, cred.cert_pem, cred.key_pem)
                self._cred = cred
            return cred

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        used = self.credential()
        if used.token:
            request.headers["Authorization"] = f"Bearer {used.token}"
        response = yield request
        if response.status_code == 401:
            fresh = self.credential(force=True)
            if fresh != used:
                if fresh.token:
                    request.headers["Authorization"] = f"Bearer {fresh.token}"
                yield request

    def _exec_info(self) -> str:
        spec: dict[str, Any] = {"interactive": False}
        if self._exec.provide_cluster_info:
            cluster: dict[str, Any] = {"server": self._config.server}
            if self._config.ca_pem:
                cluster["certificate-authority-data"] = base64.b64encode(
                    self._config.ca_pem
                ).decode()
            if self._config.insecure_skip_tls_verify:
                cluster["insecure-skip-tls-verify"] = True
            if self._config.tls_server_name:
                cluster["tls-server-name"] = self._config.tls_server_name
            spec["cluster"] = cluster
        info = {"kind": "ExecCredential", "apiVersion": self._exec.api_version, "spec": spec}
        return json.dumps(info)

    def _call(self) -> _Credential:
        name = self._exec.command
        if self._exec.interactive_mode == "Always":
            raise KubeConfigError(
                f"exec plugin {name!r} needs a terminal (interactiveMode: Always) and the auditor "
                "runs unattended: use a credential that works non-interactively"
            )
        env = {**os.environ, **dict(self._exec.env), "KUBERNETES_EXEC_INFO": self._exec_info()}
        self.runs += 1
        try:
            done = self._run(
                [name, *self._exec.args],
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=self._timeout,
                check=False,
            )
        except FileNotFoundError:
            hint = f": {self._exec.install_hint.strip()}" if self._exec.install_hint else ""
            raise KubeConfigError(f"exec plugin {name!r} not found{hint}") from None
        except subprocess.TimeoutExpired:
            raise KubeConfigError(
                f"exec plugin {name!r} did not answer within {self._timeout:g}s: run it by hand"
            ) from None
        if done.returncode != 0:
            # Its stderr is not repeated: plugins may print credentials there.
            raise KubeConfigError(
                f"exec plugin {name!r} exited with status {done.returncode}: "
                "run it by hand to see its error"
            )
        return self._parse(done.stdout)

    def _parse(self, stdout: bytes) -> _Credential:
        name = self._exec.command
        try:
            doc = json.loads(stdout)
        except ValueError:
            doc = None
        if not isinstance(doc, dict) or doc.get("kind") != "ExecCredential":
            raise KubeConfigError(f"exec plugin {name!r} did not print an ExecCredential (JSON)")
        if doc.get("apiVersion") != self._exec.api_version:
            raise KubeConfigError(
                f"exec plugin {name!r} answered {doc.get('apiVersion')!r}, "
                f"kubeconfig asks for {self._exec.api_version!r}: make them match"
            )
        status = doc.get("status") or {}
        token = str(status.get("token") or "")
        mask_secret(token)
        cert = str(status.get("clientCertificateData") or "").encode()
        key = str(status.get("clientKeyData") or "").encode()
        if not token and not (cert and key):
            raise KubeConfigError(
                f"exec plugin {name!r} returned neither a token nor a client certificate and key"
            )
        expires = None
        if stamp := status.get("expirationTimestamp"):
            try:
                expires = datetime.fromisoformat(str(stamp)).timestamp()
            except ValueError:
                raise KubeConfigError(
                    f"exec plugin {name!r} returned an expirationTimestamp that is not RFC 3339"
                ) from None
        return _Credential(token=token, cert_pem=cert, key_pem=key, expires=expires)


def build_auth(
    config: ClusterConfig,
    ssl_context: ssl.SSLContext | None = None,
    *,
    clock: Callable[[], float] = time.time,
    run: Runner = subprocess.run,
) -> httpx.Auth | None:
    """The request authentication kubectl would use (a token wins, as in client-go)."""
    if config.token:
        return BearerAuth(config.token)
    if config.token_file:
        return TokenFileAuth(config.token_file)
    if config.username:
        return httpx.BasicAuth(config.username, config.password)
    if config.exec:
        return ExecAuth(config.exec, config, ssl_context, clock=clock, run=run)
    return None
