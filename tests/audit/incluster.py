"""A cluster as the nightly audit job sees it, and the job run as the kubelet runs it.

`live_cluster` fills the test API server with what Flux applied from the rendered branch (every
object of `<cluster>/`, labelled by the Kustomization, written by kustomize-controller), what the
Cozystack platform renders from it, the profile's Nodes with their workload labels, the
cluster's Flux GitRepository and Kustomization (applied revision = the tip) and source-controller's
artifact of the branch. `run_job` takes the CronJob from those objects and runs its container's
command, args and env in a child process with the service-account files a kubelet mounts (token,
ca.crt, namespace, in a folder named by GPU_GITOPS_SERVICEACCOUNT_DIR) and
KUBERNETES_SERVICE_HOST/PORT, measuring its wall time and peak RSS (VmHWM, sampled).
"""

from __future__ import annotations

import copy
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git
import yaml

from audit.checks.wiring import cozystack_wiring
from audit.kube.kubeconfig import IN_CLUSTER_DIR
from benchmarks.rss import wait_peak_rss_mib
from renderer.bases import AUDIT_NAME, AUDIT_NAMESPACE
from renderer.bootstrap import flux_objects
from renderer.profile import LoadedProfile
from tests.apiserver import ApiServer
from tests.apiserver.helm import release_secret

__all__ = [
    "JOB_TOKEN",
    "JobRun",
    "cronjob",
    "live_cluster",
    "rendered_files",
    "run_container",
    "run_job",
]

JOB_TOKEN = "gpu-gitops-audit-sa-t0ken"
WORKLOAD_LABEL = "nvidia.com/gpu.workload.config"
PLATFORM_RELEASE = ("cozy-system", "cozystack-platform")
FLUX_LABELS = ("kustomize.toolkit.fluxcd.io/name", "kustomize.toolkit.fluxcd.io/namespace")
PROMETHEUS_RULE_CRD: dict[str, Any] = {
    # The prometheus-operator CRD's identity (monitoring.coreos.com_prometheusrules.yaml,
    # prometheus-operator v0.80): group, names, scope, version; its schema is left open here.
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "prometheusrules.monitoring.coreos.com"},
    "spec": {
        "group": "monitoring.coreos.com",
        "names": {
            "kind": "PrometheusRule",
            "listKind": "PrometheusRuleList",
            "plural": "prometheusrules",
            "singular": "prometheusrule",
            "categories": ["prometheus-operator"],
            "shortNames": ["promrule"],
        },
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}


def rendered_files(repo: git.Repo, tip: str) -> dict[str, bytes]:
    """The rendered branch's tree at `tip`: what source-controller packs into its artifact."""
    blobs = [b for b in repo.commit(tip).tree.traverse() if isinstance(b, git.Blob)]
    return {str(b.path): b.data_stream.read() for b in blobs}


def _applied(files: dict[str, bytes], cluster: str) -> list[dict[str, Any]]:
    """The objects Flux applies from `<cluster>/`: those its kustomization.yaml lists."""
    index = yaml.safe_load(files[f"{cluster}/kustomization.yaml"])
    return [yaml.safe_load(files[f"{cluster}/{name}"]) for name in index["resources"]]


def platform_objects(lp: LoadedProfile, applied: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """On Cozystack, what the platform's Helm releases render from the applied platform Package
    (the kubevirt and gpu-operator Packages of cozystack-platform, the KubeVirt CR of kubevirt;
    predict_packages is checked against Cozystack's own chart by
    tests/renderer/values/test_oracle.py), annotated by Helm, and the release Secrets that record
    them."""
    if lp.profile.spec.platform.type != "cozystack":
        return []
    platform = next(o for o in applied if o["kind"] == "Package")
    version = lp.profile.spec.platform.version or "1.6"
    rendered = copy.deepcopy(cozystack_wiring(platform, None, version).objects)
    releases: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for obj in rendered:
        where = ("cozy-kubevirt", "kubevirt") if obj["kind"] == "KubeVirt" else PLATFORM_RELEASE
        releases.setdefault(where, []).append(obj)
        obj["metadata"]["annotations"] = {
            "meta.helm.sh/release-name": where[1],
            "meta.helm.sh/release-namespace": where[0],
        }
        obj["metadata"].setdefault("labels", {})["app.kubernetes.io/managed-by"] = "Helm"
    secrets = [
        release_secret(
            {
                "name": name,
                "namespace": namespace,
                "info": {},
                "chart": {"metadata": {"name": f"cozy-{name}", "version": "0.0.0"}},
                "config": {},
                "manifest": "".join("---\n" + yaml.safe_dump(o) for o in objs),
                "apply_method": "ssa",
            },
            revision=1,
            status="deployed",
            when="2026-11-01T00:00:00Z",
        )
        for (namespace, name), objs in sorted(releases.items())
    ]
    return [*rendered, *secrets]


def live_cluster(
    server: ApiServer, lp: LoadedProfile, files: dict[str, bytes], tip: str, url: str
) -> list[dict[str, Any]]:
    """Store what Flux applied for the cluster of `lp` from the rendered tree `files` at `tip`;
    the objects stored."""
    flux = flux_objects(lp, url)
    ks = next(o for o in flux.values() if o["kind"] == "Kustomization")
    name, namespace = ks["metadata"]["name"], ks["metadata"]["namespace"]
    objects = _applied(files, lp.name)
    for obj in objects:
        obj.setdefault("metadata", {}).setdefault("labels", {}).update(
            dict(zip(FLUX_LABELS, (name, namespace), strict=True))
        )
    platform = platform_objects(lp, objects)
    wanted = {namespace, *(o["metadata"].get("namespace") for o in objects + platform)} - {None}
    have = {o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"}
    server.store.put_all(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}
        for n in sorted(wanted - have)
    )
    server.store.put_all(objects, manager="kustomize-controller")
    server.store.put_all(platform, manager="helm-controller")
    server.store.put_all(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": node, "labels": {WORKLOAD_LABEL: workload}},
        }
        for node, workload in sorted(lp.profile.spec.nodes.items())
    )
    ks["status"] = {"lastAppliedRevision": f"{lp.profile.spec.flux.branch}@sha1:{tip}"}
    server.store.put_all(flux.values(), manager="kubectl-client-side-apply")
    server.serve_artifact(namespace, name, tip, files)
    return objects


def cronjob(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (job,) = [o for o in objects if o["kind"] == "CronJob" and o["metadata"]["name"] == AUDIT_NAME]
    return job


@dataclass(frozen=True)
class JobRun:
    code: int
    stdout: str
    stderr: str
    seconds: float
    peak_rss_mib: float
    cpu_seconds: float
    """User and system CPU time of the job's process (of the buildah run, in an image)."""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_job(job: dict[str, Any], server: ApiServer, folder: Path, image: str = "") -> JobRun:
    """Run the CronJob's container as a kubelet would, against `server`, with the job's service
    account token: here, or in `image` (see run_container)."""
    server.service_account(JOB_TOKEN, AUDIT_NAMESPACE, AUDIT_NAME)
    return run_container(job, server.url, server.ca.cert_pem, JOB_TOKEN, folder, image)


def run_container(
    job: dict[str, Any], url: str, ca_pem: bytes, token: str, folder: Path, image: str = ""
) -> JobRun:
    """Run the CronJob's container against the API server at `url`: here, or with `image` in a
    buildah container of that image (host network, so the loopback servers are reachable; the
    service-account files mounted where the kubelet mounts them)."""
    pod = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == AUDIT_NAME
    (container,) = pod["containers"]
    mount = folder / "serviceaccount"
    mount.mkdir(parents=True, exist_ok=True)
    (mount / "token").write_text(token)
    (mount / "ca.crt").write_bytes(ca_pem)
    (mount / "namespace").write_text(AUDIT_NAMESPACE)
    host, port = url.removeprefix("https://").rsplit(":", 1)
    env = {
        "KUBERNETES_SERVICE_HOST": host,
        "KUBERNETES_SERVICE_PORT": port,
        # the test API server serves the artifact on loopback, not as source-controller's Service
        "GPU_GITOPS_ARTIFACT_HOSTS": "127.0.0.1",
        **{e["name"]: e["value"] for e in container.get("env") or []},
    }
    argv = [*container["command"], *container["args"]]
    if image:
        mount.chmod(0o755)  # the image's user is not root
        argv = [
            "buildah",
            "run",
            *(f"--env={k}={v}" for k, v in env.items()),
            # where the kubelet mounts it: /var/run is a link to /run in the image, and buildah
            # mounts onto the real path only
            f"--volume={mount}:/run/{IN_CLUSTER_DIR.relative_to('/var/run')}:ro",
            image,
            "--",
            *argv,
        ]
        env = {"PATH": os.environ["PATH"]}
    else:
        env["PATH"] = f"{Path(sys.executable).parent}:/usr/bin:/bin"
        env["GPU_GITOPS_SERVICEACCOUNT_DIR"] = str(mount)
    out, err = folder / "stdout", folder / "stderr"
    start, cpu = time.perf_counter(), _children_cpu()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        child = subprocess.Popen(argv, env=env, cwd=folder, stdout=stdout, stderr=stderr)
        peak = wait_peak_rss_mib(child)
    seconds = time.perf_counter() - start
    # the only child reaped meanwhile: the API server and the artifact server are not children
    # that end here
    cpu = _children_cpu() - cpu
    return JobRun(child.returncode, out.read_text(), err.read_text(), seconds, peak, cpu)
