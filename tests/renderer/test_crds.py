"""Everything the renderer builds, checked against the real CRDs in ../shared/reference.

The validator (renderer/crds.py) is stricter than an API server on purpose: what a server
would prune silently (unknown fields, nulls, status) is an error here. The JSON Schema the
package ships for profiles must accept every example profile.
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from renderer.cozystack_names import PLATFORM_PACKAGE
from renderer.crds import Registry, namespace_kind
from renderer.rules.profile_schema import profile_schema
from renderer.values.cozystack import effective_values, predict_packages

REPO_ROOT = Path(__file__).resolve().parents[2]
PROFILES = {
    p.parent.name: yaml.safe_load(p.read_text(encoding="utf-8"))
    for p in sorted((REPO_ROOT / "clusters").glob("*/gpu-profile.yaml"))
}
CLUSTERS = sorted(PROFILES)
COZYSTACK = [n for n in CLUSTERS if PROFILES[n]["spec"]["platform"]["type"] == "cozystack"]
PACKAGE_CRD = "internal/crdinstall/manifests/cozystack.io_packages.yaml"
# First file naming a kind wins: the controllers' own CRDs before the Flux bundle Cozystack embeds.
CRD_FILES = (
    f"cozystack/{PACKAGE_CRD}",  # Package (byte-identical in v1.6.2, see below)
    "helm-controller/config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml",
    "kustomize-controller/config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml",
    "source-controller/config/crd/bases/source.toolkit.fluxcd.io_gitrepositories.yaml",
    "cozystack/internal/fluxinstall/manifests/fluxcd.yaml",  # HelmRepository (Flux v2.8.0)
    # KubeVirt v1.8.4 release manifest: the CRD kubevirts.kubevirt.io is one of its documents
    "cozystack/packages/system/kubevirt-operator/templates/kubevirt-operator.yaml",
)


@pytest.fixture(scope="module")
def registry(reference_dir: Path) -> Registry:
    return Registry.from_files([reference_dir / f for f in CRD_FILES], extra=[namespace_kind()])


def test_registry_has_the_kinds_we_emit(registry: Registry) -> None:
    for key in [
        ("cozystack.io/v1alpha1", "Package"),
        ("helm.toolkit.fluxcd.io/v2", "HelmRelease"),
        ("source.toolkit.fluxcd.io/v1", "HelmRepository"),
        ("source.toolkit.fluxcd.io/v1", "GitRepository"),
        ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"),
        ("kubevirt.io/v1", "KubeVirt"),
        ("v1", "Namespace"),
    ]:
        assert key in registry.kinds, key
    assert registry.kinds[("helm.toolkit.fluxcd.io/v2", "HelmRelease")].source.startswith("helm.")


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_built_output_matches_crds(cluster: str, built, registry: Registry) -> None:
    _, objects = built[cluster]
    assert objects, f"{cluster}: nothing built"
    errors = [e for obj in objects for e in registry.errors(obj)]
    assert errors == []


@pytest.mark.parametrize("cluster", COZYSTACK)
def test_predicted_packages_match_crd(cluster: str, built, registry: Registry) -> None:
    lp, objects = built[cluster]
    (platform,) = [o for o in objects if o["metadata"]["name"] == PLATFORM_PACKAGE]
    values = platform["spec"]["components"]["platform"]["values"]
    version = lp.profile.spec.platform.version
    predicted = predict_packages(effective_values(values, platform["spec"].get("variant")), version)
    assert predicted
    assert [e for obj in predicted for e in registry.errors(obj)] == []


def test_package_crd_is_the_same_in_v1_6_2(reference_dir: Path) -> None:
    """One Package schema serves "1.5", "1.6" and "main"; if this fails, validate per version."""
    main = (reference_dir / "cozystack" / PACKAGE_CRD).read_bytes()
    assert (reference_dir / "cozystack@v1.6.2" / PACKAGE_CRD).read_bytes() == main


# --- the shipped profile JSON Schema ---------------------------------------------------------


@pytest.fixture(scope="module")
def profile_validator() -> Any:
    schema = profile_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_profile_schema_accepts_example(cluster: str, profile_validator: Any) -> None:
    path = REPO_ROOT / "clusters" / cluster / "gpu-profile.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert [e.message for e in profile_validator.iter_errors(doc)] == []


def test_profile_schema_rejects_a_misspelt_field(profile_validator: Any) -> None:
    path = REPO_ROOT / "clusters" / CLUSTERS[0] / "gpu-profile.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["spec"]["varient"] = doc["spec"].pop("variant")
    assert not profile_validator.is_valid(doc)


# --- the validator can fail ------------------------------------------------------------------

PACKAGE: dict[str, Any] = {
    "apiVersion": "cozystack.io/v1alpha1",
    "kind": "Package",
    "metadata": {"name": "cozystack.kubevirt", "annotations": {"helm.sh/resource-policy": "keep"}},
    "spec": {"variant": "default", "components": {"kubevirt": {"values": {"any": [{"x": None}]}}}},
}
HELM_RELEASE: dict[str, Any] = {
    "apiVersion": "helm.toolkit.fluxcd.io/v2",
    "kind": "HelmRelease",
    "metadata": {"name": "gpu-operator", "namespace": "gpu-operator"},
    "spec": {
        "interval": "10m",
        "chart": {
            "spec": {
                "chart": "gpu-operator",
                "sourceRef": {"kind": "HelmRepository", "name": "nvidia"},
            }
        },
        "driftDetection": {"mode": "enabled"},
        "values": {"driver": {"enabled": False}},
    },
}
KUBEVIRT: dict[str, Any] = {
    "apiVersion": "kubevirt.io/v1",
    "kind": "KubeVirt",
    "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
    "spec": {
        "configuration": {
            "cpuRequest": "100m",
            "developerConfiguration": {"featureGates": ["HostDevices"]},
            "permittedHostDevices": {
                "pciHostDevices": [
                    {
                        "pciVendorSelector": "10DE:2BB5",
                        "resourceName": "nvidia.com/X",
                        "externalResourceProvider": True,
                    }
                ]
            },
        }
    },
}
NAMESPACE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {"name": "gpu-operator"},
}


def _set(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    *parents, leaf = path.split(".")
    node: Any = out
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if value is _DELETE:
        del node[leaf]
    else:
        node[leaf] = value
    return out


_DELETE = object()


@pytest.mark.parametrize(
    "obj", [PACKAGE, HELM_RELEASE, KUBEVIRT, NAMESPACE], ids=lambda o: o["kind"]
)
def test_valid_objects_pass(obj: dict[str, Any], registry: Registry) -> None:
    assert registry.errors(obj) == []


@pytest.mark.parametrize(
    ("obj", "path", "value", "expected"),
    [
        # unknown fields, which a server would prune without a word
        pytest.param(
            PACKAGE, "spec.varient", "default", "'varient' was unexpected", id="unknown-field"
        ),
        pytest.param(
            HELM_RELEASE,
            "spec.driftDetection.mod",
            "warn",
            "'mod' was unexpected",
            id="unknown-nested",
        ),
        pytest.param(
            KUBEVIRT,
            "spec.configuration.permittedHostDevices.pciHostDevices.0.externalResource",
            True,
            "'externalResource' was unexpected",
            id="unknown-in-list-item",
        ),
        pytest.param(PACKAGE, "status", {"conditions": []}, "'status' was unexpected", id="status"),
        pytest.param(PACKAGE, "metadata.uid", "x", "'uid' was unexpected", id="server-metadata"),
        # wrong types and values
        pytest.param(PACKAGE, "spec.variant", 5, "5 is not of type 'string'", id="wrong-type"),
        pytest.param(HELM_RELEASE, "spec.interval", "10 minutes", "does not match", id="pattern"),
        pytest.param(HELM_RELEASE, "spec.driftDetection.mode", "on", "is not one of", id="enum"),
        pytest.param(
            KUBEVIRT,
            "spec.configuration.cpuRequest",
            True,
            "is not of type",
            id="int-or-string-bool",
        ),
        pytest.param(PACKAGE, "spec.variant", None, "None is not of type", id="null-not-nullable"),
        pytest.param(
            KUBEVIRT,
            "spec.configuration.permittedHostDevices.pciHostDevices.0.resourceName",
            _DELETE,
            "'resourceName' is a required property",
            id="required",
        ),
        pytest.param(
            KUBEVIRT,
            "spec.configuration.tlsConfiguration",
            {"ciphers": ["TLS_AES_128_GCM_SHA256"] * 2},
            "duplicate",
            id="list-set-duplicate",
        ),
        pytest.param(
            KUBEVIRT,
            "spec.configuration.supportContainerResources",
            [{"type": "hotplug-disk", "resources": {}}] * 2,
            "duplicate list-map key",
            id="list-map-duplicate",
        ),
        # CEL rules
        pytest.param(
            HELM_RELEASE,
            "spec.chartRef",
            {"kind": "OCIRepository", "name": "x"},
            "either chart or chartRef must be set",
            id="cel-chart-and-chartRef",
        ),
        # metadata by scope
        pytest.param(
            PACKAGE,
            "metadata.namespace",
            "cozy-system",
            "'namespace' was unexpected",
            id="ns-on-cluster-scoped",
        ),
        pytest.param(
            HELM_RELEASE,
            "metadata.namespace",
            _DELETE,
            "'namespace' is a required",
            id="no-ns-on-namespaced",
        ),
        pytest.param(NAMESPACE, "metadata.name", "GPU.ops", "does not match", id="namespace-name"),
        pytest.param(
            NAMESPACE, "metadata.labels", {"a": "b c"}, "does not match", id="label-value"
        ),
        pytest.param(
            PACKAGE, "apiVersion", "cozystack.io/v1beta1", "no schema", id="unknown-version"
        ),
    ],
)
def test_validator_catches(obj, path: str, value: Any, expected: str, registry: Registry) -> None:
    errors = registry.errors(_set(obj, path, value))
    assert errors, f"accepted {path}={value!r}"
    assert any(expected in e for e in errors), errors


def test_int_or_string_accepts_both(registry: Registry) -> None:
    assert registry.errors(_set(KUBEVIRT, "spec.configuration.cpuRequest", 2)) == []


def test_unknown_cel_rule_is_an_error(registry: Registry) -> None:
    kind = registry.kinds[("helm.toolkit.fluxcd.io/v2", "HelmRelease")]
    openapi = copy.deepcopy(kind.openapi)
    openapi["properties"]["spec"]["x-kubernetes-validations"].append(
        {"rule": "self.interval != '1s'", "message": "no"}
    )
    changed = dataclasses.replace(kind, openapi=openapi, _validator=None)
    assert any("not in renderer.crds.CEL_RULES" in e for e in changed.errors(HELM_RELEASE))
