"""Kubernetes resource quantities, parsed exactly and written in one canonical spelling.

Grammar (k8s.io/apimachinery/pkg/api/resource/quantity.go):
    quantity ::= signedNumber suffix
    suffix   ::= binarySI (Ki Mi Gi Ti Pi Ei) | decimalSI (n u m "" k M G T P E) | e<int> | E<int>
Values are Fractions, never floats: `0.1` and `100m` are the same number, `1Gi` is 1073741824.
The canonical spelling is used only so that equal quantities normalize to equal strings; it picks
the largest binary suffix that divides the value, else the largest decimal one, else milli, micro
or nano units. One parser for the renderer (profile checks) and the auditor (comparisons).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from kubedata.errors import KubeDataError

__all__ = ["QuantityError", "canonical_quantity", "parse_quantity", "parse_size"]

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -3, "u": -2, "m": -1, "": 0, "k": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<binary>Ki|Mi|Gi|Ti|Pi|Ei)|[eE](?P<exp>[+-]?[0-9]+)|(?P<decimal>[numkMGTPE])?)$"
)
_MAX_EXPONENT = 100
"""1e100 is far beyond any real quantity; refusing larger exponents keeps parsing cheap."""


class QuantityError(KubeDataError, ValueError):
    """Not a Kubernetes quantity."""


def parse_quantity(value: object) -> Fraction:
    """A quantity string (or a JSON number) as an exact Fraction."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        try:
            return Fraction(Decimal(repr(value)))
        except (InvalidOperation, ValueError):
            raise QuantityError(f"{value!r} is not a quantity") from None
    if not isinstance(value, str):
        raise QuantityError(f"{value!r} is not a quantity")
    match = _QUANTITY.match(value.strip())
    if not match:
        raise QuantityError(f"{value!r} is not a quantity")
    number = Fraction(Decimal(match["number"]))
    if match["binary"]:
        return number * Fraction(1024 ** _BINARY[match["binary"]])
    if match["exp"] is not None:
        exp = int(match["exp"])
        if abs(exp) > _MAX_EXPONENT:
            raise QuantityError(f"{value!r}: exponent out of range")
        return number * Fraction(10) ** exp
    return number * Fraction(1000) ** _DECIMAL[match["decimal"] or ""]


def canonical_quantity(value: object) -> str:
    """One spelling per number: 1Gi for 1073741824 and 1024Mi, 500m for 0.5, 1k for 1000."""
    q = parse_quantity(value)
    if q == 0:
        return "0"
    sign = "-" if q < 0 else ""
    q = abs(q)
    if q.denominator == 1:
        n = q.numerator
        for suffix, power in sorted(_BINARY.items(), key=lambda kv: -kv[1]):
            if n % 1024**power == 0:
                return f"{sign}{n // 1024**power}{suffix}"
        for suffix, power in sorted(_DECIMAL.items(), key=lambda kv: -kv[1]):
            if power > 0 and n % 1000**power == 0:
                return f"{sign}{n // 1000**power}{suffix}"
        return f"{sign}{n}"
    for suffix in ("m", "u", "n"):
        scaled = q * 1000 ** -_DECIMAL[suffix]
        if scaled.denominator == 1:
            return f"{sign}{scaled.numerator}{suffix}"
    # Finer than a nano: the server would round up; keep the exact value, written out.
    return f"{sign}{Decimal(q.numerator) / Decimal(q.denominator)}"


def parse_size(value: str) -> int:
    """A positive whole number of bytes written as a quantity (`1Gi`, `512Mi`, `2G`, `1048576`)."""
    try:
        size = parse_quantity(value)
    except QuantityError:
        size = Fraction(0)
    if size <= 0 or size.denominator != 1:
        raise QuantityError(f"{value!r} is not a positive whole number of bytes (e.g. 512Mi, 2Gi)")
    return size.numerator
