"""`gpu-gitops fleet`: every cluster's nightly audit in one view, read from Prometheus.

Exit codes like `audit`'s: 0 nothing at or above --fail-on, 1 drift (a finding at or above
--fail-on, or an audit missing or incomplete), 2 error (Prometheus unreachable or refusing,
bad arguments). Three queries for the whole fleet (audit/fleet/model.py).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import time
from collections.abc import Sequence

from audit.errors import AuditError
from audit.findings.finding import SEVERITIES
from audit.fleet.model import Fleet, build_fleet, counts_query, findings_query, state_query
from audit.fleet.prometheus import (
    Prometheus,
    fleet_budget,
    prometheus_auth,
)
from audit.fleet.report import render_fleet
from gpu_gitops.console import Console

__all__ = ["cmd_fleet", "fleet_exit", "read_fleet"]


def _at(text: str | None) -> float:
    if text is None:
        return time.time()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise AuditError(
            f'--at "{text[:40]}" is neither Unix seconds nor an ISO time (2026-12-02T06:00:00Z)'
        ) from None
    if when.tzinfo is None:
        raise AuditError(f'--at "{text[:40]}" has no time zone: end it with Z or +HH:MM')
    return when.timestamp()


def read_fleet(
    prometheus: Prometheus,
    at: float,
    min_severity: str,
    globs: Sequence[str] = (),
    clusters: Sequence[str] | None = None,
) -> Fleet:
    """The fleet at `at`, in three queries; `clusters` selects in Prometheus, `globs` after."""
    return build_fleet(
        prometheus.query(state_query(clusters), at),
        prometheus.query(counts_query(clusters), at),
        prometheus.query(findings_query(min_severity, clusters), at),
        at=at,
        min_severity=min_severity,
        globs=globs,
    )


def fleet_exit(fleet: Fleet, fail_on: str) -> int:
    """1 for a finding at or above `fail_on` (counted over all of a cluster's findings, listed
    or not) or an audit missing or incomplete; else 0. `never`: always 0."""
    if fail_on == "never":
        return 0
    wanted = SEVERITIES[: SEVERITIES.index(fail_on) + 1]
    for c in fleet.clusters:
        if c.status in ("missing", "incomplete") or any(c.counts[s] for s in wanted):
            return 1
    return 0


def cmd_fleet(args: argparse.Namespace, console: Console) -> int:
    if args.deadline <= 0:
        raise AuditError(f"--deadline {args.deadline:g}: give a positive number of seconds")
    at = _at(args.at)
    auth = prometheus_auth(os.environ)
    with Prometheus(args.prometheus, fleet_budget(args.deadline), auth) as prometheus:
        fleet = read_fleet(prometheus, at, args.min_severity, args.cluster)
    console.data(render_fleet(fleet, args.output))
    return fleet_exit(fleet, args.fail_on)
