"""Objects for the test server: the CRDs (the project's fixtures, derived from the real ones), and
fixture files.

tests/data/crds/ holds the upstream CRDs of every custom kind the server serves, each with its
source and what was changed named at its top: `description` fields removed (most of each file,
nothing the server reads) and a version schema identical to an earlier one written as a YAML
alias. So the server and the client tests need no upstream file; `python -m tests.apiserver.crds`
regenerates the fixtures from the reference files (tests check they still match, where the
reference files are present). Fixture files are read here independently of `audit.kube.snapshot`
(which is under test): plain `yaml.safe_load_all`/`json.load`, Lists expanded, items of typed
lists given apiVersion and kind.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "CRD_FIXTURES",
    "HELM_REPOSITORY",
    "crd_fixture_texts",
    "load_crd",
    "load_crds",
    "load_objects",
]

CRD_FIXTURES = Path(__file__).resolve().parent.parent / "data" / "crds"
HELM_REPOSITORY = "helmrepositories.source.toolkit.fluxcd.io"
_OPTIONAL = (HELM_REPOSITORY,)
# reference file -> the CRDs taken from it (a manifest holds several objects)
_SOURCES = {
    "cozystack/internal/crdinstall/manifests/cozystack.io_packages.yaml": (
        "packages.cozystack.io",
    ),
    "cozystack/internal/crdinstall/manifests/cozystack.io_packagesources.yaml": (
        "packagesources.cozystack.io",
    ),
    "helm-controller/config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml": (
        "helmreleases.helm.toolkit.fluxcd.io",
    ),
    "kustomize-controller/config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml": (
        "kustomizations.kustomize.toolkit.fluxcd.io",
    ),
    "source-controller/config/crd/bases/source.toolkit.fluxcd.io_gitrepositories.yaml": (
        "gitrepositories.source.toolkit.fluxcd.io",
    ),
    "source-controller/config/crd/bases/source.toolkit.fluxcd.io_ocirepositories.yaml": (
        "ocirepositories.source.toolkit.fluxcd.io",
    ),
    "gpu-operator/deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml": (
        "clusterpolicies.nvidia.com",
    ),
    # the KubeVirt v1.8.4 release manifest Cozystack vendors starts with the kubevirts CRD
    "cozystack/packages/system/kubevirt-operator/templates/kubevirt-operator.yaml": (
        "kubevirts.kubevirt.io",
    ),
    # the Flux v2.8.0 bundle Cozystack embeds: HelmRepository (the auditor lists them)
    "cozystack/internal/fluxinstall/manifests/fluxcd.yaml": (HELM_REPOSITORY,),
}


def load_crd(name: str) -> dict[str, Any]:
    """One CRD of tests/data/crds/, by its name."""
    text = (CRD_FIXTURES / f"{name}.yaml").read_text(encoding="utf-8")
    crd: dict[str, Any] = yaml.load(text, Loader=yaml.CSafeLoader)
    assert crd["kind"] == "CustomResourceDefinition", crd.get("kind")
    return crd


def load_crds() -> list[dict[str, Any]]:
    """The CRDs the test server holds by default: those of tests/data/crds/ but HelmRepository,
    which only the audit job's RBAC test serves."""
    names = [n for names in _SOURCES.values() for n in names if n not in _OPTIONAL]
    return [load_crd(name) for name in names]


def _without_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_without_descriptions(v) for v in node]
    return node


def _shared_schemas(crd: dict[str, Any]) -> dict[str, Any]:
    """A version schema equal to an earlier version's becomes the same object (a YAML alias)."""
    seen: list[Any] = []
    for version in crd["spec"]["versions"]:
        schema = version.get("schema")
        same = next((s for s in seen if s == schema), None)
        if same is not None:
            version["schema"] = same
        else:
            seen.append(schema)
    return crd


def crd_fixture_texts(reference: Path) -> dict[str, str]:
    """file name -> text of each fixture, made from the reference files."""
    from tests.reference import PINNED

    urls = {pin.local: pin.url for pin in PINNED}
    out = {}
    for rel, names in _SOURCES.items():
        docs = yaml.load_all((reference / rel).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        found = {
            d["metadata"]["name"]: d
            for d in docs
            if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"
        }
        for name in names:
            crd = _shared_schemas(_without_descriptions(found[name]))
            head = (
                f"# The CustomResourceDefinition {name} from\n# {urls[rel]}\n"
                "# with every `description` removed and a version schema equal to an earlier\n"
                "# one written as an alias. Made by python -m tests.apiserver.crds; do not edit.\n"
            )
            body = yaml.dump(crd, Dumper=yaml.CSafeDumper, sort_keys=False, width=100)
            out[f"{name}.yaml"] = head + body
    return out


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


def main() -> int:
    """Regenerate tests/data/crds/ from the reference files."""
    from tests.reference import FETCH_COMMAND, find

    reference = find()
    if reference is None:
        print(f"the reference files are missing: {FETCH_COMMAND}", file=sys.stderr)
        return 2
    CRD_FIXTURES.mkdir(exist_ok=True)
    for name, text in crd_fixture_texts(reference).items():
        (CRD_FIXTURES / name).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
