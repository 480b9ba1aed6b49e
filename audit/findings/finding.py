"""What an audit reports: findings (DESIGN §6 contract) and the paths they point at.

A path is kept two ways: `segments` (field names, list-item keys such as `Item(name="nginx")`,
set values and indices) for attribution against managedFields, and `path`, the RFC 6901 JSON pointer
into the live object (into the desired one when the live side lacks it), for people and tools.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from kubedata.diff import Segment
from kubedata.objects import KubeObject, ObjectKey

__all__ = [
    "FINDING_TYPES",
    "ID_LENGTH",
    "REVERTS",
    "SEVERITIES",
    "Comparison",
    "Finding",
    "FindingType",
    "Manager",
    "ObjectRef",
    "Revert",
    "Severity",
    "Source",
]

FindingType = Literal["modified", "added", "removed", "missing", "orphan", "suspended", "unmanaged"]
Severity = Literal["high", "medium", "low", "info"]
Revert = Literal["next-reconcile", "next-upgrade", "never", "unknown"]
Comparison = Literal["git", "release", "wiring", "inventory"]

FINDING_TYPES: tuple[FindingType, ...] = (
    "modified",
    "added",
    "removed",
    "missing",
    "orphan",
    "suspended",
    "unmanaged",
)
SEVERITIES: tuple[Severity, ...] = ("high", "medium", "low", "info")
REVERTS: tuple[Revert, ...] = ("next-reconcile", "next-upgrade", "never", "unknown")
ID_LENGTH = 10
"""Hex digits of a finding id: a cluster has tens of findings, so collisions are not a concern."""


@dataclass(frozen=True)
class ObjectRef:
    api_version: str
    kind: str
    namespace: str
    name: str

    @classmethod
    def of(cls, obj: KubeObject) -> ObjectRef:
        meta = obj.get("metadata") or {}
        return cls(
            str(obj.get("apiVersion", "")),
            str(obj.get("kind", "")),
            str(meta.get("namespace") or ""),
            str(meta.get("name", "")),
        )

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def key(self) -> ObjectKey:
        return ObjectKey(self.group, self.kind, self.namespace, self.name)

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"

    def to_json(self) -> dict[str, str]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
        }


@dataclass(frozen=True)
class Manager:
    """One managedFields entry that owns the finding's path (or part of it)."""

    manager: str
    operation: str
    time: str
    subresource: str = ""

    def to_json(self) -> dict[str, str]:
        out = {"manager": self.manager, "operation": self.operation, "time": self.time}
        if self.subresource:
            out["subresource"] = self.subresource
        return out

    def __str__(self) -> str:
        sub = f" /{self.subresource}" if self.subresource else ""
        when = f" at {self.time}" if self.time else ""
        return f"{self.manager} ({self.operation}{sub}{when})"


@dataclass(frozen=True)
class Source:
    """The profile file and field that should own the drifted value."""

    file: str
    field: str
    line: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": self.file, "field": self.field}
        if self.line:
            out["line"] = self.line
        return out

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where} {self.field}"


@dataclass
class Finding:
    """One reportable difference. `desired`/`live` hold plain JSON values (None when absent)."""

    type: FindingType
    object: ObjectRef
    path: str = ""
    segments: tuple[Segment, ...] = ()
    desired: Any = None
    live: Any = None
    comparison: Comparison = "git"
    managers: list[Manager] = field(default_factory=list)
    attributed: bool = True
    """False when no managedFields entry covers the path (cleared, or set by defaulting)."""
    revert: Revert = "unknown"
    revert_release: str | None = None
    missed_by_drift_detection: bool = False
    severity: Severity = "low"
    source: Source | None = None
    message: str = ""
    fix: str = ""
    details: list[str] = field(default_factory=list)
    """Item-level detail of a list change (`added 10DE:2BB1 -> nvidia.com/...`)."""
    vms: list[str] = field(default_factory=list)
    """namespace/name of VirtualMachines that depend on the drifted device."""
    redacted: bool = False
    """desired/live hold digests, and no message quotes them."""

    @property
    def identity(self) -> tuple[Any, ...]:
        """Same object, path, kind of difference and values: reported once across comparisons."""
        return (
            self.object.key,
            self.path,
            self.type,
            json.dumps(self.desired, sort_keys=True, default=str),
            json.dumps(self.live, sort_keys=True, default=str),
        )

    @property
    def id(self) -> str:
        """Stable name of this drift for `gpu-gitops adopt --finding`: a digest of its identity
        (object, path, type and the redacted values), so the same drift has the same id on every
        run and any change of it (a new value, another path) a new one."""
        key, path, ftype, desired, live = self.identity
        text = "\0".join((key.group, key.kind, key.namespace, key.name, path, ftype, desired, live))
        return hashlib.sha256(text.encode()).hexdigest()[:ID_LENGTH]
