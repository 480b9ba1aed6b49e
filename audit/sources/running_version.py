"""Which release of a CRD's product the cluster runs, where something in the live state says so.

Why this exists: without the served CRD, the audit knows what the API server defaulted only if it
knows the release (crd_tables.py): the object's Helm release records its chart version (the GPU
Operator chart's version is the operator's, `v25.3.2`), the chart's `helm.sh/chart` label says it
too, and virt-operator writes the KubeVirt version it deployed into the KubeVirt CR's status.
Pure: it reads the live object and the decoded releases.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubedata.objects import KubeObject

from audit.compare.crd_tables import KindTable, normal_version
from audit.sources.helm_release import HelmRelease

__all__ = ["CHARTS", "running_version"]

CHARTS = {"gpu-operator": "gpu-operator"}
"""Product -> the upstream chart whose version is the product's release."""


def _meta(obj: KubeObject, field: str) -> Mapping[str, Any]:
    found = (obj.get("metadata") or {}).get(field)
    return found if isinstance(found, dict) else {}


def _from_releases(
    chart: str, obj: KubeObject, releases: Mapping[tuple[str, str], HelmRelease]
) -> tuple[str, str] | None:
    annotations = _meta(obj, "annotations")
    name = annotations.get("meta.helm.sh/release-name")
    namespace = annotations.get("meta.helm.sh/release-namespace")
    own = releases.get((str(namespace), str(name)))
    if own is not None and own.chart_name == chart and own.chart_version:
        return own.chart_version, f"chart {chart} of Helm release {own.namespace}/{own.name}"
    label = str(_meta(obj, "labels").get("helm.sh/chart", ""))
    if label.startswith(f"{chart}-") and label != f"{chart}-":
        return label[len(chart) + 1 :], f"its label helm.sh/chart={label}"
    charted = [r for r in releases.values() if r.chart_name == chart]
    versions = {r.chart_version for r in charted}
    if len(versions) == 1:
        [only] = versions
        named = sorted(f"{r.namespace}/{r.name}" for r in charted)
        return only, f"chart {chart} of Helm release {', '.join(named)}"
    return None


def running_version(
    table: KindTable, obj: KubeObject, releases: Mapping[tuple[str, str], HelmRelease]
) -> tuple[str, str] | None:
    """(release as written, where it was read) of the product serving `obj`'s kind; None when
    nothing in the live state says."""
    chart = CHARTS.get(table.product)
    if chart is not None:
        found = _from_releases(chart, obj, releases)
        if found is not None:
            return normal_version(found[0]), found[1]
    if table.product == "kubevirt":
        status = obj.get("status") or {}
        for field in ("observedKubeVirtVersion", "targetKubeVirtVersion"):
            version = status.get(field) if isinstance(status, dict) else None
            if isinstance(version, str) and version:
                return normal_version(version), f"virt-operator's status.{field}"
    return None
