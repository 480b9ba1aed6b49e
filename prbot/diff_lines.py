"""What each change of a diff looks like, dyff style: the lines every `diff` format shows.

A changed field is a header line ('!': "± value change", "+ one list entry added"...) and the
values before ('-') and after ('+'); scalars print as YAML would write them, mappings and lists as
YAML blocks. An added or removed object shows its whole body. Pure: works on ObjectChanges.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from kubedata.diff import Item
from kubedata.yaml_io import dump_yaml

from prbot.diff import FieldChange, ObjectChange
from prbot.nodes import NodeChange
from prbot.refdiff import ClusterDiff, RefDiff

__all__ = [
    "change_lines",
    "cluster_counts",
    "headline",
    "node_line",
    "object_lines",
    "object_title",
    "status_note",
]

_MARKS = {"added": "+", "removed": "-", "changed": "±"}
_PLAIN_SCALAR = re.compile(r"[^\s\"'`{}\[\],&*#?|<>=!%@][^\n]*[^\s]|[^\s\"'`{}\[\],&*#?|<>=!%@]")


def _value_lines(value: Any) -> list[str]:
    if isinstance(value, str):
        if value and _PLAIN_SCALAR.fullmatch(value) and value not in ("true", "false", "null"):
            return [value]
        if "\n" in value.rstrip("\n"):
            return value.rstrip("\n").split("\n")
        return [json.dumps(value)]
    if isinstance(value, (dict, list)):
        if not value:
            return [json.dumps(value)]
        return dump_yaml(value).rstrip("\n").split("\n")
    return [json.dumps(value)]


def _type_name(value: Any) -> str:
    names = {dict: "map", list: "list", str: "string", bool: "bool", int: "int", float: "float"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _entry_word(fc: FieldChange) -> str:
    last = fc.path[-1] if fc.path else ""
    return "list entry" if isinstance(last, (int, Item)) else "map entry"


def _entries(n: int) -> str:
    return "one list entry" if n == 1 else f"{n} list entries"


def change_lines(fc: FieldChange) -> list[tuple[str, str]]:
    """(marker, text) lines of one field change: '!' describes it, '-'/'+' give the values."""
    if fc.change == "added":
        return [("!", f"+ one {_entry_word(fc)} added")] + [
            ("+", v) for v in _value_lines(fc.after)
        ]
    if fc.change == "removed":
        return [("!", f"- one {_entry_word(fc)} removed")] + [
            ("-", v) for v in _value_lines(fc.before)
        ]
    if fc.change == "reordered":
        return [
            ("!", "⇆ order changed"),
            ("-", ", ".join(map(str, fc.before))),
            ("+", ", ".join(map(str, fc.after))),
        ]
    before, after = fc.before, fc.after
    if isinstance(before, list) and isinstance(after, list):
        gone = [v for v in before if v not in after]
        new = [v for v in after if v not in before]
        if gone or new:
            counts = [f"{_entries(len(gone))} removed"] if gone else []
            counts += [f"{_entries(len(new))} added"] if new else []
            lines = [("!", "± " + ", ".join(counts))]
            lines += [("-", x) for v in gone for x in _value_lines(v)]
            lines += [("+", x) for v in new for x in _value_lines(v)]
            return lines
    if type(before) is not type(after) and not (
        isinstance(before, (int, float)) and isinstance(after, (int, float))
    ):
        head = f"± type change from {_type_name(before)} to {_type_name(after)}"
    else:
        head = "± value change"
    return (
        [("!", head)]
        + [("-", v) for v in _value_lines(before)]
        + [("+", v) for v in _value_lines(after)]
    )


def object_title(change: ObjectChange) -> str:
    return f"{_MARKS[change.change]} {change.key}"


def object_lines(change: ObjectChange) -> Iterator[tuple[str, str]]:
    """Lines of one object: whole body for added/removed, field changes for changed."""
    if change.change == "added":
        for line in _value_lines(change.after):
            yield "+", line
    elif change.change == "removed":
        for line in _value_lines(change.before):
            yield "-", line
    else:
        for fc in change.fields:
            yield "@", fc.display
            yield from change_lines(fc)


def status_note(c: ClusterDiff) -> str:
    """added, removed, or renamed with the old name."""
    return f"renamed from {c.renamed_from}" if c.renamed_from else c.status


def cluster_counts(c: ClusterDiff) -> str:
    return f"{c.count('added')} added, {c.count('changed')} changed, {c.count('removed')} removed"


def headline(d: RefDiff) -> str:
    changed = sum(1 for c in d.clusters if c.changes)
    return (
        f"{d.base.ref} ({d.base.commit[:7]}) -> {d.head.ref} ({d.head.commit[:7]}): "
        f"{changed} of {d.total} cluster(s) change, {len(d.risks)} warning(s)"
    )


def node_line(n: NodeChange) -> str:
    """One spec.nodes change: node, workload before -> after."""
    before = n.before or "(no label)"
    after = n.after or "(label removed: no longer in spec.nodes)"
    return f"{n.node}: {before} -> {after}"
