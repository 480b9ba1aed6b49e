"""managedFields attribution: FieldsV1 keys, longest owned prefix, shared and subtree owners."""

from __future__ import annotations

from typing import Any

from audit.findings.attribute import attribute, managed_entries
from kubedata.diff import Item, SetValue


def entry(manager: str, fields: dict[str, Any], op: str = "Update", **extra: Any) -> dict[str, Any]:
    return {
        "manager": manager,
        "operation": op,
        "time": "2026-11-20T15:41:07Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        **extra,
    }


def obj(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "x", "managedFields": list(entries)}}


PCI = ("spec", "configuration", "permittedHostDevices", "pciHostDevices")
KUBEVIRT = obj(
    entry(
        "helm-controller",
        {"f:spec": {"f:configuration": {"f:developerConfiguration": {"f:featureGates": {}}}}},
        op="Apply",
    ),
    entry(
        "kubectl-edit",
        {"f:spec": {"f:configuration": {"f:permittedHostDevices": {"f:pciHostDevices": {}}}}},
    ),
    entry("virt-operator", {"f:status": {".": {}, "f:phase": {}}}, subresource="status"),
)


def names(found: Any) -> list[str]:
    return [e.manager for e in found.managers]


def test_atomic_list_owner_owns_every_item_below_it() -> None:
    entries = managed_entries(KUBEVIRT)
    assert names(attribute(entries, PCI)) == ["kubectl-edit"]
    # a path inside the atomic list: the longest owned prefix is the list
    assert names(attribute(entries, (*PCI, 0, "resourceName"))) == ["kubectl-edit"]
    owner = attribute(entries, PCI).managers[0].public
    assert (owner.manager, owner.operation, owner.time) == (
        "kubectl-edit",
        "Update",
        "2026-11-20T15:41:07Z",
    )


def test_subresource_is_reported() -> None:
    found = attribute(managed_entries(KUBEVIRT), ("status", "phase"))
    assert found.managers[0].public.subresource == "status"


def test_keyed_and_set_items() -> None:
    fields = {
        "f:spec": {
            "f:containers": {
                'k:{"name":"app"}': {
                    ".": {},
                    "f:image": {},
                    "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:name": {}}},
                }
            }
        },
        "f:metadata": {"f:finalizers": {".": {}, 'v:"keep.me"': {}}},
    }
    entries = managed_entries(obj(entry("kubectl-patch", fields)))
    app = Item((("name", "app"),))
    assert names(attribute(entries, ("spec", "containers", app, "image"))) == ["kubectl-patch"]
    port = Item((("containerPort", 80), ("protocol", "TCP")))
    assert names(attribute(entries, ("spec", "containers", app, "ports", port, "name")))
    assert names(attribute(entries, ("metadata", "finalizers", SetValue("keep.me"))))
    other = Item((("name", "other"),))
    assert not attribute(entries, ("spec", "containers", other, "image")).attributed


def test_indexes() -> None:
    entries = managed_entries(obj(entry("m", {"f:spec": {"f:args": {"i:0": {}}}})))
    assert names(attribute(entries, ("spec", "args", 0))) == ["m"]


def test_shared_ownership_reports_every_owner() -> None:
    field: dict[str, Any] = {"f:spec": {"f:replicas": {}}}
    entries = managed_entries(
        obj(entry("kustomize-controller", field, op="Apply"), entry("hpa", field))
    )
    assert names(attribute(entries, ("spec", "replicas"))) == ["kustomize-controller", "hpa"]


def test_a_granular_maps_dot_does_not_own_its_children() -> None:
    entries = managed_entries(
        obj(
            entry("helm-controller", {"f:spec": {"f:configuration": {".": {}, "f:a": {}}}}),
            entry(
                "node-fetch",
                {
                    "f:spec": {
                        "f:configuration": {"f:logVerbosity": {".": {}, "f:virtLauncher": {}}}
                    }
                },
            ),
        )
    )
    verbosity = ("spec", "configuration", "logVerbosity")
    assert names(attribute(entries, verbosity)) == ["node-fetch"]
    assert names(attribute(entries, ("spec", "configuration", "b"))) == []


def test_live_only_subtree_owners() -> None:
    entries = managed_entries(
        obj(entry("node-fetch", {"f:spec": {"f:extra": {"f:a": {}, "f:b": {}}}}))
    )
    assert names(attribute(entries, ("spec", "extra"))) == []
    assert names(attribute(entries, ("spec", "extra"), subtree=True)) == ["node-fetch"]


def test_unattributable_versus_no_managed_fields() -> None:
    found = attribute(managed_entries(KUBEVIRT), ("spec", "imagePullPolicy"))
    assert not found.attributed and found.has_managed_fields
    cleared = attribute(managed_entries({"metadata": {"managedFields": [{}]}}), PCI)
    assert not cleared.attributed and not cleared.has_managed_fields
    absent = attribute(managed_entries({"metadata": {}}), PCI)
    assert not absent.has_managed_fields


def _owners(path: tuple[Any, ...], *entries: dict[str, Any]) -> list[str]:
    return [e.manager for e in attribute(managed_entries(obj(*entries)), path).managers]


def test_the_longest_owned_prefix_wins_over_a_shorter_covering_one() -> None:
    """Every covering entry is no owner: the one owning the deepest prefix is (others are not)."""
    whole_spec = entry("kubectl-create", {"f:spec": {}})
    the_list = entry("kubectl-edit", {"f:spec": {"f:configuration": {"f:list": {}}}})
    path = ("spec", "configuration", "list", 0)
    assert _owners(path, whole_spec, the_list) == ["kubectl-edit"]
    assert _owners(path, the_list, whole_spec) == ["kubectl-edit"]
    assert _owners(("spec", "configuration", "x"), whole_spec, the_list) == ["kubectl-create"]


def test_owning_a_value_whole_and_owning_the_map_itself_are_the_same_depth() -> None:
    """A leaf at the path and a map's `.` at the path both own the path: shared."""
    leaf = entry("kubectl-edit", {"f:spec": {"f:x": {}}})
    itself = entry("helm", {"f:spec": {"f:x": {".": {}, "f:y": {}}}}, op="Apply")
    assert _owners(("spec", "x"), leaf, itself) == ["kubectl-edit", "helm"]


def test_an_entry_without_a_manager_name_is_skipped() -> None:
    nameless = {**entry("x", {"f:spec": {"f:x": {}}}), "manager": ""}
    assert managed_entries(obj(nameless)) == []
    assert _owners(("spec", "x"), nameless) == []
