"""audit/fleet/prometheus.py on an httpx MockTransport: the credentials the environment gives go
in the Authorization header, never into a message; answers that are not an instant vector, and
Prometheus's own error text, are one PrometheusError line."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from audit.fleet.prometheus import Prometheus, PrometheusError, fleet_budget, prometheus_auth

VECTOR = {
    "status": "success",
    "data": {
        "resultType": "vector",
        "result": [{"metric": {"__name__": "up", "cluster": "a"}, "value": [1, "3"]}],
    },
}


def serve(status: int, body: object, seen: list[httpx.Request]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, content=json.dumps(body).encode())

    return httpx.MockTransport(handler)


def test_bearer_token_is_sent() -> None:
    seen: list[httpx.Request] = []
    auth = prometheus_auth({"GPU_GITOPS_PROMETHEUS_TOKEN": "tok-0123456789"})
    with Prometheus("http://prom:9090/", fleet_budget(5), auth, serve(200, VECTOR, seen)) as p:
        (sample,) = p.query("up", 100.0)
    assert sample.labels["cluster"] == "a" and sample.value == 3.0
    assert seen[0].headers["Authorization"] == "Bearer tok-0123456789"
    assert seen[0].url.path == "/api/v1/query"
    assert seen[0].url.params["time"] == "100.000"


def test_basic_auth_is_sent() -> None:
    seen: list[httpx.Request] = []
    auth = prometheus_auth(
        {"GPU_GITOPS_PROMETHEUS_USER": "sre", "GPU_GITOPS_PROMETHEUS_PASSWORD": "pa55-word-long"}
    )
    with Prometheus("https://prom/prefix", fleet_budget(5), auth, serve(200, VECTOR, seen)) as p:
        p.query("up", 1.0)
    assert seen[0].url.path == "/prefix/api/v1/query"
    expected = base64.b64encode(b"sre:pa55-word-long").decode()
    assert seen[0].headers["Authorization"] == f"Basic {expected}"


@pytest.mark.parametrize(
    ("status", "body", "says"),
    [
        (400, {"status": "error", "error": "parse error at char 3"}, "HTTP 400"),
        (503, {"status": "error", "error": "tok-0123456789 overloaded"}, "[masked] overloaded"),
        (200, {"status": "success", "data": {"resultType": "matrix", "result": []}}, "a matrix"),
        (200, {"status": "success", "data": {"resultType": "vector", "result": [{}]}}, "malformed"),
        (200, ["no"], "no query result"),
    ],
)
def test_bad_answers_are_one_line(status: int, body: object, says: str) -> None:
    auth = prometheus_auth({"GPU_GITOPS_PROMETHEUS_TOKEN": "tok-0123456789"})
    with (
        Prometheus("http://prom", fleet_budget(5), auth, serve(status, body, [])) as p,
        pytest.raises(PrometheusError) as caught,
    ):
        p.query("up", 1.0)
    message = str(caught.value)
    assert says in message and "\n" not in message and "tok-0123456789" not in message


def test_token_and_basic_auth_together_is_an_error() -> None:
    with pytest.raises(PrometheusError, match="not both"):
        prometheus_auth({"GPU_GITOPS_PROMETHEUS_TOKEN": "t", "GPU_GITOPS_PROMETHEUS_USER": "u"})
