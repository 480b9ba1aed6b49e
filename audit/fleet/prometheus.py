"""Prometheus's HTTP API as the fleet view reads it: instant queries (/api/v1/query) on httpx,
every request within the command's deadline, the answers within a byte budget.

Credentials come from the environment, never from the command line or the URL (a URL with
user-info is refused): GPU_GITOPS_PROMETHEUS_TOKEN (a bearer token), or
GPU_GITOPS_PROMETHEUS_USER and GPU_GITOPS_PROMETHEUS_PASSWORD (basic auth). They are masked in
every message. A 4xx/5xx, a non-JSON answer and an unreachable server are one PrometheusError.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from kubedata.budget import Budget, OverBudget
from kubedata.text import inert, mask_secret, shorten
from renderer.rules.syntax import url_problem

from audit.errors import AuditError

__all__ = [
    "ENV_PASSWORD",
    "ENV_TOKEN",
    "ENV_USER",
    "Prometheus",
    "PrometheusError",
    "Sample",
    "fleet_budget",
    "prometheus_auth",
]

ENV_TOKEN = "GPU_GITOPS_PROMETHEUS_TOKEN"
ENV_USER = "GPU_GITOPS_PROMETHEUS_USER"
ENV_PASSWORD = "GPU_GITOPS_PROMETHEUS_PASSWORD"
REQUEST_TIMEOUT = 30.0
MAX_ANSWER_BYTES = 256 << 20
"""All answers of one command: 1,000 clusters x 200 finding series are ~100 MB of JSON."""
USER_AGENT = "gpu-gitops-fleet/0.1"


class PrometheusError(AuditError):
    """Prometheus could not be reached, refused the query or answered something else."""


@dataclass(frozen=True)
class Sample:
    """One series of an instant vector: its labels and its value at the query's time."""

    labels: Mapping[str, str]
    value: float


def fleet_budget(seconds: float) -> Budget:
    return Budget(seconds, max_wait=0.0, max_bytes=MAX_ANSWER_BYTES, setting="--deadline")


def prometheus_auth(env: Mapping[str, str]) -> httpx.Auth | None:
    """The credentials the environment gives (registered as secrets), or None."""
    token = env.get(ENV_TOKEN, "").strip()
    user, password = env.get(ENV_USER, ""), env.get(ENV_PASSWORD, "")
    if token and (user or password):
        raise PrometheusError(f"set {ENV_TOKEN} or {ENV_USER}/{ENV_PASSWORD}, not both")
    if token:
        mask_secret(token)
        return _Bearer(token)
    if password and not user:
        raise PrometheusError(f"{ENV_PASSWORD} is set without {ENV_USER}")
    if user:
        mask_secret(password)
        return httpx.BasicAuth(user, password)
    return None


class _Bearer(httpx.Auth):
    def __init__(self, token: str):
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Any:
        request.headers["Authorization"] = f"Bearer {self._token}"
        yield request


def _where(url: str) -> str:
    return inert(shorten(url.rstrip("/"), 200))


class Prometheus:
    """Instant queries against the Prometheus at `url` (its root, or a path prefix)."""

    def __init__(
        self,
        url: str,
        budget: Budget,
        auth: httpx.Auth | None = None,
        transport: httpx.BaseTransport | None = None,
    ):
        problem = url_problem(url)
        if problem:
            raise PrometheusError(f"--prometheus: {problem}")
        self.url = url.rstrip("/")
        self.budget = budget
        self.queries = 0
        self._client = httpx.Client(
            auth=auth,
            transport=transport,
            follow_redirects=False,  # a redirect would carry the credentials elsewhere
            headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Prometheus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def query(self, promql: str, at: float) -> list[Sample]:
        """The instant vector `promql` evaluates to at Unix time `at`."""
        self.queries += 1
        body = self._get("/api/v1/query", {"query": promql, "time": f"{at:.3f}"})
        return _vector(body, self.url)

    def _get(self, path: str, params: dict[str, str]) -> Any:
        where = _where(self.url)
        try:
            timeout = self.budget.timeout(REQUEST_TIMEOUT)
            with self._client.stream(
                "GET", self.url + path, params=params, timeout=timeout
            ) as response:
                chunks = []
                for chunk in response.iter_bytes():
                    self.budget.take(len(chunk))
                    self.budget.check()
                    chunks.append(chunk)
        except OverBudget as exc:
            raise PrometheusError(f"Prometheus at {where}: {exc}") from None
        except httpx.TimeoutException:
            raise PrometheusError(
                f"Prometheus at {where} did not answer within the deadline "
                f"({self.budget.seconds:g} s, --deadline)"
            ) from None
        except httpx.HTTPError as exc:
            raise PrometheusError(
                f"Prometheus at {where} could not be reached ({type(exc).__name__}: "
                f"{inert(shorten(str(exc), 200))})"
            ) from None
        data = b"".join(chunks)
        if response.status_code >= 300:
            raise PrometheusError(
                f"Prometheus at {where} answered HTTP {response.status_code} "
                f"{inert(shorten(response.reason_phrase, 60))}{_why(data)}"
            )
        try:
            return json.loads(data)
        except ValueError:
            raise PrometheusError(
                f"Prometheus at {where} answered something other than JSON"
            ) from None


def _why(data: bytes) -> str:
    """Prometheus's own error text ({"error": ...}), when the answer has one."""
    try:
        error = json.loads(data).get("error")
    except (ValueError, AttributeError):
        return ""
    return f": {inert(shorten(str(error), 200))}" if error else ""


def _vector(body: Any, url: str) -> list[Sample]:
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, dict) or body.get("status") != "success":
        raise PrometheusError(f"Prometheus at {_where(url)} answered no query result")
    if data.get("resultType") != "vector" or not isinstance(data.get("result"), list):
        raise PrometheusError(
            f"Prometheus at {_where(url)} answered a {inert(str(data.get('resultType'))[:20])}, "
            "not an instant vector"
        )
    samples = []
    for item in data["result"]:
        try:
            labels = {str(k): str(v) for k, v in item["metric"].items()}
            value = float(item["value"][1])
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            raise PrometheusError(
                f"Prometheus at {_where(url)} answered a malformed sample"
            ) from None
        samples.append(Sample(labels, value))
    return samples
