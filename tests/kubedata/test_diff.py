"""The one diff engine: list modes, types, digests, walk order and the policy hooks."""

from __future__ import annotations

from typing import Any, ClassVar

from kubedata.diff import (
    POSITIONAL,
    Change,
    Differ,
    Item,
    ListRule,
    SetValue,
    show_path,
)
from kubedata.redact import digest

KEYED = ListRule(keys=("name",), atomic=False)
SET = ListRule(keys=None, atomic=False, ordered=False)
WHOLE_UNORDERED = ListRule(keys=None, atomic=True, ordered=False)


class Rules(Differ):
    """Lists by field name: `keyed`, `set`, `byIndex`, `bag` (atomic, unordered); others atomic."""

    RULES: ClassVar[dict[str, ListRule]] = {
        "keyed": KEYED,
        "set": SET,
        "byIndex": POSITIONAL,
        "bag": WHOLE_UNORDERED,
    }

    def list_rule(self, name: str, before: list[Any], after: list[Any]) -> ListRule:
        return self.RULES.get(name, ListRule())


def changes(before: Any, after: Any, differ: Differ | None = None) -> list[tuple[str, str, str]]:
    return [
        (c.kind, show_path(c.segments), c.pointer)
        for c in (differ or Rules()).compare(before, after)
    ]


def test_equal_trees_have_no_change() -> None:
    tree = {"a": [{"name": "x", "v": 1}], "b": {"c": "d"}}
    assert Rules().compare(tree, {"b": {"c": "d"}, "a": [{"name": "x", "v": 1}]}) == []


def test_types_are_kept_but_numbers_are_numbers() -> None:
    assert changes({"a": 1}, {"a": 1.0}) == []
    assert changes({"a": 1}, {"a": True}) == [("modified", "a", "/a")]
    assert changes({"a": 8080}, {"a": "8080"}) == [("modified", "a", "/a")]
    assert changes({"a": [1]}, {"a": [True]}) == [("modified", "a", "/a")]


def test_true_is_not_1_deep_inside_equal_looking_maps_and_lists() -> None:
    # == holds for both trees (True == 1): the walk must still find the one leaf
    before = {"m": {"k": {"x": "s", "y": [{"z": 1}]}}, "byIndex": [{"p": {"q": False}}]}
    after = {"m": {"k": {"x": "s", "y": [{"z": True}]}}, "byIndex": [{"p": {"q": 0}}]}
    assert before == after
    assert changes(before, after) == [
        ("modified", "m.k.y", "/m/k/y"),  # an atomic list: reported on the list
        ("modified", "byIndex[0].p.q", "/byIndex/0/p/q"),
    ]
    assert changes({"m": {"y": [1.0]}}, {"m": {"y": [1]}}) == [("modified", "m.y", "/m/y")]
    assert changes({"m": {"k": {"n": 1.0}}}, {"m": {"k": {"n": 1}}}) == []


def test_pointers_escape_each_token_once() -> None:
    before = {"a/b": {"c~d": 1}, "keyed": [{"name": "x/y", "v": {"e/f": 1}}], "byIndex": ["s"]}
    after = {"a/b": {"c~d": 2}, "keyed": [{"name": "x/y", "v": {"e/f": 2}}], "byIndex": ["s", "t"]}
    assert [c.pointer for c in Rules().compare(before, after)] == [
        "/a~1b/c~0d",
        "/keyed/0/v/e~1f",
        "/byIndex/1",
    ]


def test_keyed_list_items_are_matched_by_key_in_after_order() -> None:
    before = {"keyed": [{"name": "a", "v": 1}, {"name": "b", "v": 2}, {"name": "gone"}]}
    after = {"keyed": [{"name": "new"}, {"name": "b", "v": 3}, {"name": "a", "v": 1}]}
    got = Rules().compare(before, after)
    assert [(c.kind, show_path(c.segments), c.pointer) for c in got] == [
        ("added", "keyed[name=new]", "/keyed/0"),
        ("modified", "keyed[name=b].v", "/keyed/1/v"),  # the after index
        ("removed", "keyed[name=gone]", "/keyed/2"),  # the before index
        ("reordered", "keyed", "/keyed"),
    ]
    assert got[1].segments == ("keyed", Item((("name", "b"),)), "v")
    assert got[1].field_path == ("keyed", "*", "v")
    assert got[3].before == [(("name", "a"),), (("name", "b"),)]
    assert got[3].after == [(("name", "b"),), (("name", "a"),)]


def test_a_keyed_list_with_duplicate_keys_is_compared_whole() -> None:
    before = {"keyed": [{"name": "a", "v": 1}, {"name": "a", "v": 2}]}
    after = {"keyed": [{"name": "a", "v": 1}]}
    (change,) = Rules().compare(before, after)
    assert (change.kind, change.pointer) == ("modified", "/keyed")
    assert change.details == ("removed a -> None",) or change.details  # item-level, never empty


def test_atomic_lists_are_one_value_with_item_details() -> None:
    (change,) = Rules().compare({"ports": [80, 443]}, {"ports": [80, 8443]})
    assert (change.kind, change.before, change.after) == ("modified", [80, 443], [80, 8443])
    assert change.details == ("added 8443", "removed 443")


def test_an_unordered_atomic_list_only_reordered_is_a_reorder_not_a_change() -> None:
    assert changes({"bag": ["x", "y"]}, {"bag": ["y", "x"]}) == [("reordered", "bag", "/bag")]
    assert changes({"atomic": ["x", "y"]}, {"atomic": ["y", "x"]}) == [
        ("modified", "atomic", "/atomic")
    ]


def test_sets_report_values_added_and_removed() -> None:
    got = Rules().compare({"set": ["a", "b"]}, {"set": ["c", "a"]})
    assert [(c.kind, c.segments, c.pointer) for c in got] == [
        ("added", ("set", SetValue("c")), "/set/0"),
        ("removed", ("set", SetValue("b")), "/set/1"),
    ]


def test_positional_lists_compare_by_index() -> None:
    before = {"byIndex": [{"v": 1}, {"v": 2}]}
    assert changes(before, {"byIndex": [{"v": 1}, {"v": 3}, {"v": 4}]}) == [
        ("modified", "byIndex[1].v", "/byIndex/1/v"),
        ("added", "byIndex[2]", "/byIndex/2"),
    ]
    assert changes(before, {"byIndex": [{"v": 1}]}) == [("removed", "byIndex[1]", "/byIndex/1")]


def test_a_digest_is_one_value_never_walked_into() -> None:
    (change,) = Rules().compare({"data": {"k": digest("old")}}, {"data": {"k": digest("new")}})
    assert (change.kind, change.pointer) == ("modified", "/data/k")
    assert "old" not in repr(change) and "new" not in repr(change)
    # a plain map that merely has a "redacted" key among others is walked as usual
    assert changes({"m": {"redacted": 1, "x": 1}}, {"m": {"redacted": 1, "x": 2}}) == [
        ("modified", "m.x", "/m/x")
    ]


def test_map_keys_in_declared_order_or_sorted() -> None:
    before, after = {"b": 1, "a": 1}, {"c": 1, "a": 2}
    assert [c.pointer for c in Rules().compare(before, after)] == ["/b", "/a", "/c"]

    class Sorted(Rules):
        sort_keys = True

    assert [c.pointer for c in Sorted().compare(before, after)] == ["/a", "/b", "/c"]


def test_policy_hooks_limit_what_counts() -> None:
    class Scoped(Rules):
        def in_scope(self, fpath: tuple[str, ...]) -> bool:
            return fpath[:1] in ((), ("spec",))

        def ignored_addition(self, fpath: tuple[str, ...]) -> bool:
            return fpath == ("spec", "defaulted")

        def ignores_below(self, fpath: tuple[str, ...]) -> bool:
            return fpath == ("spec", "block")

    before: dict[str, Any] = {"spec": {"a": 1}, "status": {"x": 1}}
    after = {
        "spec": {"a": 1, "defaulted": 5, "block": {"defaulted": 1, "real": 2}, "new": 1},
        "status": {"x": 2},
    }
    got: list[Change] = Scoped().compare(before, after)
    assert [(c.kind, c.pointer, c.after) for c in got] == [
        ("added", "/spec/block/defaulted", 1),
        ("added", "/spec/block/real", 2),
        ("added", "/spec/new", 1),
    ]  # /status is out of scope, /spec/defaulted ignored, /spec/block walked into


def test_show_path_quotes_odd_keys() -> None:
    path = ("metadata", "annotations", "helm.sh/resource-policy", 0, Item((("name", "a"),)))
    assert show_path(path) == 'metadata.annotations["helm.sh/resource-policy"][0][name=a]'
    assert show_path(("spec", SetValue("x"))) == 'spec["x"]'


def test_duplicate_keys_on_either_side_compare_the_list_whole() -> None:
    """The server refuses a map list with a repeated key; where one is read anyway, matching by
    key would pair items arbitrarily: the list is one value, on the side that repeats too."""
    one = {"keyed": [{"name": "a", "v": 1}]}
    twice = {"keyed": [{"name": "a", "v": 1}, {"name": "a", "v": 2}]}
    for before, after in ((twice, one), (one, twice)):
        assert [(c.kind, c.pointer) for c in Rules().compare(before, after)] == [
            ("modified", "/keyed")
        ]


class Ports(Differ):
    """`ports` keyed by (containerPort, protocol), protocol defaulting to TCP (as core/v1)."""

    def list_rule(self, name: str, before: list[Any], after: list[Any]) -> ListRule:
        return ListRule(
            keys=("containerPort", "protocol"),
            atomic=False,
            ordered=False,
            key_defaults=(("protocol", "TCP"),),
        )


def test_a_key_field_left_to_its_default_is_the_same_key_as_the_default_written() -> None:
    declared = {"ports": [{"containerPort": 80}]}
    live = {"ports": [{"containerPort": 80, "protocol": "TCP"}]}
    [change] = Ports().compare(declared, live)
    assert (change.kind, change.pointer) == ("added", "/ports/0/protocol")
    udp = {"ports": [{"containerPort": 80, "protocol": "UDP"}]}
    assert sorted((c.kind, c.pointer) for c in Ports().compare(declared, udp)) == [
        ("added", "/ports/0"),
        ("removed", "/ports/0"),
    ]
