"""Which strings may be written as plain YAML scalars, so that every reader gets a string back.

A value written by `adopt` or `import` is read again by PyYAML (YAML 1.1: `on`, `NO`, `1:20`,
`2024-01-01` are a bool, an int, a date), by Flux and kustomize (YAML 1.2 core, through go-yaml:
`1e3`, `0o12` are numbers) and by go-yaml v2 (`y`, `n` are bools). A string any of them would read
as something else is quoted; so is every string the plain style cannot hold as it is (leading or
trailing space, a line break, a control character; the emitter decides those itself). Floats get
the one spelling all of them read as a float (`1.0e+20`, not `1e+20`, which YAML 1.1 reads as a
string).
"""

from __future__ import annotations

import math
import re
from typing import Any

from kubedata.yaml_lib import yaml

__all__ = ["escaped_only", "float_text", "plain_is_string", "same_data"]

_STR = "tag:yaml.org,2002:str"
_YAML11 = yaml.resolver.Resolver()
# YAML 1.2 core schema (what go-yaml v3, kyaml and sigs.k8s.io/yaml resolve), plus go-yaml v2's
# YAML 1.1 booleans (y, n) that PyYAML does not know.
_WORDS = re.compile(
    r"""(?x)
    ~ | null | Null | NULL
    | true | True | TRUE | false | False | FALSE
    | y | Y | yes | Yes | YES | n | N | no | No | NO | on | On | ON | off | Off | OFF
    | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
    | = | <<
    """
)
# go-yaml drops every underscore before it parses a number (`_2` is 2), and takes 0x, 0o, 0b
_NUMBER = re.compile(
    r"""(?x)
    [-+]?(?:0x[0-9a-fA-F]+ | 0o[0-7]+ | 0b[01]+ | [0-9]+)
    | [-+]?(?:\.[0-9]+ | [0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?
    """
)


def plain_is_string(text: str) -> bool:
    """Whether `text`, written as a plain scalar, reads back as this string in YAML 1.1 and 1.2
    (False: write it quoted). The empty string is null when plain."""
    if text == "" or _WORDS.fullmatch(text) or _NUMBER.fullmatch(text.replace("_", "")):
        return False
    tag = _YAML11.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return bool(tag == _STR)


# Line breaks other than \n (YAML 1.1 reads NEL, LS and PS as breaks and folds them in a plain or
# single-quoted scalar) and what no printable style holds: only double quotes escape them.
_ESCAPED_ONLY = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]"
)


def escaped_only(text: str) -> bool:
    """Whether `text` must be written double-quoted (with escapes) to read back unchanged."""
    return _ESCAPED_ONLY.search(text) is not None


def float_text(value: float) -> str:
    """A float as PyYAML writes it (`.inf`, `.nan`, a `.0` before any exponent): a float in YAML
    1.1 and 1.2 alike."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


def _kind(value: Any) -> type:
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind
    return type(value)


def same_data(a: Any, b: Any) -> bool:
    """Equal, type included at every depth (True is not 1, 1 is not 1.0, "1" is not 1)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_data(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_data(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return _kind(a) is _kind(b) and bool(a == b)
