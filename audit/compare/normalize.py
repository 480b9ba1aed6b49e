"""Canonical form of an object, so that noise compares equal and only drift differs.

`normalize` is pure and returns a new plain-JSON tree:
- server-set metadata (uid, resourceVersion, managedFields...) and `status` are removed
  (CustomResourceDefinitions keep nothing of status either: git never carries it);
- `kubectl.kubernetes.io/last-applied-configuration` is removed (it can hold a whole Secret);
- Secret `stringData` is folded into base64 `data`, as the API server does on write;
- values equal to an API default are removed (known_types.DEFAULTS, and the defaults of the CRD
  the cluster serves when it was read: crd.py), so explicit and implied
  defaults read alike; `imagePullPolicy` is defaulted from the image tag; the platform Package's
  values equal to the platform chart's defaults likewise (renderer.values.cozystack.CHART_DEFAULTS):
  defaults.py;
- quantities at quantity paths become one spelling (`1073741824` and `1024Mi` -> `1Gi`), Flux
  durations likewise (`10m` = `600s`);
- integral floats become ints (YAML `1.0`), YAML timestamps become RFC 3339 strings;
- null, empty lists and empty maps are removed ("empty vs absent"), except empty maps in groups
  where they are flags (KubeVirt's `disableSerialConsoleLog: {}`), and, on the declared side
  (`declared=True`), empty atomic lists: `featureGates: []` in git is a value server-side apply
  writes, replacing whatever list is live (the differ does not count it against an absent list).
Injected labels/annotations and server-populated fields are not removed here: they are ignored by
the comparison only when git does not declare them (differ.py), so a declared one still counts.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import datetime as dt
import re
from fractions import Fraction
from functools import lru_cache
from typing import Any

from kubedata.objects import KubeObject
from kubedata.quantity import QuantityError, canonical_quantity
from renderer.cozystack_names import PLATFORM_PACKAGE as PLATFORM

from audit.compare.crd import Schema
from audit.compare.defaults import drop_defaults, drop_platform_chart_defaults
from audit.compare.known_types import (
    ALWAYS_DROPPED_ANNOTATIONS,
    DURATION_PATHS,
    EMPTY_MAP_IS_A_VALUE,
    QUANTITY_PATHS,
    SERVER_METADATA,
    declared_empty_is_a_value,
)
from audit.compare.patterns import matches, select

__all__ = ["canonical_duration", "normalize", "plain"]

_DURATION = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)")
_UNITS = {
    "ns": Fraction(1, 10**9),
    "us": Fraction(1, 10**6),
    "µs": Fraction(1, 10**6),
    "ms": Fraction(1, 1000),
    "s": Fraction(1),
    "m": Fraction(60),
    "h": Fraction(3600),
}


_ATOMS = frozenset({str, int, bool, type(None)})
"""Exact types `plain` returns as they are (a JSON-decoded object is mostly these)."""


def plain(value: Any) -> Any:
    """A deep copy as JSON: integral floats -> int, timestamps -> RFC 3339, bytes -> base64."""
    # Fast path for what JSON decoding makes (exact dicts and lists with str keys): the audit
    # copies every live object once, so this is per value of ~20k objects.
    kind = type(value)
    if kind is dict:
        return {
            (k if type(k) is str else str(k)): (v if type(v) in _ATOMS else plain(v))
            for k, v in value.items()
        }
    if kind is list:
        return [v if type(v) in _ATOMS else plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value


def canonical_duration(text: str) -> str:
    """A Go duration in Go's spelling (`10m` and `600s` -> `10m0s`); unchanged if not one."""
    raw = text.strip()
    if not raw or _DURATION.sub("", raw):
        return text
    total = sum(Fraction(num) * _UNITS[unit] for num, unit in _DURATION.findall(raw))
    if total == 0:
        return "0s"
    if total < 1:
        for unit in ("ms", "us", "ns"):
            scaled = total / _UNITS[unit]
            if scaled.denominator == 1 or unit == "ns":
                return f"{_decimal(scaled)}{unit}"
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    out = f"{int(hours)}h" if hours else ""
    out += f"{int(minutes)}m" if hours or minutes else ""
    return out + f"{_decimal(seconds)}s"


def _decimal(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.9f}".rstrip("0").rstrip(".")


def _secret(obj: KubeObject) -> None:
    data = obj.get("data")
    data = dict(data) if isinstance(data, dict) else {}
    for key, value in data.items():
        if isinstance(value, str):
            with contextlib.suppress(binascii.Error, ValueError):
                data[key] = base64.b64encode(base64.b64decode(value, validate=True)).decode()
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict):
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
    if data:
        obj["data"] = data


_QUANTITY_TAILS = frozenset(p[-2] if p[-1] == "*" else p[-1] for p in QUANTITY_PATHS)
"""Last literal segment of each quantity path: a cheap filter before the glob match."""


@lru_cache(maxsize=4096, typed=True)
def _canonical_quantity(value: Any) -> str:
    """canonical_quantity, remembered: the same few spellings recur in every pod spec."""
    return canonical_quantity(value)


_Path = tuple[Any, ...]
"""A field path as nested (parent, name) pairs: one pair a level, not a tuple copied at each;
spelled out (`_spelled`) only at the rare scalar that may be a quantity."""


def _spelled(path: _Path) -> tuple[str, ...]:
    names: list[str] = []
    while path:
        path, name = path
        names.append(name)
    return tuple(reversed(names))


def _quantity(value: Any, path: _Path) -> Any:
    """The canonical spelling of a scalar at a quantity path; anything else as written."""
    if not any(matches(p, _spelled(path)) for p in QUANTITY_PATHS):
        return value
    try:
        return _canonical_quantity(value)
    except QuantityError:  # not a quantity after all: compared as written
        return value


def _finish(node: Any, path: _Path, keep_empty_maps: bool, declared: bool) -> Any:
    """One walk of normalize's own copy, bottom-up, in place: every scalar at a quantity path in
    one spelling, and None, [] and {} dropped (the latter only when not flags; the former kept
    where `declared` and the list is atomic)."""
    # a scalar here may be a quantity only below a quantity path's tail or at one
    maybe = bool(path) and path[1] in _QUANTITY_TAILS
    if type(node) is list:
        item = (path, "*")
        return [
            _finish(v, item, keep_empty_maps, declared)
            if type(v) is dict or type(v) is list
            else (_quantity(v, item) if maybe else v)
            for v in node
            if v is not None
        ]
    empty = []
    for key, child in node.items():
        if type(child) is dict or type(child) is list:
            child = node[key] = _finish(child, (path, key), keep_empty_maps, declared)
            if not child and not (
                keep_empty_maps
                if type(child) is dict
                else declared and declared_empty_is_a_value(key)
            ):
                empty.append(key)
        elif child is None:
            empty.append(key)
        elif maybe or key in _QUANTITY_TAILS:
            node[key] = _quantity(child, (path, key))
    for key in empty:
        del node[key]
    return node


_SERVER_METADATA = frozenset(SERVER_METADATA)


def _copy(obj: KubeObject) -> KubeObject:
    """plain(obj) without status and server-set metadata, which are never copied: managedFields
    alone are often as large as the rest of a live object."""
    out: KubeObject = {}
    for k, v in obj.items():
        key = k if type(k) is str else str(k)
        if key == "status":
            continue
        if key == "metadata" and isinstance(v, dict):
            out[key] = {
                name: plain(value)
                for name, value in ((str(mk), mv) for mk, mv in v.items())
                if name not in _SERVER_METADATA
            }
        else:
            out[key] = v if type(v) in _ATOMS else plain(v)
    return out


def normalize(obj: KubeObject, declared: bool = False, schema: Schema | None = None) -> KubeObject:
    """The canonical form of one object (see the module docstring); `declared`: the object is
    what git or a release declares, not what is live; `schema`: the served CRD's (crd.py)."""
    out: KubeObject = _copy(obj)
    api_version = str(out.get("apiVersion", ""))
    group = api_version.rpartition("/")[0]
    kind = str(out.get("kind", ""))
    meta = out.get("metadata")
    if isinstance(meta, dict):
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            for key in ALWAYS_DROPPED_ANNOTATIONS:
                annotations.pop(key, None)
    if group == "" and kind == "Secret":
        _secret(out)
    drop_defaults(out, group, kind, schema)
    if (group, kind) == ("cozystack.io", "Package") and meta and meta.get("name") == PLATFORM:
        drop_platform_chart_defaults(out)
    out = _finish(out, (), group in EMPTY_MAP_IS_A_VALUE, declared)
    # durations after the quantities, as ever; after pruning too, which keeps every string
    for pattern in DURATION_PATHS.get(group, ()):
        for container, at in list(select(out, pattern)):
            if isinstance(container[at], str):
                container[at] = canonical_duration(container[at])
    return out
