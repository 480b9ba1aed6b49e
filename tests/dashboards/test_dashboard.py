"""dashboards/gpu-gitops.json: a Grafana JSON model with `datasource` and `cluster` variables,
every panel on the data source variable; and every panel's query, with the variables put in
as Grafana does (All: `.*`; several clusters), run against the real test Prometheus that
scraped the fleet's two nights: each returns data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.audit.fleet.fleet_data import PushedFleet

DASHBOARD = Path(__file__).resolve().parents[2] / "dashboards" / "gpu-gitops.json"
MODEL: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
TARGETS = [(p["title"], t) for p in MODEL["panels"] for t in p["targets"]]
CLUSTERS = {"all": ".*", "several": "(old1|par1|fra1)"}
"""$cluster as Grafana puts it in: the All value and a multi-value regex; both hold a missing,
an incomplete and a drifted cluster."""


def expand(expr: str, cluster: str) -> str:
    return expr.replace("$cluster", cluster)


def test_the_model_has_its_variables_and_every_panel_uses_them() -> None:
    variables = {v["name"]: v for v in MODEL["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    assert variables["cluster"]["includeAll"] and variables["cluster"]["multi"]
    assert len({p["id"] for p in MODEL["panels"]}) == len(MODEL["panels"])
    for panel in MODEL["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        for t in panel["targets"]:
            assert t["datasource"]["uid"] == "${datasource}"
            assert 'cluster=~"$cluster"' in t["expr"], panel["title"]


def test_the_cluster_variable_lists_the_fleet(fleet: PushedFleet) -> None:
    query = MODEL["templating"]["list"][1]["query"]["query"]
    assert query == "label_values(gpu_gitops_audit_complete, cluster)"
    got = httpx.get(
        f"{fleet.prometheus.url}/api/v1/label/cluster/values",
        params={"match[]": "gpu_gitops_audit_complete"},
        timeout=10,
    ).json()
    assert {"ams1", "fra1", "par1", "old1", "ber1", "evil"} <= set(got["data"])


@pytest.mark.parametrize("cluster", list(CLUSTERS))
@pytest.mark.parametrize(("title", "target"), TARGETS, ids=[t for t, _ in TARGETS])
def test_every_panel_query_returns_data(
    fleet: PushedFleet, title: str, target: dict[str, Any], cluster: str
) -> None:
    expr = expand(target["expr"], CLUSTERS[cluster])
    prom = fleet.prometheus.url
    if target.get("instant"):
        body = httpx.get(
            f"{prom}/api/v1/query", params={"query": expr, "time": fleet.night2}, timeout=10
        ).json()
    else:
        params: dict[str, str | float] = {
            "query": expr,
            "start": fleet.night1 - 30,
            "end": fleet.night2,
            "step": 1,
        }
        body = httpx.get(f"{prom}/api/v1/query_range", params=params, timeout=10).json()
    assert body["status"] == "success", body
    assert body["data"]["result"], f"{title}: {expr} returned no data"
