"""JSON pointers into objects: json_pointer and pointer_tokens are each other's inverse."""

from __future__ import annotations

import pytest

from kubedata.objects import json_pointer, pointer_tokens


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
