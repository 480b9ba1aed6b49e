"""`gpu-gitops fleet` against a real Prometheus scraping a real Pushgateway (tests/prometheus.py),
several clusters over two nights (fleet_data.py): what an SRE reads each morning, in every
format; and the one-line errors of an unreachable or refusing Prometheus."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.audit.audit_helpers import run
from tests.audit.fleet.fleet_data import PushedFleet
from tests.pushgateway import Pushgateway


def fleet_json(fleet: PushedFleet, at: float, *options: str) -> tuple[int, Any]:
    code, out, err = run(
        "fleet", "--prometheus", fleet.prometheus.url, "--at", f"{at:.3f}", "-o", "json", *options
    )
    assert code in (0, 1), err
    return code, json.loads(out)


def clusters(doc: Any) -> dict[str, Any]:
    return {c["cluster"]: c for c in doc["clusters"]}


def test_the_present_worst_news_first(fleet: PushedFleet) -> None:
    code, doc = fleet_json(fleet, fleet.night2)
    assert code == 1
    order = [c["cluster"] for c in doc["clusters"]]
    assert order[0] == "old1" and order[1] == "par1", order
    assert order[-1] == "ber1"
    got = clusters(doc)
    assert {k: got[k]["status"] for k in got} == {
        "old1": "missing",
        "par1": "incomplete",
        "fra1": "drift",
        "evil": "drift",
        "ams1": "drift",
        "ber1": "clean",
    }
    # fra1's night 2 is the present: the medium and low of night 1 are gone
    assert got["fra1"]["bySeverity"] == {"high": 1, "medium": 0, "low": 0, "info": 0}
    assert [f["id"] for f in got["fra1"]["findings"]] == fleet.night2_ids["fra1"]
    # par1's incomplete night keeps night 1's findings
    assert [f["id"] for f in got["par1"]["findings"]] == fleet.night1_ids["par1"]
    assert got["par1"]["complete"] is False
    (dcgm,) = got["fra1"]["findings"]
    assert dcgm["manager"] == "kubectl-edit"
    assert dcgm["changedAt"] == "2026-11-30T03:01:02Z"
    assert dcgm["adopt"] == f"gpu-gitops adopt --cluster fra1 --finding {dcgm['id']}"
    assert dcgm["revert"] == "never"


def test_night_one_is_still_there_to_look_at(fleet: PushedFleet) -> None:
    _, doc = fleet_json(fleet, fleet.night1, "--min-severity", "low")
    got = clusters(doc)
    assert got["fra1"]["bySeverity"] == {"high": 1, "medium": 1, "low": 1, "info": 0}
    assert sorted(f["id"] for f in got["fra1"]["findings"]) == sorted(fleet.night1_ids["fra1"])
    assert got["par1"]["status"] == "drift"


def test_nightly_command_findings_are_listed(fleet: PushedFleet) -> None:
    _, doc = fleet_json(fleet, fleet.night2, "--cluster", "ams*", "--min-severity", "info")
    (ams1,) = doc["clusters"]
    assert ams1["cluster"] == "ams1" and ams1["complete"] is True
    total = sum(ams1["bySeverity"].values())
    assert total > 0 and len(ams1["findings"]) == total - ams1["omitted"]
    assert all(
        f["adopt"].startswith("gpu-gitops adopt --cluster ams1 --finding ")
        for f in ams1["findings"]
    )


def test_fail_on_and_cluster_globs(fleet: PushedFleet) -> None:
    at = f"{fleet.night2:.3f}"
    url = fleet.prometheus.url
    assert run("fleet", "--prometheus", url, "--at", at, "--cluster", "ber1")[0] == 0
    assert run("fleet", "--prometheus", url, "--at", at, "--cluster", "fra*")[0] == 1
    assert (
        run("fleet", "--prometheus", url, "--at", at, "--cluster", "fra*", "--fail-on", "never")[0]
        == 0
    )
    # an incomplete audit is news at any --fail-on
    assert (
        run("fleet", "--prometheus", url, "--at", at, "--cluster", "par1", "--fail-on", "high")[0]
        == 1
    )


def test_text_and_markdown(fleet: PushedFleet) -> None:
    at = f"{fleet.night2:.3f}"
    code, out, _ = run("fleet", "--prometheus", fleet.prometheus.url, "--at", at)
    assert code == 1
    lines = out.splitlines()
    assert (
        lines[0].startswith("fleet at ")
        and "6 clusters (1 missing, 1 incomplete, 3 drift, 1 clean)" in lines[0]
    )
    assert lines[2].split() == [
        "CLUSTER",
        "STATUS",
        "LAST",
        "AUDIT",
        "AGE",
        "HIGH",
        "MEDIUM",
        "LOW",
        "INFO",
    ]
    assert lines[3].split()[:2] == ["old1", "missing"]
    assert "  old1: audit missing: last complete audit 1d 16h ago" in lines
    assert (
        "  par1: audit incomplete (1 read failed); findings are those of the last complete audit"
        in lines
    )
    dcgm = fleet.night2_ids["fra1"][0]
    assert f"      keep it: gpu-gitops adopt --cluster fra1 --finding {dcgm}" in lines
    assert "      set by kubectl-edit at 2026-11-30T03:01:02Z; nothing reverts it" in lines
    code, md, _ = run("fleet", "--prometheus", fleet.prometheus.url, "--at", at, "-o", "markdown")
    assert f"| `gpu-gitops adopt --cluster fra1 --finding {dcgm}` |" in md
    # markup only inside code spans, where GitHub shows it as text
    outside = re.sub(r"`[^`]*`", "", md)
    assert "<script>" not in outside and "<img" not in outside
    # the hostile path stays one code span, one table cell
    (evil_row,) = [
        line for line in md.splitlines() if line.startswith("| evil | high |") and "img" in line
    ]
    assert evil_row.count(" | ") == 6


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://127.0.0.1:1", "could not be reached"),
        ("http://user:pw@127.0.0.1:1", "carries a password"),
    ],
)
def test_unreachable_is_one_line_exit_2(url: str, says: str) -> None:
    code, out, err = run("fleet", "--prometheus", url)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and says in err, err
    assert "pw" not in err


def test_refusing_prometheus_is_one_line_exit_2(pushgateway: Pushgateway) -> None:
    # the Pushgateway has no /api/v1/query: a real HTTP 404 (405) from a real server
    code, out, err = run("fleet", "--prometheus", pushgateway.url)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "answered HTTP 4" in err, err


def test_token_never_printed_and_labels_inert(
    fleet: PushedFleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPU_GITOPS_PROMETHEUS_TOKEN", "s3cr3t-token-value")
    code, out, err = run(
        "fleet", "--prometheus", fleet.prometheus.url, "--at", f"{fleet.night2:.3f}"
    )
    assert code == 1, err
    assert "s3cr3t" not in out + err
    assert "\x1b" not in out and "set by kubectl\\x1b[2J\\x0aedit at " in out, "printed inert"
