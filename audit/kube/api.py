"""Read-only Kubernetes API client on httpx: discovery, get, and whole lists or nothing.

Every read either completes or raises. Retried under the one policy of kubedata.retry: 429 (after
Retry-After), 500/502/503/504, connection errors, timeouts, truncated or undecodable bodies. A
list pages with `limit`/`continue` and restarts from the first page when its
continue token expires (410); when attempts or restarts run out it raises IncompleteReadError, never
returns the part it read. Any other error Status becomes a KubeApiError carrying its reason.

The cyclic garbage collector is paused while a page is decoded: a page allocates hundreds of
thousands of containers, none of them garbage, and the collector would otherwise scan them again
and again as they are made. Measured against the test server in another process on 2 cores,
20,000 ConfigMaps (~1.1 KB each) at limit=500, median of 11 runs: 39.5k objects/s with the
collector running, 81k with it paused per page; pausing it for the whole list instead (network
waits included) was no faster (71k), so the pause stays as short as the decoding.
"""

from __future__ import annotations

import builtins
import json
import random
import ssl
import time
from collections.abc import Callable, Iterable
from typing import Any

import httpx
from kubedata.budget import Budget, OverBudget, OverReadBudget
from kubedata.errors import RetriesExhausted
from kubedata.gc_pause import paused_gc
from kubedata.objects import KubeObject, ObjectKey
from kubedata.retry import TRANSIENT_STATUS, Retry, RetryPolicy, retry_after, with_retries

from audit.errors import IncompleteReadError, KubeApiError
from audit.kube.auth import build_auth, build_ssl_context
from audit.kube.discovery import ApiResource, Discovery
from audit.kube.kubeconfig import ClusterConfig

__all__ = [
    "DEFAULT_DEADLINE",
    "DEFAULT_MAX_READ_BYTES",
    "DEFAULT_TIMEOUT",
    "MAX_PAGES",
    "MAX_RESPONSE_BYTES",
    "KubeApi",
    "audit_budget",
    "decode_json",
]

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
DEFAULT_DEADLINE = 900.0
"""Seconds an audit may spend reading (--deadline). The nightly Job's activeDeadlineSeconds
(3600) leaves room for its retries and for printing the report."""
MAX_WAIT = 300.0
"""Seconds of backoff and Retry-After an audit may spend waiting in all."""
MAX_RESPONSE_BYTES = 32 << 20
"""One answer: a page of 500 objects is a few MB."""
DEFAULT_MAX_READ_BYTES = 1 << 30
"""All answers of one audit (--max-read-bytes): benchmarks/bench_audit.py's cluster is ~2 KB of
JSON per live object, so 200,000 objects are ~0.4 GB; twice that and more, for the artifact and
fatter objects."""
MAX_PAGES = 1000
"""Pages of one list: 500,000 objects at limit=500."""


def audit_budget(
    seconds: float = DEFAULT_DEADLINE, max_bytes: int = DEFAULT_MAX_READ_BYTES
) -> Budget:
    """The budget of one audit's reads."""
    return Budget(
        seconds,
        max_wait=min(MAX_WAIT, seconds / 2),
        max_bytes=max_bytes,
        setting="--deadline",
        bytes_setting="--max-read-bytes",
    )


USER_AGENT = "gpu-gitops-audit/0.1"

Objects = builtins.list[KubeObject]


def decode_json(body: bytes, pause_gc: bool = True) -> Any:
    """json.loads with the cyclic GC paused (nothing decoded is garbage yet)."""
    with paused_gc(pause_gc):
        return json.loads(body)


def _status(response: httpx.Response, content: bytes) -> tuple[str, str]:
    """(reason, message) of a Status body; the HTTP reason phrase when the body is not one."""
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("kind") == "Status":
        return str(body.get("reason") or response.reason_phrase), str(body.get("message") or "")
    return response.reason_phrase, ""


class _TooLarge(Exception):
    pass


def _read_body(response: httpx.Response, budget: Budget) -> bytes:
    """The body, bounded: MAX_RESPONSE_BYTES for this answer, the budget's bytes and deadline
    for the command (checked per chunk, so a server trickling bytes cannot hold it)."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
        raise _TooLarge
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise _TooLarge
        budget.take(len(chunk))
        budget.check()
        chunks.append(chunk)
    return b"".join(chunks)


def _tls_failure(exc: BaseException) -> str:
    """The reason of an ssl error behind a transport error: not worth retrying."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return str(getattr(seen, "verify_message", "") or seen.reason or "handshake failed")
        seen = seen.__cause__ or seen.__context__
    return ""


_HINTS = {
    401: "the credentials were refused: renew the token or certificate in the kubeconfig",
    403: "the auditor's identity may not read this: grant it get/list (RBAC)",
}


class KubeApi:
    """A sync client for one API server. Use as a context manager, or call close().

    `requests`, `retries` and `restarts` count what it did, for reports and tests. `transport`
    replaces the network (then TLS settings are the transport's); `sleep` and `rng` make the
    backoff testable. `list_restarts`: how many times a list may start over after its continue
    token expired.
    """

    def __init__(
        self,
        config: ClusterConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        pause_gc: bool = True,
        list_restarts: int = 3,
        budget: Budget | None = None,
    ) -> None:
        self.config = config
        self.retry = retry or RetryPolicy()
        self.budget = budget or audit_budget()
        self.budget.sleeper = sleep
        self._timeout = timeout
        self.list_restarts = list_restarts
        self._sleep, self._rng, self._pause_gc = sleep, rng or random.Random(), pause_gc
        ssl_context = build_ssl_context(config) if config.server.startswith("https:") else None
        self._client = httpx.Client(
            base_url=config.server,
            auth=build_auth(config, ssl_context),
            verify=ssl_context if ssl_context is not None else True,
            transport=transport,
            timeout=timeout,
            proxy=config.proxy_url or None,
            headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
            trust_env=True,  # HTTPS_PROXY / NO_PROXY, as kubectl honours them
        )
        self._extensions = (
            {"sni_hostname": config.tls_server_name} if config.tls_server_name else {}
        )
        self.discovery = Discovery(self.fetch)
        self.requests = 0
        self.retries = 0
        self.restarts = 0

    def __enter__(self) -> KubeApi:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    # -- transport --------------------------------------------------------------------------

    def fetch(self, path: str, what: str, params: dict[str, Any] | None = None) -> Any:
        """GET and decode one JSON document, retrying what can be retried. OverReadBudget once the
        audit's bytes are spent (before the request is sent, after the first refusal)."""

        def attempt(n: int) -> Any:
            timeout = httpx.Timeout(  # refused here, unsent, once the budget is spent
                self.budget.timeout(self._timeout.read or 30.0),
                connect=self.budget.timeout(self._timeout.connect or 10.0),
            )
            self.requests += 1
            if n > 1:
                self.retries += 1
            try:
                with self._client.stream(
                    "GET", path, params=params, extensions=self._extensions, timeout=timeout
                ) as response:
                    content = _read_body(response, self.budget)
            except _TooLarge:
                raise IncompleteReadError(
                    f"{what}: the answer is over {MAX_RESPONSE_BYTES} bytes; no page of a list "
                    "is that large: check the API server (or a proxy in front of it)"
                ) from None
            except httpx.TransportError as exc:
                if tls := _tls_failure(exc):
                    raise KubeApiError(
                        f"{what}: TLS with {self.config.server} failed ({tls}): check the "
                        "certificate-authority, tls-server-name and client certificate in use",
                        reason="TLSError",
                    ) from None
                return Retry(f"{type(exc).__name__}: connection failed or body cut short")
            if response.status_code == 200:
                try:
                    return decode_json(content, self._pause_gc)
                except ValueError:
                    return Retry("the response body is not valid JSON (truncated?)")
            status_reason, message = _status(response, content)
            if response.status_code in TRANSIENT_STATUS:
                after = retry_after(response.headers.get("Retry-After"), time.time())
                return Retry(f"HTTP {response.status_code} {status_reason}", after)
            hint = _HINTS.get(response.status_code, "")
            raise KubeApiError(
                f"{what}: {response.status_code} {status_reason}: {message or '-'}"
                + (f"; {hint}" if hint else ""),
                status=response.status_code,
                reason=status_reason,
            )

        try:
            return with_retries(self.retry, attempt, sleep=self.budget.sleep, rng=self._rng)
        except RetriesExhausted as exc:
            raise IncompleteReadError(
                f"{what}: gave up after {exc.attempts} attempts ({exc.why}); "
                "check the API server's health and rerun"
            ) from None
        except OverReadBudget:
            raise  # final: every later read would be refused too, so the audit ends here
        except OverBudget as exc:
            raise IncompleteReadError(f"{what}: {exc}") from None

    # -- discovery --------------------------------------------------------------------------

    def resolve(self, kind: str, group: str | None = None) -> ApiResource | None:
        """See Discovery.resolve."""
        return self.discovery.resolve(kind, group)

    def resolve_all(
        self, wanted: Iterable[tuple[str, str]]
    ) -> tuple[dict[tuple[str, str], ApiResource], builtins.list[tuple[str, str]]]:
        """See Discovery.resolve_all."""
        return self.discovery.resolve_all(wanted)

    def _require(self, kind: str, group: str) -> ApiResource:
        resource = self.resolve(kind, group)
        if resource is None:
            name = f"{kind}.{group}" if group else kind
            raise KubeApiError(
                f"{name} is not served by {self.config.server}: is its CRD installed?",
                reason="NotServed",
            )
        return resource

    # -- reads ------------------------------------------------------------------------------

    def get(self, key: ObjectKey) -> KubeObject | None:
        """One object, or None when it does not exist."""
        resource = self._require(key.kind, key.group)
        if resource.namespaced and not key.namespace:
            raise KubeApiError(f"{key}: {resource.kind} is namespaced, the key has no namespace")
        path = resource.path(key.namespace if resource.namespaced else "", key.name)
        try:
            obj = self.fetch(path, f"get {key}")
        except KubeApiError as exc:
            if exc.status == 404:
                return None
            raise
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
            raise IncompleteReadError(f"get {key}: the answer is not an object; rerun")
        obj.setdefault("apiVersion", resource.api_version)
        obj.setdefault("kind", resource.kind)
        return obj

    def list(
        self,
        kind: str,
        group: str,
        namespace: str | None = None,
        label_selector: str | None = None,
        limit: int = 500,
        field_selector: str | None = None,
        each: Callable[[KubeObject], None] | None = None,
    ) -> Objects:
        """Every object of a kind (in one namespace, or all), page by page: complete, or raise.

        With `each`, every object is handed to it as its page arrives and none is kept (the list
        returned is empty): memory is one page. After a restart (410) it is handed the objects
        again from the first page, so `each` must not mind seeing an object twice."""
        resource = self._require(kind, group)
        scope = f"in namespace {namespace}" if namespace else "in all namespaces"
        what = f"list {resource.qualified} {scope if resource.namespaced else ''}".rstrip()
        path = resource.path(namespace or "")
        base: dict[str, Any] = {"limit": limit}
        if label_selector:
            base["labelSelector"] = label_selector
        if field_selector:
            base["fieldSelector"] = field_selector
        for _ in range(self.list_restarts + 1):
            try:
                return self._pages(path, base, resource, what, each)
            except KubeApiError as exc:
                if exc.status != 410:
                    raise
                self.restarts += 1  # the continue token expired: start over for a consistent list
        raise IncompleteReadError(
            f"{what}: the list expired (410) {self.list_restarts + 1} times before it was "
            "read whole; the server compacts faster than the pages arrive: rerun"
        )

    def _pages(
        self,
        path: str,
        base: dict[str, Any],
        resource: ApiResource,
        what: str,
        each: Callable[[KubeObject], None] | None,
    ) -> Objects:
        items: Objects = []
        token = ""
        for _ in range(MAX_PAGES):
            params = {**base, "continue": token} if token else base
            page = self.fetch(path, what, params)
            meta = page.get("metadata") if isinstance(page, dict) else None
            page_items = page.get("items") if isinstance(page, dict) else None
            if not isinstance(meta, dict) or not isinstance(page_items, builtins.list):
                raise IncompleteReadError(f"{what}: a page is not a list object; rerun")
            for item in page_items:
                if not isinstance(item, dict):
                    raise IncompleteReadError(f"{what}: a list item is not an object; rerun")
                # Items of built-in lists come without apiVersion and kind.
                item.setdefault("apiVersion", resource.api_version)
                item.setdefault("kind", resource.kind)
            if each is None:
                items.extend(page_items)
            else:
                for item in page_items:
                    each(item)
            next_token = str(meta.get("continue") or "")
            if not next_token:
                return items
            if next_token == token:
                raise IncompleteReadError(f"{what}: the server repeated a continue token; rerun")
            token = next_token
        raise IncompleteReadError(
            f"{what}: still more after {MAX_PAGES} pages; the server keeps paginating: check it"
        )
