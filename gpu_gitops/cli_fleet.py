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
    ENV_PASSWORD,
    ENV_TOKEN,
    ENV_USER,
    Prometheus,
    fleet_budget,
    prometheus_auth,
)
from audit.fleet.report import FORMATS, render_fleet
from gpu_gitops.commands import Command, add_examples
from gpu_gitops.console import Console

__all__ = ["cmd_fleet", "define_fleet", "fleet_exit", "read_fleet"]

FAIL_ON = ("never", *reversed(SEVERITIES))
DEFAULT_DEADLINE = 60.0


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


def define_fleet(p: argparse.ArgumentParser) -> Command:
    add_examples(
        p,
        """\
gpu-gitops fleet --prometheus http://prometheus:9090
gpu-gitops fleet --prometheus https://prom.example --cluster 'ams*' --min-severity low
gpu-gitops fleet --prometheus http://prometheus:9090 -o html > fleet.html   # a CI artifact
gpu-gitops fleet --prometheus http://prometheus:9090 --fail-on high   # exit 1 only for high
exit codes: 0 nothing at or above --fail-on, 1 drift or an audit missing (no complete audit
for 36 h) or incomplete, 2 error (Prometheus unreachable or refusing)""",
    )
    p.add_argument(
        "--prometheus",
        required=True,
        metavar="URL",
        help="the Prometheus that scrapes the audits' Pushgateway (honor_labels: true)",
    )
    p.add_argument("-o", "--output", choices=tuple(FORMATS), default="text")
    p.add_argument(
        "--cluster",
        action="append",
        default=[],
        metavar="GLOB",
        help="only clusters whose name matches (fnmatch, e.g. 'ams*'; repeatable)",
    )
    p.add_argument(
        "--min-severity",
        choices=SEVERITIES,
        default="medium",
        help="list each finding at or above this severity (default: medium)",
    )
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="low",
        metavar="{" + ",".join(FAIL_ON) + "}",
        help="exit 1 when a finding at or above this severity exists, or an audit is missing "
        "or incomplete (default: low; never: always 0 unless an error)",
    )
    p.add_argument(
        "--at",
        metavar="TIME",
        help="evaluate at this time (Unix seconds or ISO 8601 with zone; default: now)",
    )
    p.add_argument(
        "--deadline",
        type=float,
        default=DEFAULT_DEADLINE,
        metavar="SECONDS",
        help=f"give up on Prometheus after this long (default: {DEFAULT_DEADLINE:g})",
    )
    p.epilog = (p.epilog or "") + (
        f"\n\nenvironment (never printed):\n  {ENV_TOKEN}    bearer token\n"
        f"  {ENV_USER}, {ENV_PASSWORD}    basic auth"
    )
    return cmd_fleet
