"""The nightly audit job end to end, as a cluster runs it, for every example cluster.

The profiles get `spec.audit` (alerts on, metrics to a real Pushgateway) and are published; the
test API server holds what Flux applied from the rendered branch, serves its artifact and enforces
the built RBAC for the job's service account. The CronJob's own command, args and env run in a
child process with the service-account files and KUBERNETES_SERVICE_HOST/PORT of a pod: exit 0 on
the clean cluster and exit 0 too once a hand edit is planted (the job runs `--fail-on never`: drift
is in the metrics and the log, not the Job's status), never a denied request, metrics at the
Pushgateway grouped by job and cluster, no token in any output.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpu_gitops.cli import COMMANDS
from renderer.audit_rbac import audit_rbac_rules
from renderer.profile import load_profile
from renderer.publish.publish import publish
from renderer.version import package_version
from tests.apiserver import ApiServer, Store
from tests.apiserver.crds import HELM_REPOSITORY, load_crd, load_crds, load_objects
from tests.audit.audit_helpers import DEMO, EXAMPLES, init_repo
from tests.audit.incluster import (
    JOB_TOKEN,
    PROMETHEUS_RULE_CRD,
    cronjob,
    live_cluster,
    rendered_files,
    run_job,
)
from tests.conftest import DATA
from tests.pushgateway import Pushgateway
from tests.renderer.rbac_paths import uncovered
from tests.renderer.test_audit_rbac import granted

CLUSTERS = sorted(p.name for p in EXAMPLES.iterdir() if (p / "gpu-profile.yaml").is_file())
FLX0 = """apiVersion: gpu-gitops/v1alpha1
kind: GPUProfile
metadata:
  name: flx0
spec:
  platform:
    type: flux
  variant: none
  flux:
    url: ssh://git@git.example.com/platform/gitops.git
"""
"""Plain Flux without GPUs: the variant no example cluster has there (no release Secret read)."""


@pytest.fixture(scope="module")
def published(
    tmp_path_factory: pytest.TempPathFactory, pushgateway: Pushgateway
) -> tuple[Path, str, dict[str, bytes]]:
    """Every example cluster, sto1 (Cozystack, variant none) and flx0 (plain Flux, variant
    none) with the audit job on, published."""
    root = tmp_path_factory.mktemp("e2e")
    flx0 = root / "flx0"
    flx0.mkdir()
    (flx0 / "gpu-profile.yaml").write_text(FLX0)
    sources = {name: EXAMPLES / name for name in CLUSTERS} | {
        "sto1": DEMO / "clusters" / "sto1",
        "flx0": flx0,
    }
    folders = {}
    for name, source in sources.items():
        folder = folders[name] = root / "profiles" / name
        shutil.copytree(source, folder, ignore=shutil.ignore_patterns("flux"))
        profile = folder / "gpu-profile.yaml"
        profile.write_text(
            profile.read_text()
            + f"  audit:\n    pushgateway: {pushgateway.url}\n    alerts: true\n"
        )
    repo_root = root / "repo"
    repo = init_repo(repo_root, folders)
    tip = publish(repo_root).tip
    assert tip
    return repo_root, tip, rendered_files(repo, tip)


def crds() -> list[dict[str, Any]]:
    """The CRDs of the kinds the audit reads (tests/data/crds, from the real ones), KubeVirt's
    VirtualMachine and the PrometheusRule."""
    vms = [o for o in load_objects(DATA / "live") if o["kind"] == "CustomResourceDefinition"]
    return [*load_crds(), load_crd(HELM_REPOSITORY), *vms, PROMETHEUS_RULE_CRD]


@pytest.mark.parametrize("cluster", [*CLUSTERS, "sto1", "flx0"])
def test_the_cronjob_audits_the_cluster_in_cluster(
    cluster: str,
    published: tuple[Path, str, dict[str, bytes]],
    pushgateway: Pushgateway,
    tmp_path: Path,
) -> None:
    repo_root, tip, files = published
    lp = load_profile(repo_root, cluster)
    store = Store()
    store.put_all(crds())
    with ApiServer(store) as server:
        objects = live_cluster(server, lp, files, tip, "ssh://git@example.com/gitops.git")
        job = cronjob(objects)
        clean = run_job(job, server, tmp_path / "clean")
        assert clean.code == 0, clean.stdout + clean.stderr
        report = json.loads(clean.stdout)
        assert (report["complete"], report["findings"]) == (True, [])
        assert report["desiredSource"] == "flux-applied", "read from source-controller's artifact"
        group = (("cluster", cluster), ("instance", ""), ("job", "gpu-gitops-audit"))
        pushed = pushgateway.samples()
        assert pushed[("gpu_gitops_audit_complete", group)] == 1
        assert pushed[("gpu_gitops_audit_last_success_timestamp_seconds", group)] > 0

        # a hand edit of an object git declares: found, attributed; the Job still succeeds
        edited = copy.deepcopy(job)
        edited["spec"]["schedule"] = "0 12 * * *"
        server.store.put(edited, manager="kubectl-edit", keep_server_fields=False)
        drift = run_job(job, server, tmp_path / "drift")
        assert drift.code == 0, drift.stdout + drift.stderr
        (finding,) = json.loads(drift.stdout)["findings"]
        assert (finding["type"], finding["path"]) == ("modified", "/spec/schedule")
        assert finding["managers"][0]["manager"] == "kubectl-edit"
        assert finding["revert"] == "next-reconcile"
        pushed = pushgateway.samples()
        modified = (
            ("cluster", cluster),
            ("instance", ""),
            ("job", "gpu-gitops-audit"),
            ("revert", "next-reconcile"),
            ("severity", finding["severity"]),
            ("type", "modified"),
        )
        assert pushed[("gpu_gitops_audit_findings", modified)] == 1

        # the job was never denied a read, and read only what the built RBAC grants
        assert server.forbidden == []
        paths = sorted({r.path for r in server.requests if r.user.endswith(":gpu-gitops-audit")})
        assert paths and uncovered(granted(objects), paths) == []
        assert granted(objects) == audit_rbac_rules(lp.profile.spec)
        for run in (clean, drift):
            assert JOB_TOKEN not in run.stdout + run.stderr


# -- the same job in the image (image/build.sh; .ci/run builds it and sets GPU_GITOPS_IMAGE) ------

IMAGE = os.environ.get("GPU_GITOPS_IMAGE", "")
BUILDAH_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "STORAGE_DRIVER": os.environ.get("STORAGE_DRIVER", "vfs"),
    "BUILDAH_ISOLATION": os.environ.get("BUILDAH_ISOLATION", "chroot"),
}


def buildah(*args: str) -> str:
    done = subprocess.run(
        ["buildah", *args], env=BUILDAH_ENV, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


WORKER_CHECK = """
from audit.compare.worker import Worker

with Worker() as worker:
    head = b"apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: x, namespace: d}\\n"
    worker.pack({"ams1/x.yaml": head + b"data: {k: v}\\n"}, "image")
    blob = worker.packed().blob(0)
    live = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "d"}}
    worker.send([(7, blob, {**live, "data": {"k": "w"}}, None)])
    print([(n, [c.pointer for c in changes]) for n, changes in worker.collect()])
"""
"""The compare worker a large cluster's job starts (`sys.executable -m audit.compare.worker`):
it parses a desired file and compares a pair, in the image as its user."""


@pytest.fixture
def image_container() -> Iterator[str]:
    if not shutil.which("buildah"):
        pytest.skip("buildah is not installed (apt-get install buildah)")
    if not IMAGE:
        pytest.skip("set GPU_GITOPS_IMAGE to an image built by image/build.sh (.ci/run does)")
    container = buildah("from", "--pull-never", IMAGE)
    yield container
    buildah("rm", container)


def test_the_image_runs_the_cronjob(
    image_container: str,
    published: tuple[Path, str, dict[str, bytes]],
    tmp_path: Path,
) -> None:
    config = json.loads(buildah("inspect", "--type", "image", IMAGE))["OCIv1"]["config"]
    assert config["User"] == "65532:65532", "non-root"
    assert config["Entrypoint"] == ["gpu-gitops"]
    labels = config["Labels"]
    assert labels["org.opencontainers.image.version"] == package_version()
    assert labels["org.opencontainers.image.source"].startswith("https://github.com/")
    version = buildah("run", image_container, "--", "gpu-gitops", "--version")
    assert version == f"gpu-gitops {package_version()}"
    # every command's module is installed, the ones the job does not run included
    every_help = " && ".join(f"gpu-gitops {c} --help >/dev/null" for c in COMMANDS)
    buildah("run", image_container, "--", "sh", "-c", every_help)
    # the image's CronJob test below audits a cluster too small to start it
    worker = buildah("run", image_container, "--", "python", "-c", WORKER_CHECK)
    assert worker == "[(7, ['/data/k'])]"
    compilers = "command -v gcc cc c++ make || true"
    assert buildah("run", image_container, "--", "sh", "-c", compilers) == "", "runtime only"

    repo_root, tip, files = published
    lp = load_profile(repo_root, "ams1")
    store = Store()
    store.put_all(crds())
    with ApiServer(store) as server:
        job = cronjob(live_cluster(server, lp, files, tip, "ssh://git@example.com/gitops.git"))
        run = run_job(job, server, tmp_path, image=image_container)
        assert run.code == 0, run.stdout + run.stderr
        assert json.loads(run.stdout)["complete"] is True
        assert server.forbidden == []
        assert JOB_TOKEN not in run.stdout + run.stderr
