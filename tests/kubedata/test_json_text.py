"""dumps_indented is json.dumps(indent=2) byte for byte, on documents shaped like the reports
and on random ones (non-ASCII, escapes, control characters, nesting, empty containers, floats)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from kubedata.json_text import dumps_indented

_TEXT = ["", "a", "é", "日本", "\x00\x1f", '"quoted"', "back\\slash", "\u2028", "😀", "<b>&"]


def _doc(rng: random.Random, depth: int) -> Any:
    pick = rng.randrange(10 if depth < 4 else 6)
    if pick == 0:
        return rng.choice(_TEXT) + str(rng.random())
    if pick == 1:
        return rng.randint(-(10**20), 10**20)
    if pick == 2:
        return rng.choice([0.1, -2.5e-300, 1e300, 3.0, -0.0, rng.random()])
    if pick == 3:
        return rng.choice([True, False, None])
    if pick in (4, 5):
        return rng.choice(_TEXT)
    if pick in (6, 7):
        return [_doc(rng, depth + 1) for _ in range(rng.randrange(4))]
    if pick == 8:
        return tuple(_doc(rng, depth + 1) for _ in range(rng.randrange(3)))
    return {rng.choice(_TEXT) + str(i): _doc(rng, depth + 1) for i in range(rng.randrange(4))}


@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_random_documents_are_byte_identical(ensure_ascii: bool) -> None:
    rng = random.Random(7)
    for _ in range(2000):
        doc = _doc(rng, 0)
        expected = json.dumps(doc, indent=2, ensure_ascii=ensure_ascii)
        assert dumps_indented(doc, ensure_ascii=ensure_ascii) == expected


def test_special_floats_as_json_writes_them() -> None:
    doc = [float("nan"), float("inf"), float("-inf")]
    assert dumps_indented(doc) == json.dumps(doc, indent=2)


@pytest.mark.parametrize("bad", [{1: "a"}, {"a": object()}, [b"bytes"]])
def test_what_json_refuses_is_refused(bad: Any) -> None:
    with pytest.raises(TypeError):
        dumps_indented(bad)
