"""Malformed profiles through the CLI, in process: one clear message each, exit 2, nothing written.

Each case runs `validate`, `render` and `build --cluster c1` on a repository holding the bad
cluster c1, a valid cluster ok1 and an overlays/ tree from an earlier render. Every file (and
directory) of the repository must be byte-identical afterwards.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gpu_gitops.cli import main
from gpu_gitops.console import Console
from renderer.profile import MAX_FILE_BYTES
from renderer.rules.versions import KNOWN
from tests.renderer.profile_texts import IMPORTED, kubevirt_text, write_cluster

F = "clusters/c1/gpu-profile.yaml"
PF = "clusters/c1/platform.yaml"


def P(body: str) -> str:
    """A profile of cluster c1: the header is lines 1-5, `body` starts on line 6."""
    return (
        "apiVersion: gpu-gitops/v1alpha1\nkind: GPUProfile\nmetadata:\n  name: c1\nspec:\n" + body
    )


FLUX = "  platform: {type: flux}\n"
COZY = '  platform: {type: cozystack, version: "1.6"}\n'
L40S = (
    "  devices:\n"
    "    - class: L40S\n"
    '      pciVendorSelector: "10DE:26B9"\n'
    "      resourceName: nvidia.com/AD102GL_L40S\n"
)
MANAGER = "  vgpu: {manager: {repository: registry.example.com/nvidia, version: '550.144.02'}}\n"


def PLATFORM(variant: str = "isp-full", values: str = " {}\n") -> str:
    """The live platform Package: spec.variant on line 6, `values:` on line 9."""
    return (
        "apiVersion: cozystack.io/v1alpha1\nkind: Package\nmetadata:\n"
        f"  {{name: cozystack.cozystack-platform, annotations: {IMPORTED}}}\n"
        f"spec:\n  variant: {variant}\n"
        f"  components:\n    platform:\n      values:{values}"
    )


def _bomb() -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


BIG = P(FLUX + "  variant: none\n") + "# " + "x" * MAX_FILE_BYTES + "\n"

# (id, profile, platform.yaml or None, expected stderr lines)
CASES: list[tuple[str, str | bytes, str | None, list[str]]] = [
    # --- YAML ---------------------------------------------------------------------------------
    (
        "yaml-unclosed-flow-mapping",
        P("  platform: {type: flux\n  variant: passthrough\n"),
        None,
        [
            f"{F}:7: error: YAML syntax error: did not find expected ',' or '}}' "
            "(while parsing a flow mapping that starts on line 6)"
        ],
    ),
    (
        "yaml-bad-indentation",
        P("  platform:\n    type: flux\n   variant: passthrough\n"),
        None,
        [
            f"{F}:8: error: YAML syntax error: did not find expected key "
            "(while parsing a block mapping that starts on line 6)"
        ],
    ),
    (
        "yaml-tab-indentation",
        P("  platform:\n\ttype: flux\n"),
        None,
        [f"{F}:7: error: YAML syntax error: found character that cannot start any token"],
    ),
    (
        "yaml-unclosed-quote",
        P(FLUX + '  variant: "passthrough\n'),
        None,
        [
            f"{F}:8: error: YAML syntax error: found unexpected end of stream "
            "(while scanning a quoted scalar that starts on line 7)"
        ],
    ),
    (
        "yaml-control-character",
        P(FLUX + "  variant: none\x00\n"),
        None,
        [
            f"{F}:7: error: YAML syntax error: unacceptable character #x0000: "
            "control characters are not allowed"
        ],
    ),
    ("empty-file", "", None, [f"{F}: error: the file is empty; it must hold one document"]),
    (
        "comments-only",
        "# TODO: fill in\n\n",
        None,
        [f"{F}: error: the file is empty; it must hold one document"],
    ),
    (
        "yaml-alias-bomb",
        _bomb(),
        None,
        [f"{F}:1: error: YAML anchors and aliases are not allowed; write the value out"],
    ),
    (
        "yaml-nested-500-deep",
        P(FLUX + "  variant: none\n  nodes: " + "[" * 500 + "]" * 500 + "\n"),
        None,
        [f"{F}:8: error: nested more than 64 levels deep; flatten the value"],
    ),
    (
        "yaml-merge-key",
        P(FLUX + "  variant: none\n  flux:\n    <<: {interval: 5m}\n"),
        None,
        [f"{F}:9: error: YAML merge keys (<<) are not allowed"],
    ),
    (
        "yaml-duplicate-key",
        P(FLUX + "  variant: passthrough\n  variant: vgpu\n"),
        None,
        [f'{F}:8: error: duplicate key "variant"; keep one of them'],
    ),
    (
        "yaml-two-documents",
        P(FLUX + "  variant: none\n") + "---\n" + P(FLUX + "  variant: none\n"),
        None,
        [f"{F}:9: error: more than one YAML document; keep one"],
    ),
    (
        "yaml-python-tag",
        P(FLUX + "  variant: !!python/object/apply:os.system [id]\n"),
        None,
        [
            f'{F}:7: error: cannot read the value tagged "!!python/object/apply:os.system"; '
            "remove the tag"
        ],
    ),
    ("top-level-list", "- c1\n", None, [f"{F}:1: error: expected a mapping, got a list"]),
    (
        "oversized-file",
        BIG,
        None,
        [f"{F}: error: file is {len(BIG.encode())} bytes, over the 262144 limit"],
    ),
    (
        "not-utf8",
        P(FLUX + "  variant: none\n").encode() + b"# Z\xfcrich\n",
        None,
        [f"{F}: error: not UTF-8 text"],
    ),
    # --- fields --------------------------------------------------------------------------------
    (
        "unknown-field-did-you-mean",
        P(FLUX + "  variant: passthrough\n  replaceDefault: true\n" + L40S),
        None,
        [f'{F}:8: error: spec.replaceDefault: unknown field; did you mean "replaceDefaults"?'],
    ),
    (
        "unknown-field-known-list",
        P(FLUX + "  variant: none\n").replace("  name: c1\n", "  name: c1\n  labels: {}\n"),
        None,
        [f"{F}:5: error: metadata.labels: unknown field; known: name"],
    ),
    (
        "enum-did-you-mean",
        P(FLUX + "  variant: passtrough\n"),
        None,
        [
            f'{F}:7: error: spec.variant: "passtrough" (a string) is not one of passthrough, '
            'vgpu, container, none; did you mean "passthrough"?'
        ],
    ),
    (
        "bool-as-string",
        P(FLUX + '  variant: none\n  hami: "yes"\n'),
        None,
        [f'{F}:8: error: spec.hami: expected true or false, got "yes" (a string)'],
    ),
    (
        "version-as-float",
        P("  platform: {type: cozystack, version: 1.10}\n  variant: passthrough\n"),
        None,
        [
            f"{F}:6: error: spec.platform.version: expected a string, got 1.1 (float); "
            "put it in quotes"
        ],
    ),
    (
        "devices-as-mapping",
        P(FLUX + "  variant: passthrough\n  devices:\n    L40S: 10DE:26B9\n"),
        None,
        [f"{F}:8: error: spec.devices: expected a list, got a mapping"],
    ),
    (
        "missing-variant",
        P(FLUX),
        None,
        [f"{F}:5: error: spec.variant: required field is missing"],
    ),
    (
        "missing-resource-name",
        P(
            FLUX + "  variant: passthrough\n  devices:\n    - class: L40S\n"
            '      pciVendorSelector: "10DE:26B9"\n'
        ),
        None,
        [f"{F}:9: error: spec.devices[0].resourceName: required field is missing"],
    ),
    (
        "wrong-api-version",
        P(FLUX + "  variant: none\n").replace("v1alpha1", "v1beta1"),
        None,
        [
            f'{F}:1: error: apiVersion: "gpu-gitops/v1beta1" (a string) is not one of '
            'gpu-gitops/v1alpha1; did you mean "gpu-gitops/v1alpha1"?'
        ],
    ),
    (
        "name-not-the-folder-name",
        P(FLUX + "  variant: none\n").replace("name: c1", "name: ams1"),
        None,
        [
            f'{F}:4: error: metadata.name: "ams1" must equal the folder name "c1"; '
            "rename one of them"
        ],
    ),
    (
        "name-not-a-dns-label",
        P(FLUX + "  variant: none\n").replace("name: c1", "name: ../c1"),
        None,
        [
            f'{F}:4: error: metadata.name: "../c1" is not a DNS-1123 label; use lower-case '
            "letters, digits and '-', at most 63"
        ],
    ),
    (
        "flux-interval-not-a-duration",
        P(FLUX + "  variant: none\n  flux: {interval: 10 minutes}\n"),
        None,
        [f'{F}:8: error: spec.flux.interval: "10 minutes" is not a Go duration, e.g. "10m"'],
    ),
    (
        "node-workload-unknown",
        P(FLUX + "  variant: passthrough\n" + L40S + "  nodes: {gpu-1: gpu}\n"),
        None,
        [
            f'{F}:12: error: spec.nodes.gpu-1: "gpu" (a string) is not one of container, '
            'vm-passthrough, vm-vgpu; did you mean "vm-vgpu"?'
        ],
    ),
    # --- values other programs would refuse (renderer/rules/syntax.py) --------------------------
    (
        "audit-schedule-in-words",
        P(
            FLUX
            + "  variant: none\n  audit: {schedule: every night, image: ghcr.io/x/gpu-gitops:1}\n"
        ),
        None,
        [
            f'{F}:8: error: spec.audit.schedule: "every night" has 2 fields; write five fields '
            '(minute hour day-of-month month day-of-week, e.g. "17 3 * * *") or one of @yearly, '
            "@annually, @monthly, @weekly, @daily, @midnight, @hourly, @every DURATION"
        ],
    ),
    (
        "audit-schedule-six-fields",
        P(FLUX + "  variant: none\n  audit:\n    schedule: 0 0 3 * * *\n    image: gpu-gitops\n"),
        None,
        [
            f'{F}:9: error: spec.audit.schedule: "0 0 3 * * *" has 6 fields (a CronJob has no '
            "seconds field); write five fields (minute hour day-of-month month day-of-week, e.g. "
            '"17 3 * * *") or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, '
            "@hourly, @every DURATION"
        ],
    ),
    (
        "audit-image-with-space",
        P(FLUX + "  variant: none\n  audit:\n    image: ghcr.io/x/gpu gitops:1\n"),
        None,
        [
            f'{F}:9: error: spec.audit.image: "ghcr.io/x/gpu gitops:1" contains whitespace; '
            "write [registry[:port]/]path[:tag][@sha256:...], e.g. ghcr.io/example/gpu-gitops:0.1.0"
        ],
    ),
    (
        "audit-resources-not-quantities",
        P(
            FLUX
            + "  variant: none\n  audit:\n    resources:\n      requests:\n"
            + "        memory: 512MB\n        cpu: lots\n      limits:\n        memroy: 1Gi\n"
            + "        ephemeral-storage: -1Gi\n"
        ),
        None,
        [
            f'{F}:11: error: spec.audit.resources.requests.memory: "512MB" is not a Kubernetes '
            "quantity; write a number and a suffix: Ki Mi Gi Ti Pi Ei (powers of 1024), "
            'n u m k M G T P E (of 1000) or e<N>, e.g. "512Mi" or "250m"',
            f'{F}:12: error: spec.audit.resources.requests.cpu: "lots" is not a Kubernetes '
            "quantity; write a number and a suffix: Ki Mi Gi Ti Pi Ei (powers of 1024), "
            'n u m k M G T P E (of 1000) or e<N>, e.g. "512Mi" or "250m"',
            f"{F}:14: error: spec.audit.resources.limits.memroy: unknown field; "
            'did you mean "memory"?',
            f'{F}:15: error: spec.audit.resources.limits.ephemeral-storage: "-1Gi" is negative; '
            "a request or limit is at least 0",
        ],
    ),
    (
        "audit-request-above-limit",
        P(
            FLUX
            + "  variant: none\n  audit:\n    resources:\n"
            + "      requests: {cpu: 1500m, memory: 2Gi}\n"
            + "      limits: {cpu: '1.5', memory: 2000Mi}\n"
        ),
        None,
        [
            f'{F}:10: error: spec.audit.resources.requests.memory: memory request "2Gi" is above '
            'its limit "2000Mi" (spec.audit.resources.limits.memory); the API server refuses the '
            "CronJob and with it the cluster's whole Kustomization: lower the request or raise "
            "the limit",
        ],
    ),
    (
        "flux-branch-empty",
        P(FLUX + '  variant: none\n  flux: {branch: ""}\n'),
        None,
        [f'{F}:8: error: spec.flux.branch: is empty; name the branch, e.g. "rendered"'],
    ),
    (
        "flux-branch-with-space",
        P(FLUX + "  variant: none\n  flux: {branch: rendered output}\n"),
        None,
        [
            f'{F}:8: error: spec.flux.branch: "rendered output" has a space or a control '
            'character, so git refuses it as a branch name; e.g. "rendered"'
        ],
    ),
    (
        "flux-url-scp-like",
        P(FLUX + "  variant: none\n  flux: {url: 'git@github.com:org/gitops.git'}\n"),
        None,
        [
            f'{F}:8: error: spec.flux.url: "git@github.com:org/gitops.git" is scp-like '
            '"user@host:path"; write http|https|ssh://HOST[:PORT][/PATH]'
        ],
    ),
    (
        "flux-url-with-password",
        P(FLUX + "  variant: none\n  flux: {url: 'https://bot:hunter2@git.example.com/g.git'}\n"),
        None,
        [
            f"{F}:8: error: spec.flux.url: https://...: carries a password; put credentials "
            "in a Secret, not the URL"
        ],
    ),
    (
        "vgpu-manager-version-with-space",
        P(
            FLUX
            + "  variant: vgpu\n"
            + "  vgpu: {manager: {repository: nvcr.io/nvidia, version: 550 144}}\n"
            + "  devices:\n    - {class: A100 20C, mdevNameSelector: NVIDIA A100-20C,"
            " resourceName: nvidia.com/NVIDIA_A100-20C}\n"
        ),
        None,
        [
            f'{F}:8: error: spec.vgpu.manager.version: "550 144" contains whitespace; '
            'e.g. "550.144.02" or sha256:<64 hex>'
        ],
    ),
    # --- devices (rule 5) ---------------------------------------------------------------------
    (
        "pci-selector-bad-hex",
        P(FLUX + "  variant: passthrough\n" + L40S.replace("10DE:26B9", "10DE:26BG")),
        None,
        [
            f'{F}:10: error: spec.devices[0].pciVendorSelector: "10DE:26BG" is not vendor:device '
            'hex; write 4 hex digits, ":", 4 hex digits, e.g. "10DE:2BB5"'
        ],
    ),
    (
        "pci-selector-no-colon",
        P(FLUX + "  variant: passthrough\n" + L40S.replace("10DE:26B9", "10DE26B9")),
        None,
        [
            f'{F}:10: error: spec.devices[0].pciVendorSelector: "10DE26B9" is not vendor:device '
            'hex; write 4 hex digits, ":", 4 hex digits, e.g. "10DE:2BB5"'
        ],
    ),
    (
        "pci-selector-duplicate",
        P(
            FLUX
            + "  variant: passthrough\n"
            + L40S
            + '    - class: L40S 2\n      pciVendorSelector: "10de:26b9"\n'
            "      resourceName: nvidia.com/AD102GL_L40S\n"
        ),
        None,
        [
            f'{F}:13: error: spec.devices[1].pciVendorSelector: "10de:26b9" repeats '
            "spec.devices[0]; virt-handler keys devices by selector, keep one"
        ],
    ),
    (
        "pci-selector-in-cozystack-defaults",
        P(COZY + "  variant: passthrough\n" + L40S),
        PLATFORM(),
        [
            f'{F}:10: error: spec.devices[0].pciVendorSelector: "10DE:26B9" is already in '
            "Cozystack's default table (nvidia.com/AD102GL_L40S); remove it, or set "
            "spec.replaceDefaults: true and list every device"
        ],
    ),
    (
        "resource-name-with-space",
        P(FLUX + "  variant: passthrough\n" + L40S.replace("AD102GL_L40S", "L40S GPU")),
        None,
        [
            f'{F}:11: error: spec.devices[0].resourceName: "nvidia.com/L40S GPU" is not a valid '
            'extended resource name (domain/name, no spaces), e.g. "nvidia.com/GA102GL_A10"'
        ],
    ),
    (
        "both-selectors",
        P(FLUX + "  variant: passthrough\n" + L40S + "      mdevNameSelector: NVIDIA L40S-24Q\n"),
        None,
        [
            f"{F}:9: error: spec.devices[0]: set either pciVendorSelector or mdevNameSelector, "
            "not both"
        ],
    ),
    # --- Cozystack ------------------------------------------------------------------------------
    (
        "cozystack-version-1.4",
        P('  platform: {type: cozystack, version: "1.4"}\n  variant: passthrough\n'),
        PLATFORM(),
        [
            f'{F}:6: error: spec.platform.version: "1.4" is older than the GPU bundle: GPU wiring '
            f"through the bundle starts at v1.5.0; use {KNOWN}"
        ],
    ),
    (
        "cozystack-version-patch",
        P('  platform: {type: cozystack, version: "1.6.4"}\n  variant: passthrough\n'),
        PLATFORM(),
        [
            f'{F}:6: error: spec.platform.version: "1.6.4" is a patch release: the profile names '
            'the minor version, write "1.6"'
        ],
    ),
    (
        "cozystack-version-tag",
        P('  platform: {type: cozystack, version: "v1.6.2"}\n  variant: passthrough\n'),
        PLATFORM(),
        [
            f'{F}:6: error: spec.platform.version: "v1.6.2" is a patch release: the profile names '
            'the minor version, write "1.6"'
        ],
    ),
    (
        "cozystack-version-newer",
        P('  platform: {type: cozystack, version: "1.7"}\n  variant: passthrough\n'),
        PLATFORM(),
        [
            f'{F}:6: error: spec.platform.version: "1.7" is newer than the versions this tool '
            f"knows: {KNOWN}; upgrade gpu-gitops"
        ],
    ),
    (
        "cozystack-version-missing",
        P("  platform: {type: cozystack}\n  variant: passthrough\n"),
        PLATFORM(),
        [f"{F}:6: error: spec.platform: version is required on Cozystack: {KNOWN}"],
    ),
    (
        "cozystack-container-with-hami",
        P(COZY + "  variant: container\n  hami: true\n"),
        PLATFORM(),
        [
            f"{F}:8: error: spec.hami: on a Cozystack management cluster HAMi and the container "
            "variant both register nvidia.com/gpu; use passthrough with container-labelled "
            "nodes, or drop hami"
        ],
    ),
    (
        "cozystack-sriov-vgpu-on-ada",
        P(COZY + "  variant: vgpu\n" + MANAGER + L40S + "      architecture: ada\n"),
        PLATFORM(),
        [
            f"{F}:10: error: spec.devices[0]: SR-IOV vGPU on ada needs KubeVirt >= 1.9 "
            "(kubevirt#16890) and Cozystack ships 1.8.4; offer this GPU on a passthrough cluster"
        ],
    ),
    (
        "cozystack-iaas-off",
        P(COZY + "  variant: passthrough\n"),
        PLATFORM("default"),
        [
            f'{PF}:6: error: spec.variant: bundles.iaas.enabled is off (platform variant "default"'
            "), so the GPU bundle installs nothing; set the Package's spec.variant to isp-full "
            "or isp-full-generic"
        ],
    ),
    (
        "cozystack-isp-hosted",
        P(
            COZY
            + "  variant: vgpu\n"
            + MANAGER
            + "  devices:\n    - {class: A100 20C, mdevNameSelector: NVIDIA A100-20C,"
            " resourceName: nvidia.com/NVIDIA_A100-20C}\n"
            + "  mediatedDevicesConfiguration: {mediatedDeviceTypes: [nvidia-692]}\n"
        ),
        PLATFORM("isp-hosted"),
        [
            f"{PF}:6: error: spec.variant: the profile's variant vgpu needs KubeVirt GPU wiring, "
            "but this platform is hosted (bundles.system.variant isp-hosted: the host cluster "
            "provides virtualisation, and the iaas bundle never renders here); do not switch the "
            "platform to isp-full, which would install a second network and storage stack over "
            "the host's: offer GPU VMs from the host cluster's profile, and use variant container "
            "or none here"
        ],
    ),
    (
        "cozystack-main-without-system-enabled",
        P('  platform: {type: cozystack, version: "main"}\n  variant: passthrough\n'),
        PLATFORM("default", "\n        bundles:\n          iaas: {enabled: true}\n"),
        [
            f"{PF}:10: error: spec.components.platform.values.bundles.system.enabled: on "
            "Cozystack main the iaas bundle requires bundles.system.enabled: true"
        ],
    ),
    (
        "cozystack-spec-kubevirt",
        P(COZY + "  variant: passthrough\n  kubevirt: {version: '1.9'}\n"),
        PLATFORM(),
        [
            f"{F}:8: error: spec.kubevirt: plain Flux only: on Cozystack the platform renders "
            "the KubeVirt CR and the GPU Operator; remove it"
        ],
    ),
    (
        "platform-yaml-not-a-package",
        P(COZY + "  variant: passthrough\n"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cozystack-platform}\n",
        [
            f'{PF}:1: error: apiVersion: must be "cozystack.io/v1alpha1"',
            f'{PF}:2: error: kind: must be "Package"',
            f'{PF}:3: error: metadata.name: must be "cozystack.cozystack-platform"',
        ],
    ),
    (
        "platform-yaml-bundles-list",
        P(COZY + "  variant: passthrough\n"),
        PLATFORM(values="\n        bundles: [cozystack.gpu-operator]\n"),
        [f"{PF}:10: error: spec.components.platform.values.bundles: must be a mapping"],
    ),
    (
        "platform-yaml-syntax-error",
        P(COZY + "  variant: passthrough\n"),
        PLATFORM(values="\n        bundles: {enabledPackages: [a, b}\n"),
        [f"{PF}:10: error: YAML syntax error: did not find expected ',' or ']'"],
    ),
    # --- vGPU, HAMi, nodes, plain Flux ----------------------------------------------------------
    (
        "vgpu-without-manager",
        P(
            FLUX + "  variant: vgpu\n"
            "  devices:\n    - {class: A100 20C, mdevNameSelector: NVIDIA A100-20C,"
            " resourceName: nvidia.com/NVIDIA_A100-20C}\n"
            "  mediatedDevicesConfiguration: {mediatedDeviceTypes: [nvidia-692]}\n"
        ),
        None,
        [
            f"{F}:5: error: spec.vgpu.manager: the vGPU Manager image is not redistributable: "
            "set repository and version to the image in your private registry"
        ],
    ),
    (
        "device-manager-on-ada",
        P(
            FLUX
            + "  variant: vgpu\n"
            + MANAGER.replace("}}", "}, deviceManager: true}")
            + "  devices:\n    - {class: L40S-24Q, mdevNameSelector: NVIDIA L40S-24Q,"
            " resourceName: nvidia.com/NVIDIA_L40S-24Q, architecture: ada}\n"
        ),
        None,
        [
            f"{F}:8: error: spec.vgpu.deviceManager: the vGPU Device Manager runs on "
            "Pascal..Ampere only (it crash-loops on ada); set it to false"
        ],
    ),
    (
        "flux-sriov-vgpu-on-kubevirt-1.8",
        P(FLUX + "  variant: vgpu\n" + MANAGER + L40S + "      architecture: ada\n"),
        None,
        [
            f"{F}:10: error: spec.devices[0]: SR-IOV vGPU on ada needs KubeVirt >= 1.9 "
            "(kubevirt#16890); upgrade KubeVirt and set spec.kubevirt.version"
        ],
    ),
    (
        "flux-sriov-vgpu-blackwell-inferred",
        P(
            FLUX
            + "  variant: vgpu\n"
            + MANAGER
            + "  devices:\n    - {class: RTX PRO 6000, pciVendorSelector: '10DE:2BB5',"
            " resourceName: nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_SERVER_EDITION}\n"
        ),
        None,
        [
            f"{F}:10: error: spec.devices[0]: SR-IOV vGPU on blackwell (10DE:2BB5 is the RTX PRO "
            "6000 Blackwell Server Edition, chip GB202GL) needs KubeVirt >= 1.9 (kubevirt#16890); "
            "upgrade KubeVirt and set spec.kubevirt.version"
        ],
    ),
    (
        "two-mdev-creators",
        P(
            FLUX
            + "  variant: vgpu\n"
            + MANAGER.replace("}}", "}, deviceManager: true}")
            + "  devices:\n    - {class: A100 20C, mdevNameSelector: NVIDIA A100-20C,"
            " resourceName: nvidia.com/NVIDIA_A100-20C}\n"
            + "  mediatedDevicesConfiguration: {mediatedDeviceTypes: [nvidia-692]}\n"
        ),
        None,
        [
            f"{F}:11: error: spec.mediatedDevicesConfiguration: two creators of mediated devices: "
            "KubeVirt creates these types and the vGPU Device Manager (spec.vgpu.deviceManager) "
            "creates its own, each removing the other's; keep one: set vgpu.deviceManager: false, "
            "or mediatedDevicesConfiguration.enabled: false"
        ],
    ),
    (
        "hami-without-gpu-operator",
        P(FLUX + "  variant: none\n  hami: true\n"),
        None,
        [
            f"{F}:8: error: spec.hami: HAMi needs the GPU Operator; choose a variant or set "
            "hami: false"
        ],
    ),
    (
        "vm-vgpu-node-on-passthrough",
        P(FLUX + "  variant: passthrough\n" + L40S + "  nodes: {gpu-1: vm-vgpu}\n"),
        None,
        [
            f"{F}:12: error: spec.nodes.gpu-1: the variant is one value per cluster: a vm-vgpu "
            "node on a passthrough cluster gets no operands for it; label it vm-passthrough"
        ],
    ),
    (
        "errors-and-warnings-together",
        P(
            FLUX
            + "  variant: passthrough\n"
            + L40S.replace("AD102GL_L40S", "l40s")
            + "  nodes: {gpu-1: vm-vgpu}\n  flux: {driftDetection: disabled}\n"
        ),
        None,
        [
            f'{F}:11: warning: spec.devices[0].resourceName: "nvidia.com/l40s" does not follow '
            "the sandbox device plugin's naming (nvidia.com/ + the upper-case pci.ids name, '_' "
            "for spaces); confirm with kubectl describe node",
            f"{F}:12: error: spec.nodes.gpu-1: the variant is one value per cluster: a vm-vgpu "
            "node on a passthrough cluster gets no operands for it; label it vm-passthrough",
            f"{F}:13: warning: spec.flux.driftDetection: hand edits of the emitted HelmReleases "
            "will go unnoticed; use enabled or warn",
        ],
    ),
]

OK_PROFILE = """\
apiVersion: gpu-gitops/v1alpha1
kind: GPUProfile
metadata:
  name: ok1
spec:
  platform: {type: flux}
  variant: passthrough
  devices:
    - class: L40S
      pciVendorSelector: "10DE:26B9"
      resourceName: nvidia.com/AD102GL_L40S
"""

OLD = "# rendered by an earlier run\n"


def make_repo(root: Path, profile: str | bytes, platform: str | None, name: str = "c1") -> Path:
    for rel, text in {
        "clusters/ok1/gpu-profile.yaml": OK_PROFILE,
        "clusters/ok1/kubevirt.yaml": kubevirt_text(),
        "overlays/base/flux-gpu-operator/kustomization.yaml": OLD,
        "overlays/ok1/kustomization.yaml": OLD,
        f"overlays/{name}/kustomization.yaml": OLD,
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    # a plain-Flux profile finds its live KubeVirt CR imported (empty lists: nothing to keep)
    flux = isinstance(profile, str) and "type: flux" in profile
    return write_cluster(root, profile, name, platform, kubevirt_text() if flux else None)


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (with its bytes) and directory (None) under root."""
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), Console(out, err))
    return code, out.getvalue(), err.getvalue()


COMMANDS = {
    "validate": ["validate"],
    "render": ["render"],
    "build": ["build", "--cluster", "c1"],
}


def test_there_are_at_least_thirty_cases():
    assert len(CASES) >= 30
    assert len({case[0] for case in CASES}) == len(CASES)


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(
    ("profile", "platform", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_bad_profile(tmp_path, command, profile, platform, expected):
    repo = make_repo(tmp_path, profile, platform)
    before = tree(repo)
    code, out, err = run(*COMMANDS[command], "--repo", str(repo))
    assert err.splitlines() == expected
    assert (code, out) == (2, "")
    assert tree(repo) == before


# --- names that are paths -------------------------------------------------------------------------

GOOD_C1 = P(FLUX + "  variant: passthrough\n" + L40S)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param(
            ["render", "--cluster", "../x"],
            '--cluster: error: "../x" is not a cluster name: use a DNS-1123 label, e.g. "ams1"',
            id="render-cluster-dotdot",
        ),
        pytest.param(
            ["build", "--cluster", "../x"],
            '--cluster: error: "../x" is not a cluster name: use a DNS-1123 label, e.g. "ams1"',
            id="build-cluster-dotdot",
        ),
        pytest.param(
            ["build", "--cluster", "/etc"],
            '--cluster: error: "/etc" is not a cluster name: use a DNS-1123 label, e.g. "ams1"',
            id="build-cluster-absolute",
        ),
        pytest.param(
            ["render", "--cluster", "c1", "--cluster", ".."],
            '--cluster: error: ".." is not a cluster name: use a DNS-1123 label, e.g. "ams1"',
            id="render-second-cluster-dotdot",
        ),
        pytest.param(
            ["validate", ".."],
            '..: error: ".." is not a cluster name: use a DNS-1123 label, e.g. "ams1"',
            id="validate-path-dotdot",
        ),
        pytest.param(
            ["validate", "clusters/.."],
            "clusters/..: error: not a cluster folder under {repo}/clusters/",
            id="validate-path-clusters-dotdot",
        ),
        pytest.param(
            # a path must lead to a folder directly under <repo>/clusters/
            ["validate", "../x"],
            "../x: error: not a cluster folder under {repo}/clusters/",
            id="validate-path-outside",
        ),
        pytest.param(
            ["build", "--cluster", "nope"],
            "clusters/nope/gpu-profile.yaml: error: file not found",
            id="build-unknown-cluster",
        ),
    ],
)
def test_cluster_names_that_are_paths(tmp_path, argv, expected):
    repo = make_repo(tmp_path, GOOD_C1, None)
    before = tree(repo)
    code, out, err = run(*argv, "--repo", str(repo))
    assert (code, out, err) == (2, "", expected.format(repo=repo) + "\n")
    assert tree(repo) == before


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param(
            ["validate"],
            'clusters/x.y/: error: "x.y" is not a cluster name: use a DNS-1123 label, e.g. "ams1"',
            id="validate",
        ),
        pytest.param(
            ["render"],
            'clusters/x.y/: error: "x.y" is not a cluster name: use a DNS-1123 label, e.g. "ams1"',
            id="render",
        ),
        pytest.param(
            ["build", "--cluster", "x.y"],
            '--cluster: error: "x.y" is not a cluster name: use a DNS-1123 label, e.g. "ams1"',
            id="build",
        ),
    ],
)
def test_folder_that_is_not_a_cluster_name(tmp_path, argv, expected):
    repo = make_repo(tmp_path, GOOD_C1.replace("name: c1", "name: x.y"), None, name="x.y")
    before = tree(repo)
    code, out, err = run(*argv, "--repo", str(repo))
    assert (code, out, err) == (2, "", expected + "\n")
    assert tree(repo) == before


def test_repository_without_clusters(tmp_path):
    code, out, err = run("validate", "--repo", str(tmp_path))
    assert (code, out, err) == (
        2,
        "",
        "clusters/: error: no clusters/<name>/gpu-profile.yaml found\n",
    )
    assert list(tmp_path.iterdir()) == []
