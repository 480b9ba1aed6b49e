"""The nightly audit job as a cluster runs it: wall time and peak memory of its process.

    python -m benchmarks.bench_audit_job [--objects 20000,60000,...] [--clusters ams1,sto1,...]

With several `--objects` counts, the last line is the growth from the first to the last: time and
peak RSS as exponents of the size (time ~ objects ** exponent).

The CronJob's own command, args and env (from the built output of each profile, with
`spec.audit`) run in a child process as the kubelet runs it (tests/audit/incluster.py): service
account files, KUBERNETES_SERVICE_HOST/PORT, `--in-cluster`, the desired state downloaded from
source-controller's artifact. Measured: the child's wall time (interpreter start and imports
included, as a pod pays them), its peak RSS (VmHWM sampled every 20 ms), which sizes the job's
memory request and limit (renderer/model.py AuditResources), and, on the large cluster, the
requests it made and the bytes it read (the API server's answers, as the server counts them,
and the artifact's downloads).
- each demo cluster (the example profiles and sto1) on the test API server in this process,
  RBAC enforced for the job's service account, as Flux applied the rendered branch;
- the benchmark cluster of benchmarks/bench_audit.py (`--objects` live objects: ams1's GPU
  objects and tenant namespaces, 5 % drifted) on the test API server in its own process, its
  desired objects as the rendered branch's artifact; read with an unrestricted token (the tenant
  kinds are not what the job's RBAC grants, since gpu-gitops never renders them), once per
  `--objects` count, then a table of them.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmarks.bench_audit import CLUSTER, ROOT, serve, world
from tests.apiserver.artifacts import ArtifactServer, artifact_status, tarball

__all__ = ["main"]

DEMO_PROFILE = ROOT / "audit" / "demo" / "clusters" / "sto1"
FLUX_URL = "ssh://git@example.com/gitops.git"
SHA = "5" * 40


def _published(workdir: Path, clusters: list[str]) -> tuple[Path, str, dict[str, bytes]]:
    from renderer.publish.publish import publish
    from tests.audit.audit_helpers import init_repo
    from tests.audit.incluster import rendered_files

    folders = {}
    for name in clusters:
        source = DEMO_PROFILE if name == "sto1" else ROOT / "clusters" / name
        folder = folders[name] = workdir / "profiles" / name
        shutil.copytree(source, folder, ignore=shutil.ignore_patterns("flux"))
        profile = folder / "gpu-profile.yaml"
        profile.write_text(profile.read_text() + "  audit: {}\n")
    repo = init_repo(workdir / "repo", folders)
    tip = publish(workdir / "repo").tip
    assert tip
    return workdir / "repo", tip, rendered_files(repo, tip)


def _crds() -> list[dict[str, Any]]:
    from benchmarks.bench_audit import VM_CRD
    from tests.apiserver.crds import HELM_REPOSITORY, load_crd, load_crds
    from tests.audit.incluster import PROMETHEUS_RULE_CRD

    vms = yaml.safe_load(VM_CRD.read_text())
    return [*load_crds(), load_crd(HELM_REPOSITORY), vms, PROMETHEUS_RULE_CRD]


def demo_clusters(workdir: Path, clusters: list[str]) -> list[tuple[str, Any, dict[str, Any]]]:
    """(cluster, the job's run, its CronJob) per demo cluster."""
    from renderer.profile import load_profile
    from tests.apiserver import ApiServer, Store
    from tests.audit.incluster import cronjob, live_cluster, run_job

    root, tip, files = _published(workdir, clusters)
    runs = []
    for name in clusters:
        store = Store()
        store.put_all(_crds())
        with ApiServer(store) as server:
            objects = live_cluster(server, load_profile(root, name), files, tip, FLUX_URL)
            job = cronjob(objects)
            run = run_job(job, server, workdir / f"run-{name}")
            assert run.code == 0 and not server.forbidden, run.stdout + run.stderr
            runs.append((name, run, job))
    return runs


@dataclass
class LargeRun:
    run: Any
    """The job's run (tests/audit/incluster.py JobRun)."""
    live: int
    desired: int
    requests: int
    """To the API server and to the artifact server."""
    bytes_read: int
    """Bodies of the answers of both."""


def _served(log: Path) -> tuple[int, int]:
    """(requests, body bytes) the test API server said it served when it stopped."""
    found = re.search(r"served (\d+) requests, (\d+) body bytes", log.read_text())
    if found is None:
        raise RuntimeError(f"the test API server did not say what it served: {log.read_text()}")
    return int(found[1]), int(found[2])


def large_cluster(workdir: Path, objects: int, job: dict[str, Any]) -> LargeRun:
    """The job on bench_audit's cluster of `objects` live objects."""
    from renderer.profile import PROFILE_FILE
    from tests.audit.incluster import run_container

    live, desired = world(objects, 0.05)
    files = {
        f"{CLUSTER}/{i:06d}.yaml": yaml.dump(o, Dumper=yaml.CSafeDumper).encode()
        for i, o in enumerate(desired)
    }
    files[f"{CLUSTER}/kustomization.yaml"] = yaml.safe_dump(
        {"resources": sorted(p.split("/", 1)[1] for p in files)}
    ).encode()
    profile = ROOT / "clusters" / CLUSTER
    for name in (PROFILE_FILE, "platform.yaml"):
        files[f"{CLUSTER}/source/{name}"] = (profile / name).read_bytes()
    artifacts = ArtifactServer()
    try:
        for obj in live:
            kind, meta = obj["kind"], obj["metadata"]
            if kind == "GitRepository":
                ns, name = meta["namespace"], meta["name"]
                data = tarball(files)
                url = artifacts.publish(ns, name, SHA, data)
                obj["status"] = {
                    **(obj.get("status") or {}),
                    "artifact": artifact_status(url, f"rendered@sha1:{SHA}", data, ""),
                }
            elif kind == "Kustomization" and obj["spec"].get("path") == f"./{CLUSTER}":
                obj["status"]["lastAppliedRevision"] = f"rendered@sha1:{SHA}"
        here = workdir / f"large-{objects}"
        here.mkdir()
        with serve(live, here) as kubeconfig:
            config = yaml.safe_load(kubeconfig.read_text())
            cluster = config["clusters"][0]["cluster"]
            ca = base64.b64decode(cluster["certificate-authority-data"])
            token = config["users"][0]["user"]["token"]
            run = run_container(job, cluster["server"], ca, token, here)
        requests, served = _served(here / "apiserver.log")
        downloads = len(artifacts.requests)
    finally:
        artifacts.stop()
    return LargeRun(
        run, len(live), len(desired), requests + downloads, served + downloads * len(data)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--objects", default="20000", help="live objects of the large cluster, comma-separated"
    )
    parser.add_argument(
        "--clusters",
        default="ams1,ber1,edge1,fra1,lab1,par1,sto1",
        help="demo clusters, comma-separated",
    )
    args = parser.parse_args(argv)
    clusters = args.clusters.split(",")
    if CLUSTER not in clusters:
        parser.error(f"--clusters must include {CLUSTER}: its CronJob runs on the large cluster")
    counts = [int(n) for n in args.objects.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-audit-job-") as tmp:
        runs = demo_clusters(Path(tmp), clusters)
        for name, run, _ in runs:
            print(
                f"job on {name}: exit {run.code}, {run.seconds:.2f} s, peak RSS "
                f"{run.peak_rss_mib:.0f} MiB"
            )
        job = next(job for name, _, job in runs if name == CLUSTER)
        for count in counts:
            large = large_cluster(Path(tmp), count, job)
            if not large.run.stdout:
                raise RuntimeError(f"the job printed no report: {large.run.stderr[-2000:]}")
            report = json.loads(large.run.stdout)
            print(
                f"job on the {large.live}-object cluster ({large.desired} desired; "
                f"{len(report['findings'])} findings; complete={report['complete']}): exit "
                f"{large.run.code}, {large.run.seconds:.2f} s (CPU {large.run.cpu_seconds:.2f} s), "
                f"peak RSS {large.run.peak_rss_mib:.0f} MiB, {large.requests} requests, "
                f"{large.bytes_read / 2**20:.0f} MiB read",
                flush=True,
            )
            rows.append((large, report))
    print(
        f"\n{'objects':>8} {'desired':>8} {'findings':>8} {'complete':>8} {'seconds':>8} "
        f"{'peak RSS MiB':>12} {'requests':>8} {'MiB read':>8}"
    )
    for large, report in rows:
        print(
            f"{large.live:>8} {large.desired:>8} {len(report['findings']):>8} "
            f"{report['complete']!s:>8} {large.run.seconds:>8.1f} {large.run.peak_rss_mib:>12.0f} "
            f"{large.requests:>8} {large.bytes_read / 2**20:>8.0f}"
        )
    if len(rows) > 1:
        print(_growth(rows[0][0], rows[-1][0]))
    return 0


GROWTH_EXPONENT = 1.05
"""Time ~ objects ** exponent from 20,000 to 200,000 objects, at most (issue 25)."""


def _growth(small: LargeRun, large: LargeRun) -> str:
    """How time and memory grow from the first size to the last, as exponents of the size."""
    size = large.live / small.live
    time = large.run.seconds / small.run.seconds
    cpu = large.run.cpu_seconds / small.run.cpu_seconds
    memory = large.run.peak_rss_mib / small.run.peak_rss_mib
    exponent = math.log(time) / math.log(size)
    verdict = "met" if exponent <= GROWTH_EXPONENT else "MISSED"
    scope = (
        ""
        if (small.live, large.live) == (20000, 200000)
        else " (it is for 20000 -> 200000 objects)"
    )
    return (
        f"growth {small.live} -> {large.live} objects: time x{time:.1f} (exponent "
        f"{exponent:.2f}; target <= {GROWTH_EXPONENT}{scope}: {verdict}), the job's CPU "
        f"x{cpu:.1f} (exponent {math.log(cpu) / math.log(size):.2f}), peak RSS x{memory:.1f} "
        f"(exponent {math.log(memory) / math.log(size):.2f})"
    )


if __name__ == "__main__":
    sys.exit(main())
