"""Kubernetes quantities: every suffix the API server accepts, parsed exactly; one spelling each."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from kubedata.quantity import QuantityError, canonical_quantity, parse_quantity, parse_size


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1Gi", 1 << 30),
        ("1073741824", 1 << 30),
        (1073741824, 1 << 30),
        ("1024Mi", 1 << 30),
        ("1Ki", 1024),
        ("1Mi", 1024**2),
        ("1Ti", 1024**4),
        ("1Pi", 1024**5),
        ("1Ei", 1024**6),
        ("1k", 1000),
        ("1M", 10**6),
        ("1G", 10**9),
        ("1T", 10**12),
        ("1P", 10**15),
        ("1E", 10**18),
        ("100m", Fraction(1, 10)),
        ("0.1", Fraction(1, 10)),
        (".5", Fraction(1, 2)),
        ("1.5Gi", 3 * (1 << 29)),
        ("1e3", 1000),
        ("1E3", 1000),
        ("12e-1", Fraction(6, 5)),
        ("+2", 2),
        ("-1Ki", -1024),
        ("0", 0),
        (0.25, Fraction(1, 4)),
        ("100n", Fraction(1, 10**7)),
        ("250u", Fraction(1, 4000)),
        ("5m", Fraction(1, 200)),
        ("2k", 2000),
        ("1M", 10**6),
        ("1T", 10**12),
        ("1P", 10**15),
        ("1E", 10**18),
        ("1Pi", 1024**5),
        ("1Ei", 1024**6),
        ("1e+3", 1000),
        ("5E-2", Fraction(1, 20)),
        ("-250u", Fraction(-1, 4000)),
        ("-.5", Fraction(-1, 2)),
        ("3.", 3),
    ],
)
def test_quantities_parse_exactly(text: Any, value: Any) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "Gi",
        "1 Gi",
        "1gi",
        "1KiB",
        "one",
        "1e",
        "1.2.3",
        "1K",
        "1MB",
        "1N",
        "--1",
        ".",
        True,
        None,
    ],
)
def test_not_quantities(bad: Any) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(bad)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("1Gi", 1073741824),
        ("1024Mi", "1Gi"),
        ("0.5", "500m"),
        ("1000m", "1"),
        ("1000M", "1G"),
        ("3072Mi", "3Gi"),
        ("1e3", "1k"),
        ("0.1u", "100n"),
        ("0.25m", "250u"),
        ("1e-9", "1n"),
    ],
)
def test_equal_quantities_have_one_spelling(a: Any, b: Any) -> None:
    assert canonical_quantity(a) == canonical_quantity(b)


@pytest.mark.parametrize(
    ("value", "spelling"),
    [
        ("100n", "100n"),
        ("250u", "250u"),
        ("-250u", "-250u"),
        ("-0.5", "-500m"),
        ("-1Ki", "-1Ki"),
        ("0.5n", "5E-10"),
        ("-0", "0"),
    ],
)
def test_canonical_spelling_keeps_the_sign_and_the_small_suffixes(
    value: str, spelling: str
) -> None:
    assert canonical_quantity(value) == spelling
    assert parse_quantity(spelling) == parse_quantity(value), "the spelling is itself a quantity"


@pytest.mark.parametrize(
    ("text", "size"), [("1Gi", 1 << 30), ("512Mi", 512 << 20), ("2G", 2 * 10**9), ("1024", 1024)]
)
def test_a_size_is_a_whole_positive_number_of_bytes(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["0", "-1Mi", "1.5", "100m", "lots", ""])
def test_what_is_not_a_size(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_size(text)
