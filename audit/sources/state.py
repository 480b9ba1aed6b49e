"""What the steps of one audit share: the desired and live state, and what earlier steps found.

Why this exists: the steps (git_vs_live.py, releases_vs_live.py, wiring_vs_live.py,
vm_devices.py, node_labels.py, inventory.py) run in order (run.py) and build on each other: the
release comparison needs the HelmReleases read first, the wiring comparison the pointers the git
and release comparisons saw, the VM check the findings made so far. They pass this one value
rather than a dozen arguments.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubedata.objects import KubeObject, ObjectKey

from audit.checks.wiring import ExpectedWiring, platform_package
from audit.compare.crd import Schema, schema_of, tables_schema
from audit.compare.crd_tables import KindTable, kind_table
from audit.findings.classify import Controller
from audit.findings.collect import Findings
from audit.findings.provenance import ProfileContext
from audit.sources.desired import Desired
from audit.sources.helm_release import HelmRelease
from audit.sources.live import Live
from audit.sources.running_version import running_version

if TYPE_CHECKING:
    from audit.compare.worker import Worker

__all__ = ["AuditState"]

_SAME: frozenset[str] = frozenset()


@dataclass
class AuditState:
    desired: Desired
    live: Live
    """All reads of the cluster go through it (the only I/O of the steps)."""
    kustomization: KubeObject | None
    """The Flux Kustomization applying the cluster's folder (None: not found)."""
    platform_obj: KubeObject | None
    """The desired Cozystack platform Package (None on a Flux-only cluster)."""
    ctx: ProfileContext
    findings: Findings
    notes: list[str]
    releases: dict[tuple[str, str], HelmRelease] = field(default_factory=dict)
    """Newest deployed revision per (storage namespace, release name)."""
    release_controllers: dict[tuple[str, str], Controller] = field(default_factory=dict)
    """The HelmRelease of each release, as its Controller."""
    compared: dict[ObjectKey, frozenset[str]] = field(default_factory=dict)
    """Each object the git or release comparison compared: the pointers that differed (`saw`)."""
    expected: ExpectedWiring = field(default_factory=ExpectedWiring)
    """The GPU wiring the profile implies."""
    schemas: dict[tuple[str, str], Schema | None] = field(default_factory=dict)
    """(apiVersion, kind) -> the schema of the CRD the cluster serves (None: built-in kind, or no
    CRD to read)."""
    release_schemas: dict[tuple[str, str, str], Schema] = field(default_factory=dict)
    """(group, kind, release or "") -> the schema of the tables for that release ("": for what
    every release agrees on)."""
    worker: Worker | None = None
    """The second process that compares pairs of a large audit (compare/worker.py)."""

    def saw(self, key: ObjectKey, pointers: Iterable[str] = ()) -> None:
        """The git or release comparison compared the object at `key`; `pointers` differed.
        Most differ nowhere and share one empty set (87,000 sets held 22 MB at 100,000 objects)."""
        more = self.compared.get(key, _SAME).union(pointers)
        self.compared[key] = more if more else _SAME

    def schema(self, obj: KubeObject) -> Schema | None:
        """The served schema of a live object's kind and version, read once per audit; without a
        served CRD, the schema of the release the cluster runs where the live state says which,
        else of what every release agrees on (crd_tables.py). Notes which it used."""
        api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        group = api_version.rpartition("/")[0]
        if (api_version, kind) not in self.schemas:
            crd = self.live.crd(group, kind)
            self.schemas[(api_version, kind)] = schema_of(crd, api_version) if crd else None
        served = self.schemas[(api_version, kind)]
        table = kind_table(group, kind)
        if table is None:
            return served
        if served is not None:
            self._note(table, f"{kind}: the defaults and list types of {served.source}, served")
            return served
        return self._release_schema(table, obj)

    def _release_schema(self, table: KindTable, obj: KubeObject) -> Schema:
        every = table.span(table.versions)
        running = running_version(table, obj, self.releases)
        if running is not None and running[0] in table.versions:
            release, how = running
            key = (table.group, table.kind, release)
            if key not in self.release_schemas:
                source = f"{table.product} {release} CRD {table.crd}"
                self.release_schemas[key] = tables_schema(table, frozenset({release}), source)
                self._note(
                    table,
                    f"{table.kind}: no CRD read; the defaults and list types of {table.product} "
                    f"{release} (from {how}), from the tables of every release ({every})",
                )
            return self.release_schemas[key]
        key = (table.group, table.kind, "")
        if key not in self.release_schemas:
            source = f"{table.product} {every} CRD {table.crd}"
            self.release_schemas[key] = tables_schema(table, table.versions, source)
            if running is not None:
                why = f"{table.product} {running[0]} (from {running[1]}) is not in the tables"
            else:
                why = "nothing in the snapshot names the release"
            self._note(
                table,
                f"{table.kind}: no CRD read and {why}: a value counts as a default only where "
                f"every release {every} defaults it (dump "
                f"customresourcedefinitions/{table.crd} with the snapshot to use the cluster's)",
            )
        return self.release_schemas[key]

    def _note(self, table: KindTable, text: str) -> None:
        """Which defaults were used, said where the releases of the kind's CRD disagree."""
        if not table.uniform and text not in self.notes:
            self.notes.append(text)

    @classmethod
    def start(
        cls,
        desired: Desired,
        live: Live,
        kustomization: KubeObject | None,
        worker: Worker | None = None,
    ) -> AuditState:
        platform_obj = platform_package(desired.objects.of_kind("Package"))
        profile = desired.profile
        platform = (
            profile.profile.spec.platform.type
            if profile
            else "cozystack"
            if platform_obj is not None
            else "flux"
        )
        ctx = ProfileContext(desired.cluster, platform, profile)
        return cls(
            desired=desired,
            live=live,
            kustomization=kustomization,
            platform_obj=platform_obj,
            ctx=ctx,
            findings=Findings(ctx),
            notes=list(desired.notes),
            worker=worker,
        )
