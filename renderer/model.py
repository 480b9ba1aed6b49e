"""The GPU profile (DESIGN §3): the contract of clusters/<name>/gpu-profile.yaml.

These classes are the single source of the profile's validation and of its JSON Schema.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from renderer.rules.syntax import (
    CRON_SCHEDULE,
    DNS_LABEL,
    DNS_SUBDOMAIN,
    DURATION,
    EXTENDED_RESOURCE,
    GIT_BRANCH,
    GIT_URL,
    HTTP_URL,
    IMAGE,
    IMAGE_PATH,
    IMAGE_REGISTRY,
    IMAGE_VERSION,
    QUANTITY,
)
from renderer.schema import spec, yaml_key

__all__ = [
    "API_VERSION",
    "VGPU",
    "Architecture",
    "AuditAlerts",
    "AuditJob",
    "AuditResources",
    "Device",
    "Flux",
    "GPUProfile",
    "KubeVirtTarget",
    "Licensing",
    "MediatedDevicesConfiguration",
    "Metadata",
    "NodeMediatedDeviceTypes",
    "Platform",
    "ProfileSpec",
    "ResourceList",
    "VGPUManager",
    "Variant",
    "Workload",
    "to_data",
]

API_VERSION = "gpu-gitops/v1alpha1"
Variant = Literal["passthrough", "vgpu", "container", "none"]
Workload = Literal["container", "vm-passthrough", "vm-vgpu"]
Architecture = Literal["pascal", "volta", "turing", "ampere", "hopper", "ada", "blackwell"]


@dataclass(frozen=True)
class Metadata:
    """Identity of the profile."""

    name: str = spec(
        "Cluster name; must equal the folder name under clusters/.",
        pattern=DNS_LABEL,
        hint="is not a DNS-1123 label; use lower-case letters, digits and '-', at most 63",
    )


@dataclass(frozen=True)
class Platform:
    """What runs the cluster: Cozystack, or plain Flux with KubeVirt."""

    type: Literal["cozystack", "flux"] = spec("cozystack or flux.")
    version: str | None = spec(
        'Cozystack minor version: "1.5", "1.6" or "main" (main at the pinned chart commit).',
        default=None,
    )


@dataclass(frozen=True)
class Device:
    """A GPU class this cluster offers: a PCI device (passthrough, SR-IOV vGPU) or an mdev type."""

    class_: str = spec("Human name of the GPU class.", key="class")
    resource_name: str = spec(
        "Extended resource the device plugin advertises (domain/name).", syntax=EXTENDED_RESOURCE
    )
    pci_vendor_selector: str | None = spec(
        "PCI vendor:device, hex (VVVV:DDDD).",
        default=None,
        pattern=r"[0-9A-Fa-f]{4}:[0-9A-Fa-f]{4}",
        hint='is not vendor:device hex; write 4 hex digits, ":", 4 hex digits, e.g. "10DE:2BB5"',
    )
    mdev_name_selector: str | None = spec(
        "vGPU mediated device type name, as in mdev_supported_types/*/name.", default=None
    )
    external_resource_provider: bool = spec(
        "true when the GPU Operator's sandbox device plugin serves the device.", default=True
    )
    architecture: Architecture | None = spec(
        "GPU architecture, for rules that depend on it.", default=None
    )


@dataclass(frozen=True)
class NodeMediatedDeviceTypes:
    """Mediated device types for the nodes a selector picks (KubeVirt's shape)."""

    node_selector: dict[str, str] = spec("Node labels to match.")
    mediated_device_types: list[str] | None = spec("nvidia-NNN type ids.", default=None)
    mediated_devices_types: list[str] | None = spec("Deprecated spelling.", default=None)


@dataclass(frozen=True)
class MediatedDevicesConfiguration:
    """KubeVirt's spec.configuration.mediatedDevicesConfiguration (vgpu only)."""

    mediated_device_types: list[str] | None = spec("nvidia-NNN type ids.", default=None)
    mediated_devices_types: list[str] | None = spec("Deprecated spelling.", default=None)
    node_mediated_device_types: list[NodeMediatedDeviceTypes] | None = spec(
        "Per-node-selector types.", default=None
    )
    enabled: bool | None = spec("false stops KubeVirt creating mdevs itself.", default=None)


@dataclass(frozen=True)
class VGPUManager:
    """The vGPU Manager image (not redistributable: a private registry)."""

    repository: str = spec("Registry path of the image.", default="", syntax=IMAGE_REGISTRY)
    image: str = spec("Image name.", default="vgpu-manager", syntax=IMAGE_PATH)
    version: str = spec("Image tag (or sha256:<digest>).", default="", syntax=IMAGE_VERSION)
    image_pull_secrets: list[str] = spec(
        "Pull Secret names (strings).",
        factory=list,
        pattern=DNS_SUBDOMAIN,
        hint="is not a valid Secret name (DNS-1123 subdomain)",
    )


@dataclass(frozen=True)
class Licensing:
    """NVIDIA License System client configuration (CLS or DLS token + gridd.conf)."""

    secret_name: str = spec(
        "Secret holding client_configuration_token.tok and gridd.conf.",
        default="",
        pattern=f"({DNS_SUBDOMAIN})?",
        hint="is not a valid Secret name (DNS-1123 subdomain)",
    )
    config_map_name: str = spec("Deprecated: use secretName.", default="")


@dataclass(frozen=True)
class VGPU:
    """vGPU settings."""

    manager: VGPUManager = spec("vGPU Manager image.", factory=VGPUManager)
    device_manager: bool = spec(
        "Run NVIDIA's vGPU Device Manager (Pascal..Ampere only).", default=False
    )
    licensing: Licensing = spec("Guest-driver licensing.", factory=Licensing)


@dataclass(frozen=True)
class Flux:
    """How Flux pulls the rendered output."""

    interval: str = spec(
        "Reconcile interval.",
        default="10m",
        pattern=DURATION,
        hint='is not a Go duration, e.g. "10m"',
    )
    drift_detection: Literal["enabled", "warn", "disabled"] = spec(
        "driftDetection.mode of the HelmReleases this tool emits.", default="enabled"
    )
    url: str | None = spec(
        "GitRepository URL of the rendered branch (default: origin).",
        default=None,
        syntax=GIT_URL,
    )
    secret_ref: str | None = spec(
        "Secret with git credentials, in Flux's namespace.",
        default=None,
        pattern=DNS_SUBDOMAIN,
        hint="is not a valid Secret name (DNS-1123 subdomain)",
    )
    branch: str = spec("Rendered branch.", default="rendered", syntax=GIT_BRANCH)


@dataclass(frozen=True)
class KubeVirtTarget:
    """Plain Flux only: where the KubeVirt CR lives and what else it needs."""

    namespace: str = spec(
        "Namespace of the KubeVirt CR.",
        default="kubevirt",
        pattern=DNS_LABEL,
        hint="is not a namespace name (DNS-1123 label)",
    )
    name: str = spec(
        "Name of the KubeVirt CR.",
        default="kubevirt",
        pattern=DNS_SUBDOMAIN,
        hint="is not an object name (DNS-1123 subdomain)",
    )
    version: str = spec(
        'KubeVirt minor version, e.g. "1.8".',
        default="1.8",
        pattern=r"[0-9]+\.[0-9]+",
        hint='is not a minor version like "1.8"',
    )
    feature_gates: list[str] = spec(
        "Feature gates the cluster needs beyond the live ones (kubevirt.yaml); kept with them.",
        factory=list,
    )
    remove_feature_gates: list[str] = spec(
        "Live feature gates to turn off: the only way a gate of kubevirt.yaml leaves the list.",
        factory=list,
    )


@dataclass(frozen=True)
class ResourceList:
    """Kubernetes quantities of a container's resources: the names a plain Job container takes."""

    cpu: str | None = spec('CPU, e.g. "100m" or "1".', default=None, syntax=QUANTITY)
    memory: str | None = spec('Memory, e.g. "512Mi".', default=None, syntax=QUANTITY)
    ephemeral_storage: str | None = spec(
        'Local scratch space, e.g. "1Gi".', default=None, key="ephemeral-storage", syntax=QUANTITY
    )


@dataclass(frozen=True)
class AuditResources:
    """Requests and limits of the audit container (Kubernetes quantities)."""

    requests: ResourceList = spec(
        "Requests (default cpu 250m, memory 768Mi: nearly twice the measured peak of an audit "
        "of 100,000 objects, 406 MiB; 250m keeps one of 200,000 inside its deadline).",
        factory=lambda: ResourceList(cpu="250m", memory="768Mi"),
    )
    limits: ResourceList = spec(
        "Limits (default memory 1536Mi, over twice the measured peak at 200,000 objects, "
        "697 MiB; no CPU limit, which would only slow the run down). Each is at least its "
        "request.",
        factory=lambda: ResourceList(memory="1536Mi"),
    )


@dataclass(frozen=True)
class AuditAlerts:
    """The audit's PrometheusRule: how the Prometheus finds it, where its runbooks are."""

    labels: dict[str, str] = spec(
        "Labels of the PrometheusRule, for the Prometheus's ruleSelector (kube-prometheus-stack: "
        "release: <its Helm release name>).",
        factory=dict,
    )
    runbook_base_url: str | None = spec(
        "Each alert's runbook_url is BASE/<alert name in lower case>; default: the README "
        "section of the alert, at the version that rendered.",
        default=None,
        key="runbookBaseURL",
        syntax=HTTP_URL,
    )


@dataclass(frozen=True)
class AuditJob:
    """The nightly drift-audit CronJob."""

    schedule: str = spec(
        "Cron schedule: five fields or a macro like @daily.",
        default="17 3 * * *",
        syntax=CRON_SCHEDULE,
    )
    image: str = spec(
        "Image holding gpu-gitops; default: the published image of the version that rendered.",
        default="",
        syntax=IMAGE,
    )
    output: Literal["text", "json", "markdown", "prometheus"] = spec(
        "Report format in the job's log.", default="json"
    )
    pushgateway: str | None = spec(
        "Prometheus Pushgateway URL the metrics are pushed to (grouped by job and cluster).",
        default=None,
        syntax=HTTP_URL,
    )
    alerts: bool | AuditAlerts = spec(
        "Render a PrometheusRule (high drift, audit incomplete, no complete audit for 36h): "
        "true, or its settings.",
        default=False,
    )
    resources: AuditResources = spec("Requests and limits of the job.", factory=AuditResources)


@dataclass(frozen=True)
class ProfileSpec:
    """The GPU setup of one cluster."""

    platform: Platform = spec("Cozystack or plain Flux.")
    variant: Variant = spec("One GPU Operator variant for the whole cluster.")
    devices: list[Device] = spec("GPU classes this cluster offers.", factory=list)
    replace_defaults: bool = spec(
        "Cozystack: drop the platform's built-in device table.", default=False
    )
    mediated_devices_configuration: MediatedDevicesConfiguration = spec(
        "vgpu only, KubeVirt's shape.", factory=MediatedDevicesConfiguration
    )
    vgpu: VGPU = spec("vGPU settings.", factory=VGPU)
    hami: bool = spec("Install HAMi GPU sharing.", default=False)
    nodes: dict[str, Workload] = spec("Node name -> nvidia.com/gpu.workload.config.", factory=dict)
    flux: Flux = spec("Flux settings.", factory=Flux)
    kubevirt: KubeVirtTarget = spec("Plain Flux only: the KubeVirt CR.", factory=KubeVirtTarget)
    gpu_operator_version: str = spec(
        "Plain Flux only: GPU Operator chart version.",
        default="v26.3.1",
        pattern=r"v?[0-9]+\.[0-9]+\.[0-9]+",
        hint='is not a chart version like "v26.3.1"',
    )
    audit: AuditJob | None = spec("Nightly drift-audit CronJob; absent: none.", default=None)


@dataclass(frozen=True)
class GPUProfile:
    """A gpu-gitops GPU profile: clusters/<name>/gpu-profile.yaml."""

    api_version: Literal["gpu-gitops/v1alpha1"] = spec("Always gpu-gitops/v1alpha1.")
    kind: Literal["GPUProfile"] = spec("Always GPUProfile.")
    metadata: Metadata = spec("Identity.")
    spec: ProfileSpec = spec("The GPU setup.")


def to_data(obj: Any) -> Any:
    """A model value as plain YAML data in its YAML spelling, leaving out unset (None) fields."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if value is not None:
                out[yaml_key(f)] = to_data(value)
        return out
    if isinstance(obj, (list, tuple)):
        return [to_data(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_data(v) for k, v in obj.items()}
    return obj
