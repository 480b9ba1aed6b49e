"""Read-only Kubernetes API client on httpx: discovery, get, and whole lists or nothing.

Every read either completes or raises. Retried: 429 (after Retry-After), 500/502/503/504,
connection errors, timeouts, truncated or undecodable bodies; bounded attempts with exponential
backoff and jitter. A list pages with `limit`/`continue` and restarts from the first page when its
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
import gc
import json
import random
import ssl
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from kubedata.objects import KubeObject, ObjectKey

from audit.errors import IncompleteReadError, KubeApiError
from audit.kube.auth import build_auth, build_ssl_context
from audit.kube.discovery import ApiResource, Discovery
from audit.kube.kubeconfig import ClusterConfig

__all__ = ["DEFAULT_TIMEOUT", "KubeApi", "RetryPolicy", "decode_json", "paused_gc"]

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
USER_AGENT = "gpu-gitops-audit/0.1"

Objects = builtins.list[KubeObject]


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    """Tries per request, the first included."""
    backoff: float = 0.25
    """First delay in seconds; doubled per retry, up to `backoff_max`, with jitter."""
    backoff_max: float = 8.0
    retry_after_max: float = 60.0
    """A longer Retry-After is capped here rather than waited out."""
    list_restarts: int = 3
    """How many times a list may start over after its continue token expired."""


@contextmanager
def paused_gc(pause: bool = True, promote: bool = False) -> Iterator[None]:
    """Pause the cyclic GC (unless asked not to); leave it as the caller had it.

    `promote`: on the way out, move every tracked object to the oldest generation without
    scanning it (`gc.freeze()` then `gc.unfreeze()`). Everything made during the pause is young,
    and the next collections would scan it all as such: for a large batch of long-lived objects
    (an audit's decoded live state) that costs what the pause saved. Skipped when objects are
    frozen already: that frozen set is someone else's to thaw.
    """
    was_enabled = gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if promote and pause and was_enabled and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


def decode_json(body: bytes, pause_gc: bool = True) -> Any:
    """json.loads with the cyclic GC paused (nothing decoded is garbage yet)."""
    with paused_gc(pause_gc):
        return json.loads(body)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def _status(response: httpx.Response) -> tuple[str, str]:
    """(reason, message) of a Status body; the HTTP reason phrase when the body is not one."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("kind") == "Status":
        return str(body.get("reason") or response.reason_phrase), str(body.get("message") or "")
    return response.reason_phrase, ""


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
    backoff testable.
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
    ) -> None:
        self.config = config
        self.retry = retry or RetryPolicy()
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

    def _backoff(self, attempt: int) -> float:
        ceiling = min(self.retry.backoff_max, self.retry.backoff * 2.0 ** (attempt - 1))
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)  # "equal jitter": never 0

    def fetch(self, path: str, what: str, params: dict[str, Any] | None = None) -> Any:
        """GET and decode one JSON document, retrying what can be retried."""
        reason = ""
        for attempt in range(1, self.retry.attempts + 1):
            if attempt > 1:
                self.retries += 1
            self.requests += 1
            delay = self._backoff(attempt)
            try:
                response = self._client.get(path, params=params, extensions=self._extensions)
            except httpx.TransportError as exc:
                if tls := _tls_failure(exc):
                    raise KubeApiError(
                        f"{what}: TLS with {self.config.server} failed ({tls}): check the "
                        "certificate-authority, tls-server-name and client certificate in use",
                        reason="TLSError",
                    ) from None
                reason = f"{type(exc).__name__}: connection failed or body cut short"
            else:
                if response.status_code == 200:
                    try:
                        return decode_json(response.content, self._pause_gc)
                    except ValueError:
                        reason = "the response body is not valid JSON (truncated?)"
                elif response.status_code in RETRY_STATUS:
                    status_reason, _ = _status(response)
                    reason = f"HTTP {response.status_code} {status_reason}"
                    if (after := _retry_after(response)) is not None:
                        delay = max(delay, min(after, self.retry.retry_after_max))
                else:
                    status_reason, message = _status(response)
                    hint = _HINTS.get(response.status_code, "")
                    raise KubeApiError(
                        f"{what}: {response.status_code} {status_reason}: {message or '-'}"
                        + (f"; {hint}" if hint else ""),
                        status=response.status_code,
                        reason=status_reason,
                    )
            if attempt < self.retry.attempts:
                self._sleep(delay)
        raise IncompleteReadError(
            f"{what}: gave up after {self.retry.attempts} attempts ({reason}); "
            "check the API server's health and rerun"
        )

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
    ) -> Objects:
        """Every object of a kind (in one namespace, or all), page by page: complete, or raise."""
        resource = self._require(kind, group)
        scope = f"in namespace {namespace}" if namespace else "in all namespaces"
        what = f"list {resource.qualified} {scope if resource.namespaced else ''}".rstrip()
        path = resource.path(namespace or "")
        base: dict[str, Any] = {"limit": limit}
        if label_selector:
            base["labelSelector"] = label_selector
        if field_selector:
            base["fieldSelector"] = field_selector
        for _ in range(self.retry.list_restarts + 1):
            try:
                return self._pages(path, base, resource, what)
            except KubeApiError as exc:
                if exc.status != 410:
                    raise
                self.restarts += 1  # the continue token expired: start over for a consistent list
        raise IncompleteReadError(
            f"{what}: the list expired (410) {self.retry.list_restarts + 1} times before it was "
            "read whole; the server compacts faster than the pages arrive: rerun"
        )

    def _pages(self, path: str, base: dict[str, Any], resource: ApiResource, what: str) -> Objects:
        items: Objects = []
        token = ""
        while True:
            params = {**base, "continue": token} if token else base
            page = self.fetch(path, what, params)
            meta = page.get("metadata") if isinstance(page, dict) else None
            page_items = page.get("items") if isinstance(page, dict) else None
            if not isinstance(meta, dict) or not isinstance(page_items, builtins.list):
                raise IncompleteReadError(f"{what}: a page is not a list object; rerun")
            for item in page_items:
                # Items of built-in lists come without apiVersion and kind.
                item.setdefault("apiVersion", resource.api_version)
                item.setdefault("kind", resource.kind)
            items.extend(page_items)
            next_token = str(meta.get("continue") or "")
            if not next_token:
                return items
            if next_token == token:
                raise IncompleteReadError(f"{what}: the server repeated a continue token; rerun")
            token = next_token
