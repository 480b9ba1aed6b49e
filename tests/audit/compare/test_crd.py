"""The served CRD's schema (crd.py): defaults, list semantics and pruned fields, in comparisons
and in whole audits of a snapshot that carries the CRD."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from audit.compare.crd import Schema, schema_of
from audit.compare.pairs import compare_objects
from audit.run import audit
from audit.sources.desired import Desired
from audit.sources.live import Live, SnapshotReader
from audit.sources.packed import PackedObjects
from kubedata.diff import ListRule

CP_CRD = "gpu-operator/deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml"


def widget_crd() -> dict[str, Any]:
    """A small CRD of a kind the built-in tables know nothing about."""
    spec_schema = {
        "type": "object",
        "properties": {
            "replicas": {"type": "integer", "default": 3},
            "listeners": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                },
            },
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}
                    },
                }
            ],
        },
    }


def widget(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": spec,
    }


def test_schema_of_reads_defaults_list_markers_and_known_fields() -> None:
    schema = schema_of(widget_crd(), "example.com/v1")
    assert schema is not None and schema.source == "CRD widgets.example.com v1"
    assert [(d.path, d.value) for d in schema.defaults] == [(("spec", "replicas"), 3)]
    assert schema.list_rule(("spec", "listeners")) == ListRule(
        ("name",), atomic=False, ordered=False
    )
    assert schema.list_rule(("spec", "tags")) == ListRule(None, atomic=False, ordered=False)
    assert schema.keeps(("spec", "listeners", "*", "port"))
    assert schema.keeps(("spec", "extra", "anything", "below"))  # preserve-unknown-fields
    assert not schema.keeps(("spec", "colour"))
    assert schema_of({"spec": {"versions": [{"name": "v1", "storage": True}]}}, "x/v1") is None


def test_served_list_semantics_and_defaults_are_applied() -> None:
    schema = schema_of(widget_crd(), "example.com/v1")
    a, b = {"name": "a", "port": 1}, {"name": "b", "port": 2}
    desired = widget(listeners=[a, b], tags=["x", "y"])
    live = widget(listeners=[b, a], tags=["y", "x"], replicas=3)
    changes = compare_objects(desired, live, schema=schema)
    assert [c.kind for c in changes] == ["reordered", "reordered"]  # noise, noted
    # without the CRD: unknown lists are atomic and ordered, the default is an addition
    kinds = sorted((c.kind, c.pointer) for c in compare_objects(desired, live))
    assert kinds == [
        ("added", "/spec/replicas"),
        ("modified", "/spec/listeners"),
        ("modified", "/spec/tags"),
    ]
    # a changed item of a map list is reported on the item, by key
    changed = widget(listeners=[{"name": "a", "port": 9}, b], tags=["x", "y"])
    [change] = compare_objects(desired, changed, schema=schema)
    assert (change.kind, change.pointer, change.before, change.after) == (
        "modified",
        "/spec/listeners/0/port",
        1,
        9,
    )


def _audit(git: list[dict[str, Any]], live: list[dict[str, Any]]) -> Any:
    desired = Desired("lab1", "profiles-head", "main@sha1:" + "0" * 40, PackedObjects(git))
    return audit(desired, Live(SnapshotReader(copy.deepcopy(live))), None, now=0.0)


def test_a_snapshot_crd_is_used_the_same_way() -> None:
    git = widget(listeners=[{"name": "a", "port": 1}, {"name": "b", "port": 2}], colour="red")
    live = widget(listeners=[{"name": "b", "port": 2}, {"name": "a", "port": 1}], replicas=3)
    result = _audit([git], [live, widget_crd()])
    assert result.complete and result.findings == []
    # `colour` is not in the served schema: pruned on write, noted, not a removal by someone
    [note] = [n for n in result.notes if "does not know" in n]
    assert "Widget default/w /spec/colour (CRD widgets.example.com v1)" in note
    # the same snapshot without the CRD: the tables know nothing of Widget
    result = _audit([git], [live])
    assert sorted(f.path for f in result.findings) == [
        "/spec/colour",
        "/spec/listeners",
        "/spec/replicas",
    ]


@pytest.fixture(scope="module")
def clusterpolicy_crd(reference_dir: Path) -> dict[str, Any]:
    crd: dict[str, Any] = yaml.safe_load((reference_dir / CP_CRD).read_text(encoding="utf-8"))
    return crd


def _v25_like(crd: dict[str, Any]) -> dict[str, Any]:
    """The v26.3.1 CRD without sandboxWorkloads.mode, as CRDs before v26.3 were."""
    older = copy.deepcopy(crd)
    for version in older["spec"]["versions"]:
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
        del spec["properties"]["sandboxWorkloads"]["properties"]["mode"]
    return older


def test_real_clusterpolicy_crd(clusterpolicy_crd: dict[str, Any]) -> None:
    schema = schema_of(clusterpolicy_crd, "nvidia.com/v1")
    assert isinstance(schema, Schema)
    defaults = {d.path: d.value for d in schema.defaults}
    assert defaults[("spec", "sandboxWorkloads", "mode")] == "kubevirt"
    assert defaults[("spec", "cdi", "enabled")] is True  # v26.3.1's, not v24's false
    assert schema.keeps(("spec", "sandboxWorkloads", "mode"))
    older = schema_of(_v25_like(clusterpolicy_crd), "nvidia.com/v1")
    assert older is not None and not older.keeps(("spec", "sandboxWorkloads", "mode"))


def test_a_field_a_stale_crd_prunes_is_not_reported_as_removed(
    clusterpolicy_crd: dict[str, Any],
) -> None:
    rendered: dict[str, Any] = {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": {"sandboxWorkloads": {"enabled": True, "mode": "kata"}},
    }
    live = copy.deepcopy(rendered)
    del live["spec"]["sandboxWorkloads"]["mode"]  # the served CRD pruned it on write
    result = _audit([rendered], [live, _v25_like(clusterpolicy_crd)])
    assert result.findings == []
    assert any("/spec/sandboxWorkloads/mode" in n and "prunes" in n for n in result.notes)
    # the CRD that knows the field: its absence is drift again
    result = _audit([rendered], [live, clusterpolicy_crd])
    [found] = result.findings
    assert (found.type, found.path, found.severity) == (
        "removed",
        "/spec/sandboxWorkloads/mode",
        "high",
    )
