"""Canonical form of an object, so that noise compares equal and only drift differs.

`normalize` is pure and returns a new plain-JSON tree:
- server-set metadata (uid, resourceVersion, managedFields...) and `status` are removed
  (CustomResourceDefinitions keep nothing of status either: git never carries it);
- `kubectl.kubernetes.io/last-applied-configuration` is removed (it can hold a whole Secret);
- Secret `stringData` is folded into base64 `data`, as the API server does on write;
- values equal to an API default are removed (known_types.DEFAULTS), so explicit and implied
  defaults read alike; `imagePullPolicy` is defaulted from the image tag; the platform Package's
  values equal to the platform chart's defaults likewise (renderer.cozystack.CHART_DEFAULTS);
- quantities at quantity paths become one spelling (`1073741824` and `1024Mi` -> `1Gi`), Flux
  durations likewise (`10m` = `600s`);
- integral floats become ints (YAML `1.0`), YAML timestamps become RFC 3339 strings;
- null, empty lists and empty maps are removed ("empty vs absent"), except empty maps in groups
  where they are flags (KubeVirt's `disableSerialConsoleLog: {}`).
Injected labels/annotations and server-populated fields are not removed here: they are ignored by
the comparison only when git does not declare them (compare.py), so a declared one still counts.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import datetime as dt
import re
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from audit.known_types import (
    ALWAYS_DROPPED_ANNOTATIONS,
    DEFAULTS,
    DURATION_PATHS,
    EMPTY_MAP_IS_A_VALUE,
    POD_TEMPLATE_ROOTS,
    QUANTITY_PATHS,
    SERVER_METADATA,
    Pattern,
    compile_pattern,
    matches,
)
from audit.quantity import QuantityError, canonical_quantity
from renderer.cozystack import CHART_DEFAULTS as PLATFORM_CHART_DEFAULTS
from renderer.cozystack import PLATFORM_PACKAGE as PLATFORM
from renderer.objects import KubeObject

__all__ = ["canonical_duration", "normalize", "plain", "select"]

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


def plain(value: Any) -> Any:
    """A deep copy as JSON: integral floats -> int, timestamps -> RFC 3339, bytes -> base64."""
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


def select(node: Any, pattern: Pattern) -> Iterator[tuple[Any, str | int]]:
    """(container, key) of every value at `pattern` below `node` (containers are dicts or lists)."""
    if not pattern:
        return
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        yield from select(node, rest)
        for _, child in _children(node):
            yield from select(child, pattern)
        return
    for key, child in _children(node):
        if head == "*" or head == key:
            if rest:
                yield from select(child, rest)
            else:
                yield node, key


def _children(node: Any) -> list[tuple[Any, Any]]:
    if isinstance(node, dict):
        return list(node.items())
    if isinstance(node, list):
        return list(enumerate(node))
    return []


def _delete(container: Any, key: str | int) -> None:
    if isinstance(container, dict):
        container.pop(key, None)
    else:
        container[key] = None  # removed from lists by the empty-pruning pass


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


def _image_pull_policy(image: str) -> str:
    """SetDefaults_Container: Always for :latest or an untagged image, else IfNotPresent."""
    name = image.rsplit("/", 1)[-1]
    if "@" in name:
        return "IfNotPresent"
    tag = name.rpartition(":")[2] if ":" in name else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


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


def _drop_defaults(obj: KubeObject, group: str, kind: str) -> None:
    for default in DEFAULTS.get((group, kind), ()):
        for container, key in list(select(obj, default.path)):
            if container[key] == default.value and type(container[key]) is type(default.value):
                _delete(container, key)
    root = POD_TEMPLATE_ROOTS.get((group, kind))
    if root:
        for box in ("containers", "initContainers"):
            for container, key in list(select(obj, compile_pattern(f"{root}/{box}/*"))):
                item = container[key]
                if (
                    isinstance(item, dict)
                    and isinstance(item.get("image"), str)
                    and item.get("imagePullPolicy") == _image_pull_policy(item["image"])
                ):
                    del item["imagePullPolicy"]


_PLATFORM_VALUES = ("spec", "components", "platform", "values")


def _drop_chart_defaults(values: Any, defaults: Any) -> None:
    """Remove platform values equal to the chart's own defaults (Helm coalescing makes an explicit
    default and an absent key the same input to the chart)."""
    if not isinstance(values, dict) or not isinstance(defaults, dict):
        return
    for key in list(values):
        if key not in defaults:
            continue
        value, default = values[key], defaults[key]
        if isinstance(value, dict) and isinstance(default, dict):
            _drop_chart_defaults(value, default)
        elif value == default and type(value) is type(default):
            del values[key]


def _platform_package(obj: KubeObject) -> None:
    node: Any = obj
    for key in _PLATFORM_VALUES:
        node = node.get(key) if isinstance(node, dict) else None
    _drop_chart_defaults(node, PLATFORM_CHART_DEFAULTS)


_QUANTITY_TAILS = frozenset(p[-2] if p[-1] == "*" else p[-1] for p in QUANTITY_PATHS)
"""Last literal segment of each quantity path: a cheap filter before the glob match."""


def _quantities(node: Any, fpath: tuple[str, ...]) -> None:
    """One walk of the tree, canonicalizing every scalar at a quantity path."""
    items: Any = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in items:
        sub = (*fpath, key if isinstance(key, str) else "*")
        if isinstance(value, dict | list):
            _quantities(value, sub)
        elif (sub[-1] in _QUANTITY_TAILS or (len(sub) > 1 and sub[-2] in _QUANTITY_TAILS)) and any(
            matches(p, sub) for p in QUANTITY_PATHS
        ):
            # not a quantity after all: compared as written
            with contextlib.suppress(QuantityError):
                node[key] = canonical_quantity(value)


def _typed_values(obj: KubeObject, group: str) -> None:
    _quantities(obj, ())
    for pattern in DURATION_PATHS.get(group, ()):
        for container, key in list(select(obj, pattern)):
            if isinstance(container[key], str):
                container[key] = canonical_duration(container[key])


def _prune(value: Any, keep_empty_maps: bool) -> Any:
    """Drop None, [] and {} (the latter only when not flags), bottom-up."""
    if isinstance(value, dict):
        out = {}
        for key, child in value.items():
            child = _prune(child, keep_empty_maps)
            if child is None or child == [] or (child == {} and not keep_empty_maps):
                continue
            out[key] = child
        return out
    if isinstance(value, list):
        return [_prune(v, keep_empty_maps) for v in value if v is not None]
    return value


def normalize(obj: KubeObject) -> KubeObject:
    """The canonical form of one object (see the module docstring)."""
    out: KubeObject = plain(obj)
    api_version = str(out.get("apiVersion", ""))
    group = api_version.rpartition("/")[0]
    kind = str(out.get("kind", ""))
    out.pop("status", None)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        for key in SERVER_METADATA:
            meta.pop(key, None)
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            for key in ALWAYS_DROPPED_ANNOTATIONS:
                annotations.pop(key, None)
    if group == "" and kind == "Secret":
        _secret(out)
    _drop_defaults(out, group, kind)
    if (group, kind) == ("cozystack.io", "Package") and meta and meta.get("name") == PLATFORM:
        _platform_package(out)
    _typed_values(out, group)
    pruned: KubeObject = _prune(out, group in EMPTY_MAP_IS_A_VALUE)
    return pruned
