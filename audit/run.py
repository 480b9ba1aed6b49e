"""The audit of one cluster: desired state and live state -> classified, explained findings.

Three comparisons (DESIGN §6), then checks of what they cannot see, in this order:
1. `git` (git_vs_live.py): every object of the desired (rendered) state with the live one;
   applied by Flux's kustomize-controller.
2. `release` (releases_vs_live.py): the GPU objects (KubeVirt, ClusterPolicy, Package) of the
   newest deployed revision of each Helm release with the live ones; applied by helm-controller.
   On Cozystack this is where the KubeVirt CR and the ClusterPolicy are checked, since git holds
   only the platform Package.
3. `wiring` (wiring_vs_live.py): the GPU wiring the profile implies (wiring.py) with the live
   KubeVirt CR and Packages; then live VirtualMachines' GPU device names with the live
   permittedHostDevices (vm_devices.py), and Node workload labels with spec.nodes
   (node_labels.py).
Then `inventory` (inventory.py): orphans (Packages `helm.sh/resource-policy: keep` left behind,
objects pruned from git but not from the cluster), unmanaged GPU objects (hand-applied Packages,
HelmReleases, KubeVirt CRs, ClusterPolicies), and suspended Flux objects.

Each finding is attributed (attribute.py), classified (classify.py), given its profile source and
fix (provenance.py) and redacted (redact.py) when it is made (collect.py). A finding reported by
two comparisons with the same values is kept once. Reads that failed make the result incomplete
(result.py). I/O happens only through `Live` (and `desired.py`/`artifact.py` for git and the
artifact). This module runs the steps in order and finds the desired state to run them on.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from kubedata.gc_pause import paused_gc
from kubedata.objects import KubeObject, ObjectKey

from audit.checks.flux import find_kustomization
from audit.checks.git_vs_live import compare_git
from audit.checks.inventory import inventory
from audit.checks.node_labels import check_nodes
from audit.checks.releases_vs_live import compare_releases, load_releases, read_helm_releases
from audit.checks.vm_devices import check_vms
from audit.checks.wiring_vs_live import compare_wiring, expect_wiring
from audit.compare.worker import Worker
from audit.errors import AuditError
from audit.findings.collect import dedup
from audit.findings.finding import Finding
from audit.kinds import FLUX_KINDS, GIT_REPOSITORY, meta, ns_name
from audit.result import AuditResult, ReleaseInfo
from audit.sources.desired import Desired, desired_from_files, desired_from_repo, parse_revision
from audit.sources.live import Live
from audit.sources.state import AuditState

if TYPE_CHECKING:
    import httpx
    from kubedata.budget import Budget
    from renderer.gitdir import GitDir

__all__ = [
    "FLUX_KINDS",
    "STEPS",
    "AuditResult",
    "ReleaseInfo",
    "audit",
    "audit_cluster",
    "desired_from_artifact",
    "find_kustomization",
    "run_steps",
]

STEPS = (
    read_helm_releases,
    expect_wiring,
    load_releases,
    compare_releases,
    compare_git,
    compare_wiring,
    check_vms,
    check_nodes,
    inventory,
)
"""The audit, step by step; each builds on what the earlier ones left in the AuditState."""


def run_steps(state: AuditState) -> tuple[list[Finding], list[str]]:
    """Every step in order: (findings, each once and worst first; notes, each once)."""
    for step in STEPS:
        step(state)
    state.notes += state.findings.noise_notes() + state.live.notes
    return dedup(state.findings.made), list(dict.fromkeys(state.notes))


def audit(
    desired: Desired,
    live: Live,
    kustomization: KubeObject | None = None,
    now: float | None = None,
    worker: Worker | None = None,
) -> AuditResult:
    """Audit one cluster: pure apart from reading live state through `live` (and handing work
    to `worker`, a second process; without one, the audit starts its own if it is large)."""
    if worker is None:
        with Worker() as own:
            return audit(desired, live, kustomization, now, own)
    state = AuditState.start(desired, live, kustomization, worker)
    # Nothing the audit makes is cyclic garbage worth collecting mid-run, while it holds millions
    # of containers (every live object, decoded) that each collection would scan again; promoted
    # to the oldest generation afterwards, they are not scanned as young either. Measured with
    # benchmarks/bench_audit.py (20,000 objects, 2 cores): the collector took 1.1 s of 6.9 s
    # running; paused, its deferred scans 0.7 s of 3.9 s; paused and promoted, none.
    with paused_gc(promote=True):
        findings, notes = run_steps(state)
    return AuditResult(
        warnings=state.findings.warnings(),
        cluster=desired.cluster,
        desired_source=desired.source,
        desired_revision=desired.revision,
        findings=findings,
        notes=notes,
        problems=list(live.problems),
        releases=[ReleaseInfo.of(r) for _, r in sorted(state.releases.items())],
        timestamp=time.time() if now is None else now,
    )


def audit_cluster(
    cluster: str,
    live: Live,
    *,
    repo: GitDir | None,
    ref: str | None = None,
    http: httpx.Client | None = None,
    now: float | None = None,
    budget: Budget | None = None,
) -> AuditResult:
    """Find the desired state (checkout, else the Flux artifact), then audit; one worker process
    (started only for a large cluster) parses part of the desired state and compares."""
    ks = find_kustomization(live, cluster)
    applied = str(((ks or {}).get("status") or {}).get("lastAppliedRevision") or "") or None
    with Worker() as worker:
        if repo is not None:
            desired = desired_from_repo(
                repo, cluster, applied_revision=applied, ref=ref, worker=worker
            )
        else:
            desired = desired_from_artifact(live, ks, cluster, applied, http, budget, worker)
        return audit(desired, live, ks, now, worker)


def desired_from_artifact(
    live: Live,
    ks: KubeObject | None,
    cluster: str,
    applied: str | None,
    http: httpx.Client | None,
    budget: Budget | None = None,
    worker: Worker | None = None,
) -> Desired:
    """In a cluster: the rendered tree from source-controller's artifact of the Kustomization's
    GitRepository."""
    if ks is None:
        raise AuditError(
            f"no Flux Kustomization applies ./{cluster}, so there is no artifact to read: "
            "pass --repo DIR with a checkout"
        )
    source = (ks.get("spec") or {}).get("sourceRef") or {}
    key = ObjectKey(
        GIT_REPOSITORY[0],
        GIT_REPOSITORY[1],
        str(source.get("namespace") or meta(ks).get("namespace", "")),
        str(source.get("name", "")),
    )
    repo_obj = live.get(key)
    if repo_obj is None:
        raise AuditError(f"GitRepository {key.namespace}/{key.name} of {ns_name(ks)} not found")
    # httpx loads only for an audit that downloads (start-up of a snapshot audit)
    from audit.sources.artifact import (
        artifact_of,
        check_artifact_url,
        download_artifact,
        read_tarball,
    )

    url, digest, revision = artifact_of(repo_obj)
    check_artifact_url(url, key.namespace, key.name)
    files = read_tarball(download_artifact(url, digest, http, budget=budget))
    path = str((ks.get("spec") or {}).get("path") or f"./{cluster}")
    if applied and parse_revision(applied)[1] == parse_revision(revision)[1]:
        return desired_from_files(files, cluster, path, applied, "flux-applied", (), worker)
    note = (
        f"source-controller's artifact is {revision}, newer than the applied {applied}: audited "
        "against the branch tip"
        if applied
        else f"Kustomization {ns_name(ks)} has applied nothing yet"
    )
    return desired_from_files(files, cluster, path, revision, "rendered-tip", (note,), worker)
