"""The GPU Packages Cozystack's platform chart renders for the demo clusters, rendered once with
real Helm and committed with their provenance (tests/data/demo-chart/<cluster>.yaml).

    python -m tests.audit.demo_chart     # re-render (needs Helm and the reference files)
    python -m tests.audit.make_demo      # then rewrite the demo snapshots from it

The demo's live Packages (cozystack.kubevirt, cozystack.gpu-operator, cozystack.hami), and so its
live KubeVirt CR, are what the chart makes of the platform values, not what
renderer.values.cozystack.predict_packages says it makes: the audit's wiring check uses that
prediction, and a demo built from it would agree with the check whatever the chart does. The
input is the platform Package the renderer writes for the cluster (what git declares, as Flux
applies it); each file records the digest of those values, and `load` refuses a file whose digest
is not the current render's, so a changed profile or renderer cannot go on using an old chart
render (tests/audit/test_demo_data.py re-renders with Helm and compares the bytes).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from renderer.cozystack_names import GPU_OPERATOR, HAMI, KUBEVIRT, platform_values
from tests.conftest import DATA, extract_helm
from tests.renderer.values.helmchart import RELEASE, RELEASE_NAMESPACE, PlatformChart

__all__ = ["CHART_DIR", "DemoChartError", "load", "render", "values_digest"]

CHART_DIR = DATA / "demo-chart"
VERSION = "1.6"
"""The demo clusters' Cozystack version (their profiles' spec.platform.version)."""
GPU_PACKAGES = (KUBEVIRT, GPU_OPERATOR, HAMI)
_DIGEST = "# values sha256: "


class DemoChartError(Exception):
    """A committed chart render is missing or was made from other values."""


def values_digest(platform: dict[str, Any]) -> str:
    """sha256 of the platform Package's values and variant, as canonical JSON."""
    spec = platform.get("spec") or {}
    doc = {"values": platform_values(platform), "variant": spec.get("variant")}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _helm_version(helm: Path) -> str:
    done = subprocess.run(
        [str(helm), "version", "--short"], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def render(chart: PlatformChart, cluster: str, platform: dict[str, Any]) -> str:
    """The committed file of `cluster`: provenance, then the GPU Packages Helm rendered."""
    spec = platform.get("spec") or {}
    variant = spec.get("variant")
    docs = chart.render(platform_values(platform), VERSION, variant)
    packages = sorted(
        (d for d in docs if d.get("kind") == "Package" and d["metadata"]["name"] in GPU_PACKAGES),
        key=lambda d: str(d["metadata"]["name"]),
    )
    layered = f"-f values-{variant}.yaml " if variant not in (None, "default") else ""
    header = [
        f"# The GPU Packages Cozystack's platform chart renders for the demo cluster {cluster}.",
        f"# Rendered by `python -m tests.audit.demo_chart` with Helm {_helm_version(chart.helm)}:",
        f"#   helm template {RELEASE} <chart> --namespace {RELEASE_NAMESPACE} "
        f"{layered}-f <values> --show-only templates/bundles/iaas.yaml",
        "# <chart>: Cozystack's packages/core/platform at v1.6.2 (bfde94fd: templates/bundles/",
        "#   iaas.yaml, values.yaml) with main's (3c780acd) templates/_helpers.tpl and",
        "#   values-<variant>.yaml, as ../shared/reference/SOURCES.md lists them",
        "#   (tests/renderer/values/helmchart.py). <values>: spec.components.platform.values of",
        f"#   the platform Package the renderer builds for {cluster}; variant {variant}.",
        f"{_DIGEST}{values_digest(platform)}",
    ]
    body = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": packages}, sort_keys=True)
    return "\n".join(header) + "\n" + body


def load(cluster: str, platform: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The committed GPU Packages of `cluster` by name; DemoChartError where the file is missing
    or was rendered from other platform values than `platform`'s."""
    path = CHART_DIR / f"{cluster}.yaml"
    if not path.is_file():
        raise DemoChartError(f"{path} is missing: run python -m tests.audit.demo_chart")
    text = path.read_text(encoding="utf-8")
    recorded = next((line for line in text.splitlines() if line.startswith(_DIGEST)), "")
    if recorded.removeprefix(_DIGEST) != values_digest(platform):
        raise DemoChartError(
            f"{path} was rendered from other platform values than {cluster}'s render: "
            "run python -m tests.audit.demo_chart, then python -m tests.audit.make_demo"
        )
    items = yaml.safe_load(text)["items"]
    return {p["metadata"]["name"]: p for p in items}


def main() -> int:
    from tests import reference
    from tests.audit import make_demo

    found = reference.find()
    if found is None:
        print(f"no reference files: run {reference.FETCH_COMMAND}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        try:
            helm = extract_helm(Path(tmp))
        except LookupError as exc:
            print(exc, file=sys.stderr)
            return 2
        chart = PlatformChart(helm, found, Path(tmp) / "scratch")
        CHART_DIR.mkdir(parents=True, exist_ok=True)
        for cluster, clusters in make_demo.DEMO_CLUSTERS.items():
            platform, _ = make_demo.built(cluster, clusters)
            path = CHART_DIR / f"{cluster}.yaml"
            path.write_text(render(chart, cluster, platform), encoding="utf-8")
            print(f"wrote {path.relative_to(make_demo.ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
