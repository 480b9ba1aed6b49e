"""What the steps of one audit share: the desired and live state, and what earlier steps found.

Why this exists: the steps (git_vs_live.py, releases_vs_live.py, wiring_vs_live.py,
vm_devices.py, node_labels.py, inventory.py) run in order (run.py) and build on each other: the
release comparison needs the HelmReleases read first, the wiring comparison the pointers the git
and release comparisons saw, the VM check the findings made so far. They pass this one value
rather than a dozen arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubedata.objects import KubeObject, ObjectKey

from audit.checks.wiring import ExpectedWiring, platform_package
from audit.compare.crd import Schema, schema_of
from audit.findings.classify import Controller
from audit.findings.collect import Findings
from audit.findings.provenance import ProfileContext
from audit.sources.desired import Desired
from audit.sources.helm_release import HelmRelease
from audit.sources.live import Live

__all__ = ["AuditState"]


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
    compared: dict[ObjectKey, set[str]] = field(default_factory=dict)
    """Pointers of each object compared by the git or release comparison, per object."""
    expected: ExpectedWiring = field(default_factory=ExpectedWiring)
    """The GPU wiring the profile implies."""
    schemas: dict[tuple[str, str], Schema | None] = field(default_factory=dict)
    """(apiVersion, kind) -> the schema of the CRD the cluster serves (None: built-in kind, or no
    CRD to read)."""

    def schema(self, obj: KubeObject) -> Schema | None:
        """The served schema of a live object's kind and version, read once per audit."""
        api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        if (api_version, kind) not in self.schemas:
            crd = self.live.crd(api_version.rpartition("/")[0], kind)
            self.schemas[(api_version, kind)] = schema_of(crd, api_version) if crd else None
        return self.schemas[(api_version, kind)]

    @classmethod
    def start(cls, desired: Desired, live: Live, kustomization: KubeObject | None) -> AuditState:
        platform_obj = platform_package(desired.objects)
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
        )
