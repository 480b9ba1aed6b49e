"""Objects for the test server: the real CRDs from the reference folder, and fixture files.

Fixture files are read here independently of `audit.kube.snapshot` (which is under test): plain
`yaml.safe_load_all`/`json.load`, Lists expanded, items of typed lists given apiVersion and kind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

__all__ = ["REFERENCE_CRDS", "load_objects", "load_reference_crds"]

REFERENCE_CRDS = (
    "cozystack/internal/crdinstall/manifests/cozystack.io_packages.yaml",
    "cozystack/internal/crdinstall/manifests/cozystack.io_packagesources.yaml",
    "helm-controller/config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml",
    "kustomize-controller/config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml",
    "source-controller/config/crd/bases/source.toolkit.fluxcd.io_gitrepositories.yaml",
    "source-controller/config/crd/bases/source.toolkit.fluxcd.io_ocirepositories.yaml",
    "gpu-operator/deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml",
)
# The KubeVirt release manifest starts with the kubevirts.kubevirt.io CRD (SOURCES.md: 1-6910).
KUBEVIRT_MANIFEST = "cozystack/packages/system/kubevirt-operator/templates/kubevirt-operator.yaml"


def load_reference_crds(reference: Path) -> list[dict[str, Any]]:
    crds = []
    for rel in REFERENCE_CRDS:
        crds.append(yaml.load((reference / rel).read_text(), Loader=yaml.CSafeLoader))
    first = (reference / KUBEVIRT_MANIFEST).read_text().split("\n---\n", 1)[0]
    crds.append(yaml.load(first, Loader=yaml.CSafeLoader))
    for crd in crds:
        assert crd["kind"] == "CustomResourceDefinition", crd.get("kind")
    return crds


def _expand(doc: dict[str, Any]) -> list[dict[str, Any]]:
    kind = str(doc.get("kind", ""))
    if not (kind.endswith("List") and isinstance(doc.get("items"), list)):
        return [doc]
    items = doc["items"]
    if kind != "List":
        for item in items:
            item.setdefault("apiVersion", doc["apiVersion"])
            item.setdefault("kind", kind[: -len("List")])
    return list(items)


def load_objects(folder: Path) -> list[dict[str, Any]]:
    """Every object in the .yaml/.json files under `folder`."""
    objects: list[dict[str, Any]] = []
    for path in sorted(folder.rglob("*")):
        if path.suffix == ".json":
            docs = [json.loads(path.read_text())]
        elif path.suffix in (".yaml", ".yml"):
            docs = list(yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader))
        else:
            continue
        for doc in docs:
            if doc:
                objects.extend(_expand(doc))
    return objects
