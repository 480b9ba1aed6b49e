"""The fleet's three queries select clusters in Prometheus (what `diff --live-findings` reads
for the clusters a pull request changes), against the real Prometheus of tests/prometheus.py."""

from __future__ import annotations

from audit.fleet.prometheus import Prometheus, fleet_budget
from gpu_gitops.cli_fleet import read_fleet
from tests.audit.fleet.fleet_data import PushedFleet


def _names(fleet: PushedFleet, clusters: list[str] | None) -> dict[str, list[str]]:
    with Prometheus(fleet.prometheus.url, fleet_budget(30)) as prometheus:
        got = read_fleet(prometheus, fleet.night2, "info", clusters=clusters)
    return {c.name: [f.id for f in c.findings] for c in got.clusters}


def test_selected_clusters_are_read_alone_and_whole(fleet: PushedFleet) -> None:
    every = _names(fleet, None)
    assert {"fra1", "par1", "evil"} <= set(every)
    assert _names(fleet, ["par1", "fra1"]) == {"fra1": every["fra1"], "par1": every["par1"]}
    assert _names(fleet, []) == {}


def test_names_are_literal_not_patterns(fleet: PushedFleet) -> None:
    """`fra.` as a regular expression would match fra1; as a name it matches nothing."""
    assert _names(fleet, ["fra.", "fra1|par1", "f.*"]) == {}
