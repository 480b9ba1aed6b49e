"""`gpu-gitops audit`: compare a live cluster (or a snapshot folder) with git and report drift.

Exit codes (DESIGN §6): 0 clean, 1 drift found (a finding at or above --fail-on), 2 bad input or
an incomplete audit (a read that failed is never reported as clean; the report is still printed).
The nightly CronJob runs `--fail-on never`: its Job fails only when the audit could not run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from audit.errors import AuditError, IncompleteReadError, KubeApiError
from audit.report import render_report
from audit.result import AuditResult
from audit.run import audit_cluster
from audit.sources.live import ApiReader, Live, SnapshotReader
from gpu_gitops.console import Console
from renderer.errors import GitError
from renderer.gitdir import Checkout, open_checkout
from renderer.profile import check_cluster_name
from renderer.rules.syntax import url_problem

if TYPE_CHECKING:
    from kubedata.budget import Budget

__all__ = ["cmd_audit", "live_source", "run_audit"]

T = TypeVar("T")


def _repo(args: argparse.Namespace) -> Checkout | None:
    if args.in_cluster:
        return None
    try:
        return open_checkout(args.repo)
    except GitError as exc:
        if args.snapshot is not None:
            raise  # a snapshot is audited against git: there is no other desired state
        raise AuditError(
            f"{exc}; or --in-cluster, to read the rendered branch from Flux's source-controller"
        ) from None


def live_source(args: argparse.Namespace) -> str:
    """Where the live state of a run is read, in words (adopt's commit names it)."""
    if args.snapshot is not None:
        return f"snapshot {args.snapshot}"
    if args.in_cluster and not args.kubeconfig:
        return f"cluster {args.cluster} (in-cluster service account)"
    context = f"context {args.context}" if args.context else "the current context"
    kubeconfig = f" of {args.kubeconfig}" if args.kubeconfig else ""
    return f"cluster {args.cluster} ({context}{kubeconfig})"


def run_audit(
    args: argparse.Namespace,
    console: Console,
    then: Callable[[AuditResult, Live], T],
    budget: Budget | None = None,
) -> T:
    """Audit the cluster the live-state options name, and hand the result and the live state
    (still connected) to `then`. The reads draw on `budget` (default: --deadline's and
    --max-read-bytes')."""
    check_cluster_name(args.cluster)
    if args.snapshot is not None and (args.kubeconfig or args.context or args.in_cluster):
        raise AuditError(
            "--snapshot reads a folder: leave out --kubeconfig, --context, --in-cluster"
        )
    repo = _repo(args)
    if args.snapshot is not None:
        live = Live(SnapshotReader.of_folder(args.snapshot))
        return then(audit_cluster(args.cluster, live, repo=repo, ref=args.ref), live)
    # the API client (httpx, ssl) and its budget load only to read a cluster: a snapshot audit
    # starts without them
    from audit.kube.api import KubeApi, audit_budget
    from audit.kube.kubeconfig import load_cluster_config, load_in_cluster_config
    from kubedata.budget import OverReadBudget

    if args.in_cluster and not args.kubeconfig:
        config = load_in_cluster_config()
    else:
        config = load_cluster_config(args.kubeconfig, args.context)
    for warning in config.warnings:
        console.problem(f"gpu-gitops: warning: {warning}")
    budget = budget or audit_budget(args.deadline, args.max_read_bytes)
    with KubeApi(config, budget=budget) as api:
        live = Live(ApiReader(api))
        try:
            result = audit_cluster(args.cluster, live, repo=repo, ref=args.ref, budget=budget)
        except (KubeApiError, IncompleteReadError, OverReadBudget) as exc:
            # nothing more can be read (401, the bytes spent, or no desired state): still a
            # report, which says incomplete, so the nightly job's metrics say so too
            result = AuditResult(args.cluster, "", "", problems=[*live.problems, str(exc)])
            result.timestamp = time.time()
        return then(result, live)


def _budgets(args: argparse.Namespace) -> tuple[Budget | None, Budget | None]:
    """(the whole command's, the reads') shares of --deadline, from the start. When the metrics
    are pushed, the push's time is kept back from the reads, so an audit that used up its reads
    can still say so to the Pushgateway. None for a snapshot audit that pushes nothing: it uses
    no network, and its start-up loads neither httpx nor prometheus_client."""
    if args.snapshot is not None and not args.pushgateway:
        return None, None
    from audit.kube.api import audit_budget

    reserve = 0.0
    if args.pushgateway:
        from audit.metrics import PUSH_TIMEOUT

        reserve = min(PUSH_TIMEOUT, args.deadline / 10)
    return audit_budget(args.deadline), audit_budget(args.deadline - reserve, args.max_read_bytes)


def cmd_audit(args: argparse.Namespace, console: Console) -> int:
    problem = url_problem(args.pushgateway) if args.pushgateway is not None else None
    if problem:
        raise AuditError(f"--pushgateway: {problem}")
    # the whole command, push included, ends within --deadline
    command, reads = _budgets(args)
    result = run_audit(args, console, lambda result, _: result, reads)
    console.data(render_report(result, args.output))
    if not result.complete:
        console.problem(
            f"gpu-gitops: error: the audit of {args.cluster} is incomplete: "
            f"{len(result.problems)} problem(s), listed in the report"
        )
    if args.pushgateway and command is not None:
        from audit.metrics import PushError, push_metrics

        try:
            push_metrics(result, args.pushgateway, command)
        except PushError as exc:
            console.problem(f"gpu-gitops: error: {exc}")
            return 2
    return result.exit_status(args.fail_on)
