"""`gpu-gitops audit`: compare a live cluster (or a snapshot folder) with git and report drift.

Exit codes (DESIGN §6): 0 clean, 1 drift found (a finding at or above --fail-on), 2 bad input or
an incomplete audit (a read that failed is never reported as clean; the report is still printed).
The nightly CronJob runs `--fail-on never`: its Job fails only when the audit could not run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import git

from audit.errors import AuditError, IncompleteReadError, KubeApiError
from audit.findings.finding import SEVERITIES
from audit.kube.api import DEFAULT_DEADLINE, KubeApi, audit_budget
from audit.kube.kubeconfig import load_cluster_config, load_in_cluster_config
from audit.metrics import PUSH_TIMEOUT, PushError, push_metrics
from audit.report import FORMATS, render_report
from audit.result import AuditResult
from audit.run import audit_cluster
from audit.sources.live import ApiReader, Live, SnapshotReader
from gpu_gitops.commands import Command, add_examples, add_repo_arg
from gpu_gitops.console import Console
from kubedata.budget import Budget
from renderer.errors import GitError
from renderer.gitrepo import open_repo
from renderer.profile import check_cluster_name
from renderer.rules.syntax import url_problem

__all__ = ["add_live_args", "cmd_audit", "define_audit", "live_source", "run_audit"]

T = TypeVar("T")
FAIL_ON = ("never", *reversed(SEVERITIES))
"""--fail-on: exit 1 for a finding at or above this severity (never: only 0 or 2)."""


def _repo(args: argparse.Namespace) -> git.Repo | None:
    if args.in_cluster:
        return None
    try:
        return open_repo(args.repo)
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
    (still connected) to `then`. The reads draw on `budget` (default: --deadline's)."""
    check_cluster_name(args.cluster)
    if args.snapshot is not None and (args.kubeconfig or args.context or args.in_cluster):
        raise AuditError(
            "--snapshot reads a folder: leave out --kubeconfig, --context, --in-cluster"
        )
    repo = _repo(args)
    if args.snapshot is not None:
        live = Live(SnapshotReader.of_folder(args.snapshot))
        return then(audit_cluster(args.cluster, live, repo=repo, ref=args.ref), live)
    if args.in_cluster and not args.kubeconfig:
        config = load_in_cluster_config()
    else:
        config = load_cluster_config(args.kubeconfig, args.context)
    for warning in config.warnings:
        console.problem(f"gpu-gitops: warning: {warning}")
    budget = budget or audit_budget(args.deadline)
    with KubeApi(config, budget=budget) as api:
        live = Live(ApiReader(api))
        try:
            result = audit_cluster(args.cluster, live, repo=repo, ref=args.ref, budget=budget)
        except (KubeApiError, IncompleteReadError) as exc:
            # nothing more can be read (401, or no desired state): still a report, which
            # says incomplete, so the nightly job's metrics say so too
            result = AuditResult(args.cluster, "", "", problems=[*live.problems, str(exc)])
            result.timestamp = time.time()
        return then(result, live)


def _reads_budget(deadline: float, pushing: bool) -> Budget:
    """The reads' share of --deadline: when the metrics are pushed, the push's time is kept
    back, so an audit that used up its reads can still say so to the Pushgateway."""
    reserve = min(PUSH_TIMEOUT, deadline / 10) if pushing else 0.0
    return audit_budget(deadline - reserve)


def cmd_audit(args: argparse.Namespace, console: Console) -> int:
    problem = url_problem(args.pushgateway) if args.pushgateway is not None else None
    if problem:
        raise AuditError(f"--pushgateway: {problem}")
    # the whole command, push included, ends within --deadline
    command = audit_budget(args.deadline)
    reads = _reads_budget(args.deadline, bool(args.pushgateway))
    result = run_audit(args, console, lambda result, _: result, reads)
    console.data(render_report(result, args.output))
    if not result.complete:
        console.problem(
            f"gpu-gitops: error: the audit of {args.cluster} is incomplete: "
            f"{len(result.problems)} problem(s), listed in the report"
        )
    if args.pushgateway:
        try:
            push_metrics(result, args.pushgateway, command)
        except PushError as exc:
            console.problem(f"gpu-gitops: error: {exc}")
            return 2
    return result.exit_status(args.fail_on)


def define_audit(p: argparse.ArgumentParser) -> Command:
    """`audit`'s arguments and examples."""
    add_examples(
        p,
        """
gpu-gitops audit --cluster ams1                          # current kubeconfig context
gpu-gitops audit --cluster ams1 --context ams1-admin -o json
gpu-gitops audit --cluster ams1 --snapshot dumps/ams1/   # offline, from kubectl dumps:
  kubectl get RESOURCE -A --show-managed-fields -o yaml > dumps/ams1/RESOURCE.yaml
gpu-gitops audit --cluster ams1 --in-cluster --pushgateway http://pgw:9091   # the nightly job
gpu-gitops audit --cluster ams1 --fail-on high             # exit 1 only for high drift
exit codes: 0 clean (nothing at or above --fail-on), 1 drift, 2 bad input or incomplete;
the nightly CronJob runs --fail-on never: its Job fails only when the audit is incomplete""",
    )
    add_live_args(p)
    p.add_argument("-o", "--output", choices=tuple(FORMATS), default="text")
    p.add_argument(
        "--pushgateway",
        metavar="URL",
        help="also push the metrics to this Prometheus Pushgateway (grouped by job and cluster), "
        "within --deadline",
    )
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="low",
        metavar="{" + ",".join(FAIL_ON) + "}",
        help="exit 1 when a finding at or above this severity exists (default: low; never: "
        "drift does not change the exit code, an incomplete audit still exits 2)",
    )
    add_repo_arg(p)
    return cmd_audit


def add_live_args(p: argparse.ArgumentParser) -> None:
    """--cluster and the options that say where and how the live state is read (audit, adopt)."""
    p.add_argument("--cluster", required=True, metavar="NAME", help="cluster (clusters/<NAME>/)")
    p.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig (default: KUBECONFIG, ~/.kube)")
    p.add_argument("--context", metavar="NAME", help="kubeconfig context (default: current)")
    p.add_argument(
        "--snapshot",
        type=Path,
        metavar="DIR",
        help="audit a folder of `kubectl get --show-managed-fields -o yaml` dumps",
    )
    p.add_argument(
        "--in-cluster",
        action="store_true",
        help="service-account credentials; desired state from Flux's artifact (no checkout)",
    )
    p.add_argument(
        "--ref",
        metavar="REF",
        help="audit against the profiles at REF, built in memory (default: what Flux applied)",
    )
    p.add_argument(
        "--deadline",
        type=float,
        default=DEFAULT_DEADLINE,
        metavar="SECONDS",
        help="give up reading after this long and report the audit incomplete (audit: the push "
        "to the Pushgateway ends within it too) "
        f"(default: {DEFAULT_DEADLINE:g}, within the nightly Job's deadline)",
    )
