"""Strings and values written by the project's YAML writers read back equal, type included, by a
YAML 1.1 reader (PyYAML, what the project loads with) and a YAML 1.2 reader (yaml_rs, as Flux and
kustomize read): random values from an alphabet of the characters that change meaning."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
import yaml
import yaml_rs

from kubedata.yaml_io import dump_yaml
from kubedata.yaml_scalars import plain_is_string, same_data

TRICKY = [
    "on", "On", "ON", "off", "Off", "NO", "no", "yes", "Y", "y", "n", "N", "true", "False",
    "1:20", "1_0:00", "190:20:30", "0x1F", "0o12", "0b101", "012", "1e3", "1.5e3", "-.5", "+1",
    "1_000", ".inf", "-.Inf", ".NaN", "~", "", "null", "Null", "NULL", "=", "<<", "2024-01-01",
    "2024-01-01T10:00:00Z", "2001-12-14 21:59:43.10 -5", " lead", "trail ", " ", "a\nb", "a\n",
    "\n", "a\n\nb ", "\x85", "a\x85b", "\u2028", "\t", "a\tb", "\x1b[2J", "\x00", "\ufeff",
    "a: b", "- x", "#x", "x #y", "@x", "`x", "!x", "*x", "&x", "|", ">", "? x", "%x", "'", '"',
    "\\", "10DE:2BB1", "535.104.05", "v1.2.3", "nvidia.com/GRID_A100", "\u202e", "a,b", "[x]",
    "{x}",
]  # fmt: skip
WORDLIKE = re.compile(r"[0-9A-Za-z+.](?:[0-9A-Za-z.:_+~-]*[0-9A-Za-z._+~-])?")
ALPHABET = list("aoOnNyY01289eE.:-+_x~ #'\"\\\n\t\x85\u2028@!&*|>?%,[]{}=<") + [" "] * 3


def _random_string(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return rng.choice(TRICKY)
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 8)))


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 3 and roll < 0.15:
        return {_random_string(rng): _random_value(rng, depth + 1) for _ in range(3)}
    if depth < 3 and roll < 0.25:
        return [_random_value(rng, depth + 1) for _ in range(3)]
    if roll < 0.3:
        return rng.choice([None, True, False, 0, -7, 10**20, 1.5, 1e20, -2.5e-9, 1000.0])
    return _random_string(rng)


def read_back(text: str) -> list[Any]:
    """What a YAML 1.1 and a YAML 1.2 reader make of `text`."""
    # yaml_rs reads a date even in quotes: dates are left to the YAML 1.1 reader
    return [yaml.safe_load(text), yaml_rs.loads(text, parse_datetime=False)]


@pytest.mark.parametrize("text", TRICKY)
def test_every_tricky_string_is_a_string_again(text: str) -> None:
    doc = {"key": text, text or "empty": [text]}
    for got in read_back(dump_yaml(doc)):
        assert same_data(got, doc), (text, got)


def test_random_values_round_trip_through_dump_yaml() -> None:
    rng = random.Random(22)
    for _ in range(2000):
        doc = {"spec": _random_value(rng)}
        text = dump_yaml(doc)
        for got in read_back(text):
            assert same_data(got, doc), text


def test_plain_is_string_agrees_with_both_readers_where_it_says_plain() -> None:
    rng = random.Random(7)
    for _ in range(5000):
        text = _random_string(rng)
        # indicators, spaces and breaks are the emitter's to quote; words and numbers are ours
        if plain_is_string(text) and WORDLIKE.fullmatch(text):
            assert [r["k"] for r in read_back(f"k: {text}\n")] == [text, text], text


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (True, 1, False),
        (1, 1.0, False),
        ("1", 1, False),
        ({"a": [1, "x"]}, {"a": [1, "x"]}, True),
        ({"a": None}, {}, False),
        (float("nan"), float("nan"), True),
    ],
)
def test_same_data_compares_types(a: Any, b: Any, same: bool) -> None:
    assert same_data(a, b) is same
