"""One cluster's change under examination for GPU risk warnings, and the warnings found.

A `RiskCheck` holds the profiles at both refs and the objects built from them; the checks in
risks.py and device_risks.py add a `Risk` for each warning, at the profile line that causes it
(at head; at base for what was removed). Pure: reads no files and runs no builds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kubedata.objects import KubeObject, ObjectKey
from renderer.cozystack_names import platform_values
from renderer.platform_file import PLATFORM_KEY
from renderer.profile import LoadedProfile
from renderer.values.cozystack import effective_values

__all__ = ["Objects", "Risk", "RiskCheck", "RiskKind", "built_platform_values", "shown_names"]

RiskKind = Literal[
    "variant-switch",
    "gpu-operator-removed",
    "device-removed",
    "no-devices",
    "container-hami",
    "drift-detection-off",
    "platform-version",
    "object-removed",
    "object-kept",
    "package-kept",
    "cluster-bootstrap",
    "cluster-renamed",
    "cluster-removed",
    "flux-source",
]

Objects = Mapping[ObjectKey, KubeObject]
_SHOWN_NAMES = 4


@dataclass(frozen=True, order=True)
class Risk:
    """One warning: where (cluster, file:line at `ref`), what kind, what happens and what to do."""

    cluster: str
    file: str
    line: int
    kind: RiskKind
    message: str
    ref: Literal["base", "head"] = "head"

    @property
    def where(self) -> str:
        at = " (base)" if self.ref == "base" else ""
        return f"{self.file}:{self.line}{at}"

    def __str__(self) -> str:
        return f"{self.cluster}: {self.where}: {self.message}"


class RiskCheck:
    """One cluster's profiles and built objects at both refs (no base: a new cluster)."""

    def __init__(
        self,
        name: str,
        base: LoadedProfile | None,
        head: LoadedProfile,
        base_objs: Objects,
        head_objs: Objects,
    ):
        self.name = name
        self.base = base
        self.head = head
        self.base_objs = base_objs
        self.head_objs = head_objs
        self.out: list[Risk] = []

    def add(self, kind: RiskKind, path: tuple[str | int, ...], message: str) -> None:
        self.out.append(Risk(self.name, self.head.file, self.head.line(*path), kind, message))

    def add_written(self, kind: RiskKind, path: tuple[str | int, ...], message: str) -> None:
        """At head where the field is written there, else at base where it was (a removal)."""
        if not self.head.written(*path) and self.base is not None and self.base.written(*path):
            self.add_base(kind, path, message)
        else:
            self.add(kind, path, message)

    def add_base(self, kind: RiskKind, path: tuple[str | int, ...], message: str) -> None:
        assert self.base is not None
        lp = self.base
        self.out.append(Risk(self.name, lp.file, lp.line(*path), kind, message, "base"))


def built_platform_values(objs: Objects) -> dict[str, Any] | None:
    """Effective platform values of the built platform Package (None off Cozystack)."""
    pkg = objs.get(PLATFORM_KEY)
    if pkg is None:
        return None
    return effective_values(platform_values(pkg), (pkg.get("spec") or {}).get("variant"))


def shown_names(names: list[str]) -> str:
    """The first few names, and how many more there are."""
    shown = ", ".join(names[:_SHOWN_NAMES])
    more = len(names) - _SHOWN_NAMES
    return shown + (f" and {more} more" if more > 0 else "")
