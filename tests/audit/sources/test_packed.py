"""PackedObjects: the desired objects held pickled, given back equal, in order, as new copies."""

from __future__ import annotations

import datetime

from audit.sources.packed import PackedObjects
from kubedata.objects import ObjectKey

CR = {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt", "metadata": {"name": "kubevirt"}}
NODE_POOL = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "pool", "namespace": "tenant-a"},
    # what PyYAML's safe loader also makes of a YAML 1.1 file: not JSON's types
    "data": {"when": datetime.date(2026, 12, 3), 1: b"\x00", "on": True, "ratio": 0.5},
}
CLUSTER_WIDE = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {"name": "x", "namespace": "y"},
}


def test_objects_come_back_equal_and_in_order() -> None:
    packed = PackedObjects([CR, NODE_POOL, CLUSTER_WIDE])
    assert len(packed) == 3
    assert list(packed) == [CR, NODE_POOL, CLUSTER_WIDE]
    assert packed[1] == NODE_POOL
    assert packed[-1] == CLUSTER_WIDE
    assert packed[1:] == [NODE_POOL, CLUSTER_WIDE]
    assert packed == PackedObjects([CR, NODE_POOL, CLUSTER_WIDE])
    assert packed != PackedObjects([CR, NODE_POOL])


def test_keys_are_the_live_objects_keys() -> None:
    packed = PackedObjects([CR, NODE_POOL, CLUSTER_WIDE])
    assert packed.keys == [
        ObjectKey("kubevirt.io", "KubeVirt", "", "kubevirt"),
        ObjectKey("", "ConfigMap", "tenant-a", "pool"),
        ObjectKey("", "Namespace", "", "x"),  # cluster-scoped: the namespace git wrote is not live
    ]


def test_each_read_is_a_new_copy() -> None:
    packed = PackedObjects([NODE_POOL])
    first = packed[0]
    first["data"]["on"] = False
    assert packed[0] == NODE_POOL


def test_of_kind_gives_only_that_kind() -> None:
    packed = PackedObjects([CR, NODE_POOL, CR])
    assert list(packed.of_kind("KubeVirt")) == [CR, CR]
    assert list(packed.of_kind("Package")) == []
