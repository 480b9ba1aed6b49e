"""The keyed differ: pointers, keyed and atomic lists, injected fields, scope; agrees with
DeepDiff."""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from typing import Any

from deepdiff import DeepDiff

from audit.compare.normalize import normalize
from audit.compare.pairs import compare_normalized, compare_objects, unchanged
from audit.compare.patterns import compile_pattern
from kubedata.diff import Item, show_path


def deploy(containers: list[dict[str, Any]], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "app", "namespace": "default", **meta},
        "spec": {"template": {"spec": {"containers": containers}}},
    }


def kubevirt(pci: list[dict[str, Any]], gates: list[str], **config: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "cozy-kubevirt"},
        "spec": {
            "configuration": {
                "developerConfiguration": {"featureGates": gates},
                "permittedHostDevices": {"pciHostDevices": pci},
                **config,
            }
        },
    }


def dev(selector: str, name: str) -> dict[str, Any]:
    return {"pciVendorSelector": selector, "resourceName": name, "externalResourceProvider": True}


A, B, C = dev("10DE:0001", "nvidia.com/A"), dev("10DE:0002", "nvidia.com/B"), dev("10DE:0003", "c")


def test_equal_objects_take_the_fast_path() -> None:
    obj = deploy([{"name": "a", "image": "a:1"}])
    assert compare_objects(obj, copy.deepcopy(obj)) == []


def test_keyed_list_reorder_is_only_a_reorder() -> None:
    a, b = {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}
    changes = compare_objects(deploy([a, b]), deploy([b, a]))
    assert [(c.kind, c.pointer) for c in changes] == [
        ("reordered", "/spec/template/spec/containers")
    ]


def test_keyed_items_are_matched_by_key_and_pointed_at_in_the_live_list() -> None:
    a = {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]}
    b = {"name": "b", "image": "b:1"}
    live_a = {**a, "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]}
    changes = compare_objects(deploy([a, b]), deploy([{**b, "image": "b:2"}, live_a]))
    got = {(c.kind, c.pointer) for c in changes if c.kind != "reordered"}
    assert got == {
        ("modified", "/spec/template/spec/containers/0/image"),
        ("added", "/spec/template/spec/containers/1/env/1"),
    }
    added = next(c for c in changes if c.kind == "added")
    assert added.segments[4] == Item((("name", "a"),))
    assert show_path(added.segments).endswith("containers[name=a].env[name=Y]")


def test_container_ports_are_keyed_with_the_protocol_default() -> None:
    d = deploy([{"name": "a", "image": "a:1", "ports": [{"containerPort": 80}]}])
    live = deploy(
        [{"name": "a", "image": "a:1", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]
    )
    assert compare_objects(d, live) == []


def test_atomic_list_edit_is_one_change_on_the_list_with_item_details() -> None:
    changes = compare_objects(kubevirt([A, B], ["GPU"]), kubevirt([A, B, C], ["GPU"]))
    assert len(changes) == 1
    change = changes[0]
    assert change.kind == "modified"
    assert change.pointer == "/spec/configuration/permittedHostDevices/pciHostDevices"
    assert change.details == ("added 10DE:0003 -> c",)
    changed = compare_objects(
        kubevirt([A, B], ["GPU"]), kubevirt([A, dev("10DE:0002", "x")], ["GPU"])
    )
    assert changed[0].details == ("changed 10DE:0002 -> nvidia.com/B to 10DE:0002 -> x",)


def test_unordered_atomic_lists_reorder_quietly() -> None:
    changes = compare_objects(
        kubevirt([A, B], ["GPU", "HostDevices"]), kubevirt([B, A], ["HostDevices", "GPU"])
    )
    assert {c.kind for c in changes} == {"reordered"}
    gates = compare_objects(kubevirt([A], ["GPU"]), kubevirt([A], ["GPU", "HostDevices"]))
    assert [(c.kind, c.details) for c in gates] == [("modified", ("added HostDevices",))]


def test_unknown_lists_are_atomic_and_ordered() -> None:
    d = kubevirt([A], ["GPU"], evictionStrategies=["a", "b"])
    changes = compare_objects(d, kubevirt([A], ["GPU"], evictionStrategies=["b", "a"]))
    assert [c.kind for c in changes] == ["modified"]


def test_injected_metadata_counts_only_when_declared() -> None:
    d = deploy([], labels={"team": "gpu"})
    live = deploy(
        [],
        labels={"team": "gpu", "kustomize.toolkit.fluxcd.io/name": "x", "extra": "1"},
        annotations={"meta.helm.sh/release-name": "r", "deployment.kubernetes.io/revision": "3"},
        ownerReferences=[{"uid": "u"}],
        finalizers=["f"],
    )
    assert [(c.kind, c.pointer) for c in compare_objects(d, live)] == [
        ("added", "/metadata/labels/extra")
    ]
    declared = deploy([], labels={"kustomize.toolkit.fluxcd.io/name": "y"})
    assert [c.kind for c in compare_objects(declared, live) if "kustomize" in c.pointer] == [
        "modified"
    ]


def test_server_populated_fields_are_ignored_unless_declared() -> None:
    svc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "d"},
        "spec": {"ports": [{"port": 80}]},
    }
    live = copy.deepcopy(svc)
    live["spec"].update(clusterIP="10.0.0.1", clusterIPs=["10.0.0.1"], type="ClusterIP")
    live["spec"]["ports"][0].update(protocol="TCP", targetPort=80)
    assert compare_objects(svc, live) == []
    svc["spec"]["clusterIP"] = "10.0.0.2"
    assert [c.pointer for c in compare_objects(svc, live)] == ["/spec/clusterIP"]


def test_scope_limits_the_comparison() -> None:
    scope = (compile_pattern("spec/configuration/permittedHostDevices"),)
    d = kubevirt([A], ["GPU"])
    live = kubevirt([A, B], ["GPU", "X"], logVerbosity={"virtLauncher": 4})
    assert [c.pointer for c in compare_objects(d, live, scope)] == [
        "/spec/configuration/permittedHostDevices/pciHostDevices"
    ]


def test_live_only_subtree_is_reported_once_at_its_top() -> None:
    live = kubevirt([A], ["GPU"], logVerbosity={"virtLauncher": 4, "virtHandler": 2})
    changes = compare_objects(kubevirt([A], ["GPU"]), live)
    assert [(c.kind, c.pointer, c.after) for c in changes] == [
        ("added", "/spec/configuration/logVerbosity", {"virtLauncher": 4, "virtHandler": 2})
    ]


_KEYED, _SET, _ATOMIC = "env", "ciphers", "atoms"
"""A keyed list (by name), a set and an atomic list, by the field names LIST_RULES gives them."""
_SCALARS = (1, "x", True, 2.5, "y", 7)


def _random_tree(rng: random.Random, depth: int = 0) -> Any:
    """A map of maps, scalars and the three kinds of list; lists are never empty (an empty list
    is a value only where git declares it: test_an_empty_list_git_declares_is_a_value)."""
    if depth > 3 or rng.random() < 0.3:
        return rng.choice(_SCALARS)
    out: dict[str, Any] = {f"k{i}": _random_tree(rng, depth + 1) for i in range(rng.randint(1, 4))}
    if rng.random() < 0.7:
        name = rng.choice([_KEYED, _SET, _ATOMIC])
        out[name] = _random_list(rng, name, depth + 1)
    return out


def _random_list(rng: random.Random, name: str, depth: int) -> list[Any]:
    n = rng.randint(1, 4)
    if name == _KEYED:
        return [{"name": f"n{i}", "value": _random_tree(rng, depth + 1)} for i in range(n)]
    if name == _SET:
        return rng.sample(["a", "b", "c", "d", "e"], n)
    return [rng.choice(_SCALARS) for _ in range(n)]


def _mutate(rng: random.Random, tree: Any, name: str = "") -> Any:
    if isinstance(tree, list) and rng.random() >= 0.2:
        return _mutate_list(rng, tree, name)
    if not isinstance(tree, dict) or rng.random() < 0.2:
        return rng.choice([3, "z", False])
    out = dict(tree)
    lists = [k for k, v in out.items() if isinstance(v, list)]
    key = rng.choice(lists if lists and rng.random() < 0.6 else list(out))
    roll = rng.random()
    if roll < 0.2:
        del out[key]  # a list among them: deleted live
    elif roll < 0.3:
        out[f"new{rng.randint(0, 9)}"] = "n"
    else:
        out[key] = _mutate(rng, out[key], key)
    return out


def _mutate_list(rng: random.Random, items: list[Any], name: str) -> list[Any]:
    out = list(items)
    roll = rng.random()
    if roll < 0.25:
        out.pop(rng.randrange(len(out)))
    elif roll < 0.5:
        out.insert(rng.randint(0, len(out)), _new_item(rng, name, out))
    elif roll < 0.75:
        rng.shuffle(out)
    elif name == _KEYED:
        i = rng.randrange(len(out))
        out[i] = {**out[i], "value": _mutate(rng, out[i]["value"])}
    else:
        out[rng.randrange(len(out))] = _new_item(rng, name, out)
    return out


def _new_item(rng: random.Random, name: str, present: list[Any]) -> Any:
    if name == _KEYED:
        taken = {item["name"] for item in present}
        return {"name": next(f"m{i}" for i in range(99) if f"m{i}" not in taken), "value": "v"}
    if name == _SET:
        return next(v for v in "fghij" if v not in present)
    return rng.choice(["z", 9, False])


def _as_deepdiff_sees(tree: Any, name: str = "") -> Any:
    """The tree as server-side apply compares it, in plain maps DeepDiff walks: a keyed list is a
    map by key, a set a map by value, an atomic list one value."""
    if isinstance(tree, dict):
        return {k: _as_deepdiff_sees(v, k) for k, v in tree.items()}
    if isinstance(tree, list) and name == _KEYED:
        return {f"[name={item['name']}]": _as_deepdiff_sees(item) for item in tree}
    if isinstance(tree, list) and name == _SET:
        return {f"[value={item}]": item for item in tree}
    if isinstance(tree, list):
        return "atomic list " + json.dumps(tree)
    return tree


def _pointer(before: Any, after: Any, path: list[Any]) -> str:
    """The JSON pointer of a DeepDiff path through `_as_deepdiff_sees`: list items by their index
    in the live list, or in the declared one when only it has them (as the differ points)."""
    out = ""
    for step in path:
        if isinstance(step, str) and step.startswith("["):
            items_after = after if isinstance(after, list) else []
            items_before = before if isinstance(before, list) else []
            index = next((j for j, x in enumerate(items_after) if _names(step, x)), None)
            where = items_after if index is not None else items_before
            if index is None:
                index = next(i for i, x in enumerate(items_before) if _names(step, x))
            out += f"/{index}"
            before = next((x for x in items_before if _names(step, x)), None)
            after = where[index] if where is items_after else None
        else:
            out += f"/{step}"
            before = before.get(step) if isinstance(before, dict) else None
            after = after.get(step) if isinstance(after, dict) else None
    return out


def _names(step: str, item: Any) -> bool:
    """Whether a list item is the one a `_as_deepdiff_sees` key stands for."""
    if step.startswith("[name="):
        return isinstance(item, dict) and f"[name={item.get('name')}]" == step
    return f"[value={item}]" == step


def _deepdiff_paths(a: Any, b: Any) -> set[str]:
    # threshold 0: a map whose only key changed is a removal and an addition, not one new value
    diff = DeepDiff(
        _as_deepdiff_sees(a), _as_deepdiff_sees(b), view="tree", threshold_to_diff_deeper=0
    )
    out = set()
    for kind in (
        "values_changed",
        "type_changes",
        "dictionary_item_added",
        "dictionary_item_removed",
    ):
        for level in diff.get(kind, []):
            out.add(_pointer(a, b, level.path(output_format="list")))
    return out


def test_finds_the_same_changes_as_deepdiff_on_random_trees_with_lists() -> None:
    """Maps, keyed lists, sets and atomic lists, edited, reordered and deleted at random: the
    differ's changes (reorders aside: noise, noted) are DeepDiff's, list semantics applied."""
    rng = random.Random(20261128)
    kinds: Counter[str] = Counter()
    for _ in range(600):
        spec = {"s": _random_tree(rng)}
        mutated = {"s": _mutate(rng, spec["s"])}
        d = {"apiVersion": "x/v1", "kind": "Thing", "metadata": {"name": "a"}, "spec": spec}
        live = {**d, "spec": mutated}
        changes = compare_normalized(d, live)
        ours = {c.pointer for c in changes if c.kind != "reordered"}
        theirs = {"/spec" + p for p in _deepdiff_paths(spec, mutated)}
        assert ours == theirs, (spec, mutated)
        kinds.update(f"{c.kind} {_where(c.field_path)}" for c in changes)
    # every kind of change happened to every kind of list (a property that never saw one proves
    # nothing about it), and declared lists were deleted live
    expected = [
        *(f"{kind} keyed" for kind in ("added", "removed", "modified")),
        "reordered list env",
        *(f"{kind} set" for kind in ("added", "removed")),
        "reordered list ciphers",
        "modified list atoms",
        *(f"removed list {name}" for name in (_KEYED, _SET, _ATOMIC)),
    ]
    assert [k for k in expected if kinds[k] < 5] == [], kinds


def _where(field_path: tuple[str, ...]) -> str:
    """`list NAME` for a change of a whole list, the kind of list a change lies in, else `map`."""
    lists = [i for i, name in enumerate(field_path) if name in (_KEYED, _SET, _ATOMIC)]
    if not lists:
        return "map"
    name = field_path[lists[-1]]
    if lists[-1] == len(field_path) - 1:
        return f"list {name}"
    return {_KEYED: "keyed", _SET: "set", _ATOMIC: "atomic"}[name]


# -- unchanged: the raw-pair fast path ------------------------------------------------------------

SERVER_SET: dict[str, Any] = {
    "uid": "2f1c7a80-0000-4000-8000-000000000001",
    "resourceVersion": "48213",
    "generation": 3,
    "creationTimestamp": "2026-10-14T09:02:11Z",
    "managedFields": [{"manager": "kustomize-controller", "operation": "Apply"}],
}
INJECTED = {
    "kustomize.toolkit.fluxcd.io/name": "ams1",
    "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
}


def unchanged_samples() -> list[dict[str, Any]]:
    """Desired objects of kinds the fast path sees: plain data, a pod template (API defaults), a
    Secret, a KubeVirt CR (empty maps are values there) and a cluster-scoped Package."""
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cfg", "namespace": "apps", "labels": {"app": "web"}},
            "data": {"port": "8080", "mode": "fast"},
        },
        deploy([{"name": "a", "image": "a:1", "ports": [{"containerPort": 80}]}]),
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "db", "namespace": "apps", "annotations": {"team": "gpu"}},
            "type": "Opaque",
            "data": {"password": "czNjcjN0"},
        },
        kubevirt([A, B], ["HostDevices"], disableSerialConsoleLog={}),
        {
            "apiVersion": "cozystack.io/v1alpha1",
            "kind": "Package",
            "metadata": {"name": "cozystack.gpu-operator"},
            "spec": {"variant": "vfio", "components": {"gpu-operator": {"values": {"n": 1}}}},
        },
    ]


def _meta_of(obj: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = obj.setdefault("metadata", {})
    return meta


def _noise(rng: random.Random, live: dict[str, Any]) -> None:
    """What the server and controllers add that is never drift."""
    meta = _meta_of(live)
    choice = rng.randrange(4)
    if choice == 0:
        meta.update(SERVER_SET)
    elif choice == 1:
        meta.setdefault("labels", {}).update(INJECTED)
    elif choice == 2:
        meta.setdefault("annotations", {})["reconcile.fluxcd.io/requestedAt"] = "now"
    else:
        live["status"] = {"phase": "Deployed", "conditions": [{"type": "Ready"}]}


def _edit(rng: random.Random, live: dict[str, Any]) -> None:
    """An edit that may or may not be drift once normalized: the fast path must never hide one."""
    meta = _meta_of(live)
    body = [k for k in live if k not in ("apiVersion", "kind", "metadata", "status")]
    choice = rng.randrange(12)
    if choice == 0 and body:
        live[rng.choice(body)] = {"edited": rng.randrange(3)}
    elif choice == 1 and body:
        del live[rng.choice(body)]
    elif choice == 2:
        live["extra"] = rng.choice([{}, [], None, 0, "", {"a": 1}])
    elif choice == 3:
        meta.setdefault("labels", {})[rng.choice(["app", "tier", "team"])] = rng.choice(
            ["web", "db", ""]
        )
    elif choice == 4:
        meta.pop(rng.choice(["labels", "annotations"]), None)
    elif choice == 5:
        meta.setdefault("labels", {})["kustomize.toolkit.fluxcd.io/name"] = "other"
    elif choice == 6:
        meta[rng.choice(["labels", "annotations"])] = {}
    elif choice == 7:
        meta[rng.choice(["name", "namespace"])] = "elsewhere"
    elif choice == 8:
        meta[rng.choice(["finalizers", "ownerReferences"])] = [{"kind": "Package", "name": "p"}]
    elif choice == 9:  # another version of the same group (the audit pairs objects by group)
        group = str(live.get("apiVersion", "")).rpartition("/")[0]
        live["apiVersion"] = f"{group}/v1alpha3" if group else "v2"
    elif choice == 10:
        _retype(rng, live)
    else:  # never compared, but no reason to skip the comparison either
        annotations = meta.setdefault("annotations", {})
        annotations["kubectl.kubernetes.io/last-applied-configuration"] = rng.choice(
            ["{}", '{"data": {"password": "canary"}}']
        )


def _retype(rng: random.Random, node: Any) -> None:
    """Swap one scalar for an equal-looking one of another type (8080 / "8080", 1 / True / 1.0)."""
    spots = [
        (parent, key)
        for parent, key in _leaves(node)
        if isinstance(parent[key], str | int | float | bool)
    ]
    if spots:
        parent, key = rng.choice(spots)
        value = parent[key]
        if isinstance(value, bool):
            parent[key] = int(value)
        elif isinstance(value, int | float):
            parent[key] = rng.choice([str(value), float(value), value == 1])
        else:
            parent[key] = int(value) if value.isdigit() else value.upper() or None


def _leaves(node: Any) -> list[tuple[Any, Any]]:
    items = node.items() if isinstance(node, dict) else enumerate(node)
    out: list[tuple[Any, Any]] = []
    for key, value in items:
        if isinstance(value, dict | list):
            out += _leaves(value)
        else:
            out.append((node, key))
    return out


def test_unchanged_when_live_adds_only_server_metadata_injected_labels_and_status() -> None:
    rng = random.Random(11)
    for desired in unchanged_samples():
        assert unchanged(desired, copy.deepcopy(desired))
        for _ in range(20):
            live = copy.deepcopy(desired)
            for _ in range(rng.randrange(1, 4)):
                _noise(rng, live)
            assert unchanged(desired, live), live
            assert compare_objects(desired, live) == []


def test_unchanged_is_false_where_the_differ_finds_a_change() -> None:
    rng = random.Random(2026)
    seen = {"unchanged": 0, "changed": 0, "left to the differ": 0}
    for _ in range(600):
        desired = rng.choice(unchanged_samples())
        live = copy.deepcopy(desired)
        for _ in range(rng.randrange(0, 3)):
            _noise(rng, live)
        for _ in range(rng.randrange(1, 3)):
            _edit(rng, live)
        if rng.random() < 0.5:  # edits on either side
            desired, live = live, desired
            _meta_of(desired)  # a desired object always has metadata
        changes = compare_normalized(normalize(desired), normalize(live))
        fast = unchanged(desired, live)
        if changes:
            assert not fast, (desired, live, changes)
            seen["changed"] += 1
        else:
            seen["unchanged" if fast else "left to the differ"] += 1
    assert min(seen.values()) > 20, seen  # every outcome was exercised


# -- declared empty lists, duplicate keys --------------------------------------------------------


def test_an_empty_list_git_declares_is_a_value() -> None:
    desired = kubevirt([], [])
    # live empty or absent: the same as declared
    assert compare_objects(desired, kubevirt([], [])) == []
    absent = kubevirt([], [])
    del absent["spec"]["configuration"]["developerConfiguration"]["featureGates"]
    assert compare_objects(desired, absent) == []
    # a gate added live is drift against `featureGates: []`, not a field git leaves alone
    [change] = compare_objects(desired, kubevirt([], ["HostDevices"]))
    assert (change.kind, change.pointer) == (
        "modified",
        "/spec/configuration/developerConfiguration/featureGates",
    )
    assert (change.before, change.after, change.details) == (
        [],
        ["HostDevices"],
        ("added HostDevices",),
    )
    # git declaring nothing leaves the live list to whoever wrote it: "added", not "modified"
    undeclared = kubevirt([], [])
    del undeclared["spec"]["configuration"]["developerConfiguration"]
    [added] = compare_objects(undeclared, kubevirt([], ["HostDevices"]))
    assert added.kind == "added"
    # only atomic lists: an empty keyed list (containers) merges, it does not replace
    assert "containers" not in str(normalize(deploy([]), declared=True))


def test_duplicate_keys_are_reported_as_they_are() -> None:
    a = {"pciVendorSelector": "10DE:2236", "resourceName": "nvidia.com/GA102GL_A10"}
    b = {"pciVendorSelector": "10DE:2236", "resourceName": "nvidia.com/A10"}
    [change] = compare_objects(kubevirt([a], []), kubevirt([a, b], []))
    assert change.kind == "modified"
    assert change.details == (
        "duplicate 10DE:2236: live lists it 2 times (10DE:2236 -> nvidia.com/GA102GL_A10; "
        "10DE:2236 -> nvidia.com/A10)",
    )
    assert not [d for d in change.details if d.startswith("changed")]
