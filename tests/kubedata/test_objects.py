"""JSON pointers into objects (json_pointer and pointer_tokens are each other's inverse), and
same_value, which says what canonical JSON says."""

from __future__ import annotations

from typing import Any

import pytest

from kubedata.objects import canonical, json_pointer, pointer_token, pointer_tokens, same_value


@pytest.mark.parametrize(
    ("tokens", "pointer"),
    [
        ((), ""),
        (("spec", "configuration"), "/spec/configuration"),
        (
            ("metadata", "labels", "nvidia.com/gpu.workload.config"),
            "/metadata/labels/nvidia.com~1gpu.workload.config",
        ),
        (("a~b", "c/~d", ""), "/a~0b/c~1~0d/"),
    ],
)
def test_pointer_round_trip(tokens: tuple[str, ...], pointer: str):
    assert json_pointer(tokens) == pointer
    assert pointer_tokens(pointer) == tokens


def test_escapes_are_undone_in_rfc_6901_order():
    # "~01" is "~1" escaped once, not "/": ~1 is undone before ~0
    assert pointer_tokens("/~01") == ("~1",)


def test_pointer_token_escapes_tilde_before_slash():
    assert pointer_token("a~/b") == "a~0~1b"
    assert pointer_token(3) == "3"


@pytest.mark.parametrize(
    ("b", "a", "same"),
    [
        ({"a": 1, "b": [1, {"c": "x"}]}, {"b": [1, {"c": "x"}], "a": 1}, True),  # key order
        ({"a": {"b": [{"c": 1}]}}, {"a": {"b": [{"c": True}]}}, False),  # true is not 1, deep
        ({"a": [0]}, {"a": [False]}, False),
        ({"a": 1}, {"a": 1.0}, False),  # as in canonical JSON: the walk then compares numbers
        ({"a": "1"}, {"a": 1}, False),
        ({"a": None}, {"a": None}, True),
        ({"a": {}}, {"a": []}, False),
        ([{"a": "x"}, {"b": "y"}], [{"b": "y"}, {"a": "x"}], False),  # lists keep order
        (True, 1, False),
        ("x", "x", True),
    ],
)
def test_same_value_says_what_canonical_json_says(b: Any, a: Any, same: bool):
    assert same_value(b, a) is same
    assert same_value(a, b) is same
    assert (canonical(b) == canonical(a)) is same
