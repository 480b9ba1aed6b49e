"""Values equal to a default are removed, so an explicit default and an absent field read alike.

Why this exists: the API server fills in defaults git never declares (Kubernetes and CRD schema
defaults of every known version, known_types.DEFAULTS; those of some versions only are told
apart from an edit by who owns them, `is_known_default`; `imagePullPolicy` from the image tag),
and Helm coalesces the platform chart's defaults into values
(renderer.values.cozystack.CHART_DEFAULTS): without this step every such field would read as
drift. It runs inside normalize.py, on normalize's own copy.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from kubedata.objects import KubeObject
from renderer.cozystack_names import platform_values
from renderer.values.cozystack import CHART_DEFAULTS as PLATFORM_CHART_DEFAULTS

from audit.compare.crd import Schema
from audit.compare.known_types import DEFAULTS, POD_TEMPLATE_ROOTS, Default
from audit.compare.patterns import Pattern, children, compile_pattern, matches, select

__all__ = ["drop_defaults", "drop_platform_chart_defaults", "is_known_default"]


def _delete(container: Any, key: str | int) -> None:
    """Remove a map key; blank a list item (the pruning pass of normalize.py removes it)."""
    if isinstance(container, dict):
        container.pop(key, None)
    else:
        container[key] = None  # removed from lists by the empty-pruning pass


def _image_pull_policy(image: str) -> str:
    """SetDefaults_Container: Always for :latest or an untagged image, else IfNotPresent."""
    name = image.rsplit("/", 1)[-1]
    if "@" in name:
        return "IfNotPresent"
    tag = name.rpartition(":")[2] if ":" in name else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


_Trie = dict[str, Any]
"""Path segment -> sub-trie; the key `_LEAF` holds the default values that end there."""
_LEAF = "\x00"


def _trie(defaults: Iterable[Default]) -> _Trie:
    """Default paths as a trie, so one walk of an object visits each path once (paths with `**`
    are left to `select`; defaults of some versions only are not normalized away)."""
    trie: _Trie = {}
    for default in defaults:
        if "**" in default.path or not default.universal:
            continue
        node = trie
        for segment in default.path:
            node = node.setdefault(segment, {})
        node.setdefault(_LEAF, []).append(default.value)
    return trie


@cache
def _defaults_trie(group: str, kind: str) -> _Trie:
    """The trie of the kind's known defaults (known_types.DEFAULTS)."""
    return _trie(DEFAULTS.get((group, kind), ()))


_SCHEMA_TRIES: dict[int, tuple[Schema, _Trie]] = {}
"""id(schema) -> (schema, its trie with the known defaults): one per served CRD of an audit."""


def _schema_trie(group: str, kind: str, schema: Schema) -> _Trie:
    """The known defaults and those of the CRD the cluster serves, as one trie."""
    found = _SCHEMA_TRIES.get(id(schema))
    if found is None or found[0] is not schema:
        found = _SCHEMA_TRIES[id(schema)] = (
            schema,
            _trie((*DEFAULTS.get((group, kind), ()), *schema.defaults)),
        )
    return found[1]


def _walk_defaults(node: Any, trie: _Trie) -> None:
    """Delete the values at the trie's paths below `node` that equal a default there."""
    for segment, sub in trie.items():
        if segment == _LEAF:
            continue
        if segment == "*":
            found = children(node)
        elif isinstance(node, dict) and segment in node:
            found = [(segment, node[segment])]
        else:
            continue
        for key, child in found:
            values = sub.get(_LEAF)
            if values is not None and any(
                child == value and type(child) is type(value) for value in values
            ):
                _delete(node, key)
                continue
            if len(sub) > (values is not None):
                _walk_defaults(child, sub)


@cache
def _container_patterns(root: str) -> tuple[Pattern, ...]:
    return tuple(compile_pattern(f"{root}/{box}/*") for box in ("containers", "initContainers"))


def drop_defaults(obj: KubeObject, group: str, kind: str, schema: Schema | None = None) -> None:
    """Remove, in place, the values equal to an API default of the kind (known_types.DEFAULTS,
    and the served CRD's `schema`), and imagePullPolicy where it is what the image tag implies."""
    trie = _defaults_trie(group, kind) if schema is None else _schema_trie(group, kind, schema)
    if trie:
        _walk_defaults(obj, trie)
    for default in DEFAULTS.get((group, kind), ()):
        if "**" in default.path and default.universal:
            for container, key in list(select(obj, default.path)):
                if container[key] == default.value and type(container[key]) is type(default.value):
                    _delete(container, key)
    root = POD_TEMPLATE_ROOTS.get((group, kind))
    if root:
        for pattern in _container_patterns(root):
            for container, key in list(select(obj, pattern)):
                item = container[key]
                if (
                    isinstance(item, dict)
                    and isinstance(item.get("image"), str)
                    and item.get("imagePullPolicy") == _image_pull_policy(item["image"])
                ):
                    del item["imagePullPolicy"]


def is_known_default(group: str, kind: str, field_path: tuple[str, ...], value: Any) -> bool:
    """Whether `value` at `field_path` (`*` for list items) is what some known version of the
    kind defaults there; a map is when every value in it is (known_types.Default.universal)."""
    if isinstance(value, dict):
        return bool(value) and all(
            is_known_default(group, kind, (*field_path, key), sub) for key, sub in value.items()
        )
    return any(
        value == default.value
        and type(value) is type(default.value)
        and matches(default.path, field_path)
        for default in DEFAULTS.get((group, kind), ())
    )


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


def drop_platform_chart_defaults(obj: KubeObject) -> None:
    """Remove, in place, the platform Package's values equal to the platform chart's defaults."""
    _drop_chart_defaults(platform_values(obj), PLATFORM_CHART_DEFAULTS)
