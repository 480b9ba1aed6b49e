"""yaml_go against kustomize itself: every value it writes, it writes byte for byte as kustomize
prints it; what it refuses is the short list expected (kustomize then builds)."""

from __future__ import annotations

import asyncio
import random
import string
from pathlib import Path
from typing import Any

import pykustomize
import pytest

from kubedata.errors import NotGoYaml
from kubedata.yaml_go import dump_go, go_key_less
from kubedata.yaml_io import dump_yaml

_STRINGS = [
    *("", " ", "a", "a b", "x y ", " x", "it's", 'say "hi"', "back\\slash", "=", "~a", "a~b"),
    *("*x", "&a", "!x", "|", ">", "'", '"', "%", "@", "`", "#x", "x#y", "x #y", "[a]", "{a}"),
    *("a: b", "a:b", "a:", ":a", ": a", "?a", "? a", "a?b", "-a", "- a", "-", "--", "---"),
    *("---x", "...", "..x", ".x", ".5", ".5e3", "1.", "1.5", "+1", "-1", "+", "0", "00", "007"),
    *("08", "0x1F", "0x", "0o17", "0b101", "1_000", "_1", "1:20", "1:60", "10DE:2BB5"),
    *("2026-11-30", "2026-13-45", "yes", "Yes", "y", "n", "N", "no", "on", "off", "true"),
    *("True", "tRue", "null", "~", "<<", ".inf", "-.inf", ".nan", "nan", "inf", "1.6", "v1.6"),
    *("550.144.02", "12h", "1Gi", "100m", "0.5", "https://example.com/x?y=1#z", "a,b", "a]"),
    *("line1\nline2", "line1\nline2\n", " lead\nx", "\nlead", "a\n\nb\n", "a\n  in\nb"),
    *("a" * 100, "w " * 50, "word " * 30 + "end", "*" + " w" * 50, "'" + "w " * 50 + "'"),
]
_OTHERS: list[Any] = [True, False, None, 0, 1, -1, 2**40, -(2**52), [], {}, [1, [2, []], {}]]
_KEYS = [
    *("a", "b", "a1", "a2", "a10", "a01", "a001", "a0", "A", "Z", "_", "~", "-", ".", "1", "01"),
    *("2", "a-b", "a.b", "a_b", "aB", "ab", "yes", "on", "", "a b", "x:", "1:20", "10DE", "x01"),
    *("c0001-gpu-0", "c0001-gpu-10", "c0001-gpu-2", "app.kubernetes.io/name", "nvidia.com/gpu"),
]
_REFUSED = {
    "0B1": "reads as another type",  # dump_yaml writes it plain: kustomize reads an int
    "2026-1-2": "reads as another type",  # ... a timestamp
    "1e3": "exponent",
    "a \nb": "multi-line",  # double-quoted with escapes
    "a\n\n": "trailing blank lines",  # |+ ends the document with "..."
    "tab\there": "does not write",
    "héllo": "does not write",
    "'" + "w " * 50: "folded",
}


def _random_strings(n: int) -> list[str]:
    rng = random.Random(25)
    words = ["word", "a", "bb", "ccc", "  ", " "]
    out = [" ".join(rng.choice(words) for _ in range(rng.randint(10, 40))) for _ in range(n)]
    chars = string.ascii_letters + string.digits + " :#-.'\"_/\n?*&"
    return out + ["".join(rng.choices(chars, k=rng.randint(1, 30))) for _ in range(n)]


def _thing(i: int, data: Any) -> dict[str, Any]:
    meta = {"name": f"t{i:05d}"}
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta, "data": data}


def _kustomize(tmp: Path, objs: list[dict[str, Any]]) -> list[str]:
    """kustomize's output of these objects, written as the renderer writes files (dump_yaml)."""
    names = []
    for i, obj in enumerate(objs):
        (tmp / f"r{i}.yaml").write_text(dump_yaml(obj))
        names.append(f"r{i}.yaml")
    (tmp / "kustomization.yaml").write_text(dump_yaml({"resources": names}))
    return str(asyncio.run(pykustomize.build(str(tmp))).yaml).split("---\n")


def test_every_value_written_is_what_kustomize_prints(tmp_path: Path):
    values: list[Any] = [*_STRINGS, *_OTHERS, *_random_strings(150)]
    # each value at several columns (folding depends on it), in lists and nested
    objs = [
        _thing(i, {"k": v, "a-longer-key": v, "n": {"deep": {"k": v}}, "l": [v, [v], {"k": v}]})
        for i, v in enumerate(values)
    ]
    objs.append(_thing(len(objs), {k: k for k in _KEYS}))
    written = 0
    for obj, theirs in zip(objs, _kustomize(tmp_path, objs), strict=True):
        try:
            ours = dump_go(obj)
        except NotGoYaml:
            continue
        assert ours == theirs, obj["data"]
        written += 1
    assert written >= len(objs) - 5  # the random strings may hold a "a \n" or "x\n\n"


@pytest.mark.parametrize(("value", "why"), sorted(_REFUSED.items()))
def test_what_is_refused_is_said(value: str, why: str):
    with pytest.raises(NotGoYaml, match=why):
        dump_go({"k": value})


def test_floats_and_keys_that_go_does_not_order_consistently_are_refused():
    with pytest.raises(NotGoYaml, match="float"):
        dump_go({"k": 0.5})
    with pytest.raises(NotGoYaml, match="order"):  # 10 < 1x < 3_a < 10
        dump_go({"10": 1, "1x": 1, "3_a": 1})


def test_the_key_order_is_go_yamls():
    assert go_key_less("a2", "a10") and go_key_less("_x", "10DE") and go_key_less("a-b", "aB")
    assert not go_key_less("ab", "aB") and go_key_less("c0001-gpu-2", "c0001-gpu-10")
