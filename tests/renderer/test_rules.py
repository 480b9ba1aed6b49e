"""One test per rule of DESIGN §4 (and per platform.yaml check): the exact Problem each gives.

Profiles are written into tmp_path by `check`: lines 1-5 are the header (apiVersion .. `spec:`),
so the first line of a test's spec body is line 6 of the file. Platform files from
`platform_yaml` put `spec.variant` on line 6 and the first line of the values on line 10.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import git
import pytest

from kubedata.yaml_io import load_all
from renderer.errors import Problem, ProfileError
from renderer.kustomize.workers import build_overlays
from renderer.render import label_commands, render_profiles
from renderer.rules.versions import KNOWN
from renderer.validate import Checked, check_clusters
from tests.renderer.profile_texts import HEAD, IMPORTED, kubevirt_text

PROFILE = "clusters/c1/gpu-profile.yaml"
PLATFORM = "clusters/c1/platform.yaml"
VALUES = "spec.components.platform.values.bundles"


def platform_yaml(variant: str | None = "isp-full", values: str = "") -> str:
    """The live platform Package: spec.variant on line 6, values from line 10."""
    text = "apiVersion: cozystack.io/v1alpha1\nkind: Package\nmetadata:\n"
    text += f"  {{name: cozystack.cozystack-platform, annotations: {IMPORTED}}}\nspec:\n"
    if variant is not None:
        text += f"  variant: {variant}\n"
    text += "  components:\n    platform:\n      values:"
    if not values:
        return text + " {}\n"
    return text + "\n" + textwrap.indent(textwrap.dedent(values), " " * 8)


FULL = platform_yaml()


ORIGIN = "https://git.example.com/platform/gitops.git"


def write(root: Path, body: str, platform: str | None = None, kubevirt: str | None = None) -> None:
    """A checkout with an origin remote (the default of spec.flux.url) holding cluster c1; a
    plain-Flux profile finds its live KubeVirt CR imported (`kubevirt`, default: no gates, no
    devices)."""
    if not (root / ".git").is_dir():
        git.Repo.init(root).create_remote("origin", ORIGIN)
    folder = root / "clusters" / "c1"
    folder.mkdir(parents=True, exist_ok=True)
    text = HEAD + textwrap.indent(textwrap.dedent(body), "  ")
    (folder / "gpu-profile.yaml").write_text(text)
    if platform is not None:
        (folder / "platform.yaml").write_text(platform)
    if "type: flux" in body:
        (folder / "kubevirt.yaml").write_text(kubevirt or kubevirt_text())


def check(
    root: Path, body: str, platform: str | None = None, kubevirt: str | None = None
) -> tuple[bool, list[Problem]]:
    """(valid, problems): warnings of a valid profile, or every problem of an invalid one."""
    write(root, body, platform, kubevirt)
    try:
        checked = check_clusters(root)
    except ProfileError as exc:
        return False, list(exc.problems)
    return True, list(checked.warnings)


def checked(
    root: Path, body: str, platform: str | None = None, kubevirt: str | None = None
) -> Checked:
    write(root, body, platform, kubevirt)
    return check_clusters(root)


def built(
    root: Path, body: str, platform: str | None = None, kubevirt: str | None = None
) -> list[dict[str, Any]]:
    """The built objects of a valid profile (kustomize, in process)."""
    result = checked(root, body, platform, kubevirt)
    text = build_overlays(render_profiles(result.profiles).overlays)["c1"]
    objs: list[dict[str, Any]] = load_all(text)
    return objs


def find(objs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (obj,) = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    return obj


def platform_values(objs: list[dict[str, Any]]) -> dict[str, Any]:
    package = find(objs, "Package", "cozystack.cozystack-platform")
    values: dict[str, Any] = package["spec"]["components"]["platform"]["values"]
    return values


def E(line: int, field: str, message: str, file: str = PROFILE) -> Problem:
    return Problem(file, line, field, message, "error")


def W(line: int, field: str, message: str, file: str = PROFILE) -> Problem:
    return Problem(file, line, field, message, "warning")


COZY = """\
platform:
  type: cozystack
  version: "1.6"
"""
FLUX = """\
platform:
  type: flux
"""
L40S = """\
devices:
  - class: L40S
    pciVendorSelector: "10DE:26B9"
    resourceName: nvidia.com/AD102GL_L40S
"""
RTX = """\
devices:
  - class: RTX PRO 6000
    pciVendorSelector: "10DE:2BB5"
    resourceName: nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_SERVER_EDITION
"""
MANAGER = """\
vgpu:
  manager:
    repository: registry.example.com/nvidia
    version: "550.144.02"
"""
A100_20C = """\
devices:
  - class: A100 20C
    mdevNameSelector: NVIDIA A100-20C
    resourceName: nvidia.com/NVIDIA_A100-20C
"""
MDEV_TYPES = "mediatedDevicesConfiguration:\n  mediatedDeviceTypes: [nvidia-692]\n"
"""KubeVirt creates the A100-20C mdevs (the type id is host-specific)."""


# --- rule 1: one variant per cluster, never per node ---------------------------------------------


def test_rule1_vm_vgpu_node_on_a_passthrough_cluster(tmp_path):
    body = COZY + "variant: passthrough\nnodes:\n  gpu-1: vm-passthrough\n  gpu-2: vm-vgpu\n"
    assert check(tmp_path, body, FULL) == (
        False,
        [
            E(
                12,
                "spec.nodes.gpu-2",
                "the variant is one value per cluster: a vm-vgpu node on a passthrough cluster "
                "gets no operands for it; label it vm-passthrough",
            )
        ],
    )


def test_rule1_vm_passthrough_node_on_a_vgpu_cluster(tmp_path):
    body = FLUX + "variant: vgpu\n" + MANAGER + A100_20C + "nodes:\n  gpu-1: vm-passthrough\n"
    body += MDEV_TYPES
    assert check(tmp_path, body) == (
        False,
        [
            E(
                18,
                "spec.nodes.gpu-1",
                "the variant is one value per cluster: a vm-passthrough node on a vgpu cluster "
                "gets no operands for it; label it vm-vgpu",
            )
        ],
    )


def test_rule1_the_variant_is_a_single_value(tmp_path):
    body = FLUX + "variant: [passthrough, vgpu]\n"
    assert check(tmp_path, body) == (
        False,
        [E(8, "spec.variant", "a list is not one of passthrough, vgpu, container, none")],
    )


def test_rule1_node_names_must_be_node_names(tmp_path):
    body = FLUX + "variant: passthrough\n" + L40S + "nodes:\n  GPU_1: vm-passthrough\n"
    assert check(tmp_path, body) == (
        False,
        [E(14, "spec.nodes.GPU_1", '"GPU_1" is not a node name (DNS-1123 subdomain)')],
    )


# --- rule 2: the bundle takes default or vgpu; container is a standalone Package -----------------


def test_rule2_container_on_cozystack_is_a_standalone_package(tmp_path):
    live = platform_yaml(
        values="""\
        bundles:
          enabledPackages: [cozystack.external-dns, cozystack.gpu-operator]
        """
    )
    body = COZY + "variant: container\n"
    ok, problems = check(tmp_path, body, live)
    assert ok
    assert problems == [
        W(
            11,
            f"{VALUES}.enabledPackages",
            "cozystack.gpu-operator leaves the bundle; the chart keeps its live Package "
            "(helm.sh/resource-policy: keep) and the standalone container-variant Package of the "
            "same name takes it over: nothing to delete",
            PLATFORM,
        )
    ]
    objs = built(tmp_path, body, live)
    assert sorted((o["kind"], o["metadata"]["name"]) for o in objs) == [
        ("Package", "cozystack.cozystack-platform"),
        ("Package", "cozystack.gpu-operator"),
    ]
    assert find(objs, "Package", "cozystack.gpu-operator")["spec"]["variant"] == "container"
    bundles = platform_values(objs)["bundles"]
    assert bundles["enabledPackages"] == ["cozystack.external-dns"]
    assert bundles["iaas"]["gpuOperatorVariant"] == "default"


def test_rule2_an_unrenderable_live_variant_is_reset(tmp_path):
    live = platform_yaml(
        values="""\
        bundles:
          iaas:
            gpuOperatorVariant: container
        """
    )
    body = COZY + "variant: none\n"
    ok, problems = check(tmp_path, body, live)
    assert ok
    assert problems == [
        W(
            12,
            f"{VALUES}.iaas.gpuOperatorVariant",
            '"container" makes the bundle fail to render; it is reset to "default"',
            PLATFORM,
        )
    ]
    bundles = platform_values(built(tmp_path, body, live))["bundles"]
    assert bundles["iaas"]["gpuOperatorVariant"] == "default"


def test_rule2_keep_policy_when_gpu_operator_is_dropped(tmp_path):
    live = platform_yaml(
        values="""\
        bundles:
          enabledPackages: [cozystack.gpu-operator]
        """
    )
    ok, problems = check(tmp_path, COZY + "variant: none\n", live)
    assert ok
    assert problems == [
        W(
            11,
            f"{VALUES}.enabledPackages",
            "cozystack.gpu-operator leaves the bundle, but the chart renders it with "
            "helm.sh/resource-policy: keep, so the live Package and what it installed keep "
            "running; once Flux has applied this, delete it: kubectl delete packages.cozystack.io "
            "cozystack.gpu-operator",
            PLATFORM,
        )
    ]


# --- rule 3: what enabling GPU through the bundle takes ------------------------------------------


def test_rule3_iaas_off_under_platform_variant_default(tmp_path):
    assert check(tmp_path, COZY + "variant: passthrough\n", platform_yaml("default")) == (
        False,
        [
            E(
                6,
                "spec.variant",
                'bundles.iaas.enabled is off (platform variant "default"), so the GPU bundle '
                "installs nothing; set the Package's spec.variant to isp-full or isp-full-generic",
                PLATFORM,
            )
        ],
    )


def HOSTED(variant: str) -> str:
    return (
        f"the profile's variant {variant} needs KubeVirt GPU wiring, but this platform is hosted "
        "(bundles.system.variant isp-hosted: the host cluster provides virtualisation, and the "
        "iaas bundle never renders here); do not switch the platform to isp-full, which would "
        "install a second network and storage stack over the host's: offer GPU VMs from the "
        "host cluster's profile, and use variant container or none here"
    )


def test_rule3_iaas_off_under_isp_hosted(tmp_path):
    ok, problems = check(tmp_path, COZY + "variant: passthrough\n", platform_yaml("isp-hosted"))
    assert (ok, problems) == (False, [E(6, "spec.variant", HOSTED("passthrough"), PLATFORM)])
    assert not any("set the Package's spec.variant to isp-full" in p.message for p in problems)


def test_rule3_isp_hosted_container_is_fine(tmp_path):
    ok, problems = check(tmp_path, COZY + "variant: container\n", platform_yaml("isp-hosted"))
    assert ok and not [p for p in problems if "hosted" in p.message]


def test_rule3_iaas_off_with_no_platform_variant(tmp_path):
    assert check(tmp_path, COZY + "variant: passthrough\n", platform_yaml(None)) == (
        False,
        [
            E(
                5,
                "spec.variant",
                "bundles.iaas.enabled is off (platform variant unset (default)), so the GPU "
                "bundle installs nothing; set the Package's spec.variant to isp-full or "
                "isp-full-generic",
                PLATFORM,
            )
        ],
    )


def test_rule3_iaas_disabled_by_hand(tmp_path):
    live = platform_yaml(
        "isp-full-generic",
        """\
        bundles:
          iaas:
            enabled: false
        """,
    )
    assert check(tmp_path, COZY + "variant: passthrough\n", live) == (
        False,
        [
            E(
                12,
                f"{VALUES}.iaas.enabled",
                "bundles.iaas.enabled is false, so the GPU bundle installs nothing; set it to true",
                PLATFORM,
            )
        ],
    )


def test_rule3_system_variant_must_be_isp_full(tmp_path):
    live = platform_yaml(
        "isp-full",
        """\
        bundles:
          system: {variant: distro-full}
        """,
    )
    assert check(tmp_path, COZY + "variant: passthrough\n", live) == (
        False,
        [
            E(
                11,
                f"{VALUES}.system.variant",
                "the GPU bundle needs bundles.system.variant isp-full or isp-full-generic",
                PLATFORM,
            )
        ],
    )


def test_rule3_hosted_by_values_gets_the_hosted_advice(tmp_path):
    live = platform_yaml(
        "isp-hosted",
        """\
        bundles:
          iaas: {enabled: true}
        """,
    )
    assert check(tmp_path, COZY + "variant: passthrough\n", live) == (
        False,
        [E(6, "spec.variant", HOSTED("passthrough"), PLATFORM)],
    )


MAIN_WITHOUT_SYSTEM = platform_yaml(
    "default",
    """\
    bundles:
      iaas: {enabled: true}
    """,
)


def test_rule3_main_needs_system_enabled(tmp_path):
    body = COZY.replace('"1.6"', "main") + "variant: passthrough\n"
    assert check(tmp_path, body, MAIN_WITHOUT_SYSTEM) == (
        False,
        [
            E(
                10,
                f"{VALUES}.system.enabled",
                "on Cozystack main the iaas bundle requires bundles.system.enabled: true",
                PLATFORM,
            )
        ],
    )


def test_rule3_main_system_disabled_by_hand(tmp_path):
    live = platform_yaml(
        "isp-full",
        """\
        bundles:
          system:
            enabled: false
        """,
    )
    body = COZY.replace('"1.6"', "main") + "variant: passthrough\n"
    assert check(tmp_path, body, live) == (
        False,
        [
            E(
                12,
                f"{VALUES}.system.enabled",
                "on Cozystack main the iaas bundle requires bundles.system.enabled: true",
                PLATFORM,
            )
        ],
    )


def test_rule3_version_1_6_has_no_system_enabled_guard(tmp_path):
    assert check(tmp_path, COZY + "variant: passthrough\n", MAIN_WITHOUT_SYSTEM) == (True, [])


def test_rule3_gpu_operator_is_enabled_and_undisabled(tmp_path):
    live = platform_yaml(
        values="""\
        bundles:
          enabledPackages: [cozystack.external-dns]
          disabledPackages: [cozystack.gpu-operator, cozystack.bucket-application]
        """
    )
    body = COZY + "variant: vgpu\n" + MANAGER + A100_20C
    bundles = platform_values(built(tmp_path, body, live))["bundles"]
    assert bundles["enabledPackages"] == ["cozystack.external-dns", "cozystack.gpu-operator"]
    assert bundles["disabledPackages"] == ["cozystack.bucket-application"]
    assert bundles["iaas"]["gpuOperatorVariant"] == "vgpu"


@pytest.mark.parametrize("variant", ["passthrough", "container", "none"])
def test_rule3_without_platform_file_cozystack_refuses_and_names_the_import(tmp_path, variant):
    ok, problems = check(tmp_path, COZY + f"variant: {variant}\n")
    assert not ok
    assert problems == [
        E(
            7,
            "spec.platform.type",
            "clusters/c1/platform.yaml is missing: the platform Package's "
            "bundles.enabledPackages is atomic, so the list built without it would replace the "
            "live one whole; capture the live Package first: gpu-gitops import --cluster c1 "
            "[--kubeconfig F] [--context C]",
        )
    ]


def test_rule3_plain_flux_needs_no_platform_file(tmp_path):
    ok, problems = check(tmp_path, "platform: {type: flux}\nvariant: container\n")
    assert ok and problems == []


# --- rule 4: KubeVirt wiring --------------------------------------------------------------------


def test_rule4_spec_kubevirt_on_cozystack(tmp_path):
    body = COZY + "variant: passthrough\nkubevirt:\n  version: '1.9'\ngpuOperatorVersion: v25.3.0\n"
    message = (
        "plain Flux only: on Cozystack the platform renders the KubeVirt CR and the GPU "
        "Operator; remove it"
    )
    assert check(tmp_path, body, FULL) == (
        False,
        [E(10, "spec.kubevirt", message), E(12, "spec.gpuOperatorVersion", message)],
    )


def test_rule4_cozystack_emits_only_the_platform_package(tmp_path):
    objs = built(tmp_path, COZY + "variant: passthrough\n" + L40S.replace("26B9", "2BB5"), FULL)
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [
        ("Package", "cozystack.cozystack-platform")
    ]
    gpu = platform_values(objs)["gpu"]
    assert gpu["permittedHostDevices"]["pciHostDevices"] == [
        {
            "pciVendorSelector": "10DE:2BB5",
            "resourceName": "nvidia.com/AD102GL_L40S",
            "externalResourceProvider": True,
        }
    ]


def test_rule4_flux_emits_a_partial_kubevirt_with_the_full_gate_list(tmp_path):
    body = FLUX + "variant: passthrough\n" + L40S
    body += (
        "kubevirt:\n  namespace: virt\n  name: kv\n  featureGates: [LiveMigration, HostDevices]\n"
    )
    live = kubevirt_text("[Snapshot, LiveMigration]", name="kv", namespace="virt")
    kubevirt = find(built(tmp_path, body, kubevirt=live), "KubeVirt", "kv")
    assert kubevirt == {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {
            "name": "kv",
            "namespace": "virt",
            "annotations": {
                "kustomize.toolkit.fluxcd.io/ssa": "Merge",
                "kustomize.toolkit.fluxcd.io/prune": "disabled",
            },
        },
        "spec": {
            "configuration": {
                # the live gates first, then what the profile adds
                "developerConfiguration": {
                    "featureGates": ["Snapshot", "LiveMigration", "HostDevices"]
                },
                "permittedHostDevices": {
                    "pciHostDevices": [
                        {
                            "externalResourceProvider": True,
                            "pciVendorSelector": "10DE:26B9",
                            "resourceName": "nvidia.com/AD102GL_L40S",
                        }
                    ]
                },
            }
        },
    }


# --- rule 5: device selectors and resource names -------------------------------------------------


def test_rule5_duplicate_pci_vendor_selector_is_case_insensitive(tmp_path):
    body = FLUX + "variant: passthrough\n" + L40S
    body += '  - class: L40S again\n    pciVendorSelector: "10de:26b9"\n'
    body += "    resourceName: nvidia.com/AD102GL_L40S\n"
    assert check(tmp_path, body) == (
        False,
        [
            E(
                14,
                "spec.devices[1].pciVendorSelector",
                '"10de:26b9" repeats spec.devices[0]; virt-handler keys devices by selector, '
                "keep one",
            )
        ],
    )


def test_rule5_pci_vendor_selector_already_in_cozystack_defaults(tmp_path):
    body = COZY + "variant: passthrough\n" + L40S.replace("26B9", "26b9")
    assert check(tmp_path, body, FULL) == (
        False,
        [
            E(
                12,
                "spec.devices[0].pciVendorSelector",
                '"10DE:26b9" is already in Cozystack\'s default table (nvidia.com/AD102GL_L40S); '
                "remove it, or set spec.replaceDefaults: true and list every device",
            )
        ],
    )


def test_rule5_default_table_does_not_apply_with_replace_defaults_or_on_flux(tmp_path):
    body = COZY + "variant: passthrough\nreplaceDefaults: true\n" + L40S
    assert check(tmp_path, body, FULL) == (True, [])
    assert check(tmp_path / "flux", FLUX + "variant: passthrough\n" + L40S) == (True, [])


@pytest.mark.parametrize("selector", ["10DE:26BG", "10DE26B9", "0x10DE:26B9", "10DE:26B"])
def test_rule5_pci_vendor_selector_must_be_hex(tmp_path, selector):
    body = FLUX + "variant: passthrough\n" + L40S.replace("10DE:26B9", selector)
    assert check(tmp_path, body) == (
        False,
        [
            E(
                11,
                "spec.devices[0].pciVendorSelector",
                f'"{selector}" is not vendor:device hex; write 4 hex digits, ":", 4 hex digits, '
                'e.g. "10DE:2BB5"',
            )
        ],
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param(
            "nvidia.com/L40S GPU",
            '"nvidia.com/L40S GPU" is not a valid extended resource name (domain/name, no '
            'spaces), e.g. "nvidia.com/GA102GL_A10"',
            id="space",
        ),
        pytest.param(
            "AD102GL_L40S",
            '"AD102GL_L40S" is not a valid extended resource name (domain/name, no spaces), '
            'e.g. "nvidia.com/GA102GL_A10"',
            id="no-domain",
        ),
        pytest.param(
            "Nvidia.com/X",
            '"Nvidia.com/X" is not a valid extended resource name (domain/name, no spaces), '
            'e.g. "nvidia.com/GA102GL_A10"',
            id="upper-case-domain",
        ),
        pytest.param(
            "kubernetes.io/gpu",
            '"kubernetes.io/gpu": the kubernetes.io domain is reserved for Kubernetes; use the '
            'device plugin\'s, e.g. "nvidia.com/GA102GL_A10"',
            id="reserved-domain",
        ),
    ],
)
def test_rule5_invalid_extended_resource_name_is_an_error(tmp_path, name, message):
    body = FLUX + "variant: passthrough\n" + L40S.replace("nvidia.com/AD102GL_L40S", f"'{name}'")
    assert check(tmp_path, body) == (False, [E(12, "spec.devices[0].resourceName", message)])


def test_rule5_sandbox_naming_is_a_warning(tmp_path):
    body = FLUX + "variant: passthrough\n" + L40S.replace("AD102GL_L40S", "l40s")
    assert check(tmp_path, body) == (
        True,
        [
            W(
                12,
                "spec.devices[0].resourceName",
                '"nvidia.com/l40s" does not follow the sandbox device plugin\'s naming '
                "(nvidia.com/ + the upper-case pci.ids name, '_' for spaces); confirm with "
                "kubectl describe node",
            )
        ],
    )


def test_rule5_no_sandbox_naming_check_for_other_device_plugins(tmp_path):
    body = FLUX + "variant: vgpu\n" + MANAGER + A100_20C.replace("NVIDIA_A100-20C", "a100")
    body += "    externalResourceProvider: false\n" + MDEV_TYPES
    assert check(tmp_path, body) == (True, [])


def test_rule5_passthrough_devices_are_served_by_the_sandbox_plugin(tmp_path):
    body = FLUX + "variant: passthrough\n" + L40S + "    externalResourceProvider: false\n"
    assert check(tmp_path, body) == (
        True,
        [
            W(
                13,
                "spec.devices[0].externalResourceProvider",
                "on passthrough the GPU Operator's sandbox device plugin serves the device; "
                "set externalResourceProvider: true",
            )
        ],
    )


def test_rule5_mdev_naming_is_a_warning(tmp_path):
    body = FLUX + "variant: vgpu\n" + MANAGER + A100_20C.replace("NVIDIA_A100-20C", "A100_20C")
    body += MDEV_TYPES
    assert check(tmp_path, body) == (
        True,
        [
            W(
                16,
                "spec.devices[0].resourceName",
                'the sandbox device plugin advertises "nvidia.com/NVIDIA_A100-20C" for '
                '"NVIDIA A100-20C", not "nvidia.com/A100_20C"; confirm with kubectl describe node',
            )
        ],
    )


def test_rule5_duplicate_mdev_name_selector(tmp_path):
    body = FLUX + "variant: vgpu\n" + MANAGER + A100_20C
    body += "  - class: again\n    mdevNameSelector: NVIDIA A100-20C\n"
    body += "    resourceName: nvidia.com/NVIDIA_A100-20C\n" + MDEV_TYPES
    assert check(tmp_path, body) == (
        False,
        [
            E(
                18,
                "spec.devices[1].mdevNameSelector",
                '"NVIDIA A100-20C" repeats spec.devices[0]; keep one',
            )
        ],
    )


def test_rule5_mdev_already_in_the_vgpu_default_table(tmp_path):
    body = COZY + "variant: vgpu\n" + MANAGER + "  deviceManager: true\n"
    body += A100_20C.replace("20C", "40C")
    assert check(tmp_path, body, FULL) == (
        False,
        [
            E(
                17,
                "spec.devices[0].mdevNameSelector",
                '"NVIDIA A100-40C" is already in Cozystack\'s vGPU default table (used while '
                "vgpu.deviceManager is on); remove it, or set spec.replaceDefaults: true and "
                "list every type",
            )
        ],
    )
    # without the Device Manager the vGPU table is not used
    no_manager = COZY + "variant: vgpu\n" + MANAGER + A100_20C.replace("20C", "40C") + MDEV_TYPES
    assert check(tmp_path / "b", no_manager, FULL) == (True, [])


def test_rule5_both_selectors(tmp_path):
    body = FLUX + "variant: vgpu\n" + MANAGER + A100_20C + '    pciVendorSelector: "10DE:20B7"\n'
    # one error, no follow-on warnings guessing which selector was meant
    assert check(tmp_path, body) == (
        False,
        [E(14, "spec.devices[0]", "set either pciVendorSelector or mdevNameSelector, not both")],
    )


def test_rule5_neither_selector(tmp_path):
    body = FLUX + "variant: passthrough\ndevices:\n  - class: L40S\n"
    body += "    resourceName: nvidia.com/AD102GL_L40S\n"
    assert check(tmp_path, body) == (
        False,
        [
            W(
                9,
                "spec.devices",
                "no device is listed, so no permittedHostDevices is rendered and every GPU VM "
                "fails; list the GPUs in spec.devices",
            ),
            E(
                10,
                "spec.devices[0]",
                "set pciVendorSelector (a PCI device) or mdevNameSelector (a vGPU type)",
            ),
        ],
    )


# --- rule 6: passthrough drops mdevs; replaceDefaults with no devices ----------------------------


def test_rule6_passthrough_drops_mdev_devices_and_configuration(tmp_path):
    body = FLUX + "variant: passthrough\n" + L40S + A100_20C.replace("devices:\n", "")
    body += "mediatedDevicesConfiguration:\n  mediatedDeviceTypes: [nvidia-474]\n"
    assert check(tmp_path, body) == (
        True,
        [
            W(
                13,
                "spec.devices[1]",
                "passthrough drops mediatedDevices, so this device is not offered; remove it or "
                "use variant vgpu",
            ),
            W(
                16,
                "spec.mediatedDevicesConfiguration",
                "passthrough drops it; remove it or use vgpu",
            ),
        ],
    )
    config = find(built(tmp_path, body), "KubeVirt", "kubevirt")["spec"]["configuration"]
    assert "mediatedDevicesConfiguration" not in config
    assert list(config["permittedHostDevices"]) == ["pciHostDevices"]


def test_rule6_cozystack_passthrough_writes_no_mdev_values(tmp_path):
    body = COZY + "variant: passthrough\n" + RTX + A100_20C.replace("devices:\n", "")
    body += "mediatedDevicesConfiguration:\n  mediatedDeviceTypes: [nvidia-474]\n"
    gpu = platform_values(built(tmp_path, body, FULL))["gpu"]
    assert gpu["permittedHostDevices"]["mediatedDevices"] == []
    assert gpu["mediatedDevicesConfiguration"] == {}


def test_rule6_replace_defaults_with_no_devices(tmp_path):
    body = COZY + "variant: passthrough\nreplaceDefaults: true\n"
    assert check(tmp_path, body, FULL) == (
        True,
        [
            W(
                5,
                "spec.devices",
                "spec.replaceDefaults is true and no device is listed, so no "
                "permittedHostDevices is rendered and every GPU VM fails; list the GPUs in "
                "spec.devices",
            )
        ],
    )


def test_rule6_flux_with_no_devices(tmp_path):
    assert check(tmp_path, FLUX + "variant: passthrough\n") == (
        True,
        [
            W(
                5,
                "spec.devices",
                "no device is listed, so no permittedHostDevices is rendered and every GPU VM "
                "fails; list the GPUs in spec.devices",
            )
        ],
    )


def test_rule6_replace_defaults_means_nothing_on_flux(tmp_path):
    body = FLUX + "variant: passthrough\nreplaceDefaults: true\n" + L40S
    assert check(tmp_path, body) == (
        True,
        [W(9, "spec.replaceDefaults", "plain Flux has no built-in device table; remove it")],
    )


def test_rule6_devices_are_ignored_without_kubevirt_wiring(tmp_path):
    assert check(tmp_path, FLUX + "variant: container\n" + L40S) == (
        True,
        [
            W(
                9,
                "spec.devices",
                "variant container has no KubeVirt wiring; the devices are ignored",
            )
        ],
    )


# --- rule 7: vGPU ------------------------------------------------------------------------------


def test_rule7_vgpu_needs_manager_repository_and_version(tmp_path):
    body = FLUX + "variant: vgpu\nvgpu:\n  manager:\n    repository: registry.example.com\n"
    body += A100_20C + MDEV_TYPES
    message = (
        "the vGPU Manager image is not redistributable: set repository and version to the "
        "image in your private registry"
    )
    assert check(tmp_path, body) == (False, [E(10, "spec.vgpu.manager", message)])
    # not written at all: the line of spec
    assert check(tmp_path / "b", FLUX + "variant: vgpu\n" + A100_20C + MDEV_TYPES) == (
        False,
        [E(5, "spec.vgpu.manager", message)],
    )


def test_rule7_manager_is_ignored_off_vgpu(tmp_path):
    body = FLUX + "variant: passthrough\n" + L40S + MANAGER
    assert check(tmp_path, body) == (
        True,
        [W(14, "spec.vgpu.manager", "ignored unless spec.variant is vgpu")],
    )


def test_rule7_device_manager_only_pascal_to_ampere(tmp_path):
    body = FLUX + "variant: vgpu\n" + MANAGER + "  deviceManager: true\n"
    body += A100_20C.replace("A100-20C", "L40S-24Q") + "    architecture: ada\n"
    assert check(tmp_path, body) == (
        False,
        [
            E(
                13,
                "spec.vgpu.deviceManager",
                "the vGPU Device Manager runs on Pascal..Ampere only (it crash-loops on ada); "
                "set it to false",
            )
        ],
    )


def test_rule7_device_manager_is_ignored_off_vgpu(tmp_path):
    body = FLUX + "variant: passthrough\n" + L40S + "    architecture: ada\n"
    body += "vgpu:\n  deviceManager: true\n"
    assert check(tmp_path, body) == (
        True,
        [W(15, "spec.vgpu.deviceManager", "ignored unless spec.variant is vgpu")],
    )


SRIOV = (
    RTX.replace(
        "devices:\n",
        "devices:\n  - class: L40S\n    pciVendorSelector: '10DE:26B9'\n"
        "    resourceName: nvidia.com/AD102GL_L40S\n    architecture: ada\n",
    )
    + "    architecture: blackwell\n"
)


def test_rule7_sriov_vgpu_on_ada_and_blackwell_on_cozystack(tmp_path):
    body = COZY + "variant: vgpu\n" + MANAGER + SRIOV
    message = (
        "SR-IOV vGPU on {} needs KubeVirt >= 1.9 (kubevirt#16890) and Cozystack ships "
        "1.8.4; offer this GPU on a passthrough cluster"
    )
    assert check(tmp_path, body, FULL) == (
        False,
        [
            E(15, "spec.devices[0]", message.format("ada")),
            E(19, "spec.devices[1]", message.format("blackwell")),
        ],
    )


def test_rule7_the_architecture_is_inferred_when_not_written(tmp_path):
    # the PCI id names the board: a Blackwell RTX PRO 6000 as SR-IOV vGPU on KubeVirt 1.8
    body = FLUX + "variant: vgpu\n" + MANAGER + RTX
    assert check(tmp_path, body) == (
        False,
        [
            E(
                14,
                "spec.devices[0]",
                "SR-IOV vGPU on blackwell (10DE:2BB5 is the RTX PRO 6000 Blackwell Server "
                "Edition, chip GB202GL) needs KubeVirt >= 1.9 (kubevirt#16890); upgrade "
                "KubeVirt and set spec.kubevirt.version",
            )
        ],
    )
    # an id the table does not know: the sandbox plugin's resource name names the chip
    unknown = RTX.replace("10DE:2BB5", "10DE:2BFF")
    assert check(tmp_path / "b", COZY + "variant: vgpu\n" + MANAGER + unknown, FULL) == (
        False,
        [
            E(
                15,
                "spec.devices[0]",
                "SR-IOV vGPU on blackwell (resource "
                "nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_SERVER_EDITION names chip GB202) needs "
                "KubeVirt >= 1.9 (kubevirt#16890) and Cozystack ships 1.8.4; offer this GPU on a "
                "passthrough cluster",
            )
        ],
    )
    # Ampere passes: SR-IOV vGPU of an A10 works on KubeVirt 1.8
    a10 = L40S.replace("10DE:26B9", "10DE:2236").replace("AD102GL_L40S", "GA102GL_A10")
    assert check(tmp_path / "c", FLUX + "variant: vgpu\n" + MANAGER + a10) == (True, [])


def test_rule7_device_manager_on_an_inferred_architecture(tmp_path):
    # the vGPU type names the board: L40S is Ada
    body = FLUX + "variant: vgpu\n" + MANAGER + "  deviceManager: true\n"
    body += A100_20C.replace("A100-20C", "L40S-24Q")
    assert check(tmp_path, body) == (
        False,
        [
            E(
                13,
                "spec.vgpu.deviceManager",
                "the vGPU Device Manager runs on Pascal..Ampere only (it crash-loops on ada "
                '(vGPU type "NVIDIA L40S-24Q" is a slice of the L40S)); set it to false',
            )
        ],
    )


def test_rule7_a_written_architecture_that_contradicts_the_pci_id(tmp_path):
    body = FLUX + "variant: passthrough\n" + RTX + "    architecture: ada\n"
    assert check(tmp_path, body) == (
        True,
        [
            W(
                13,
                "spec.devices[0].architecture",
                "10DE:2BB5 is the RTX PRO 6000 Blackwell Server Edition, chip GB202GL, which is "
                "blackwell, not ada; correct architecture or remove it",
            )
        ],
    )


def test_rule7_mdev_types_need_a_creator(tmp_path):
    # neither the Device Manager nor KubeVirt creates the A100-20C mdevs
    body = FLUX + "variant: vgpu\n" + MANAGER + A100_20C
    assert check(tmp_path, body) == (
        True,
        [
            W(
                15,
                "spec.devices[0].mdevNameSelector",
                "nothing creates this mediated device type, so no VM can get one: list its "
                "nvidia-NNN type in spec.mediatedDevicesConfiguration.mediatedDeviceTypes "
                "(KubeVirt creates it), or set spec.vgpu.deviceManager: true (Pascal..Ampere)",
            )
        ],
    )
    # KubeVirt told not to create them is no creator either
    off = "mediatedDevicesConfiguration:\n  enabled: false\n  mediatedDeviceTypes: [nvidia-692]\n"
    _, problems = check(tmp_path / "b", body + off)
    assert [p.field for p in problems] == ["spec.devices[0].mdevNameSelector"]
    # per-node types count; so does the Device Manager alone
    per_node = "mediatedDevicesConfiguration:\n  nodeMediatedDeviceTypes:\n"
    per_node += "    - nodeSelector: {gpu: a100}\n      mediatedDeviceTypes: [nvidia-692]\n"
    assert check(tmp_path / "c", body + per_node) == (True, [])
    manager = FLUX + "variant: vgpu\n" + MANAGER + "  deviceManager: true\n" + A100_20C
    assert check(tmp_path / "d", manager) == (True, [])
    # passthrough drops mdevs anyway: that has its own warning, not this one
    _, problems = check(tmp_path / "e", FLUX + "variant: passthrough\n" + A100_20C)
    assert "spec.devices[0].mdevNameSelector" not in [p.field for p in problems]


def test_rule7_two_creators_of_mdevs(tmp_path):
    body = FLUX + "variant: vgpu\n" + MANAGER + "  deviceManager: true\n" + A100_20C + MDEV_TYPES
    assert check(tmp_path, body) == (
        False,
        [
            E(
                18,
                "spec.mediatedDevicesConfiguration",
                "two creators of mediated devices: KubeVirt creates these types and the vGPU "
                "Device Manager (spec.vgpu.deviceManager) creates its own, each removing the "
                "other's; keep one: set vgpu.deviceManager: false, or "
                "mediatedDevicesConfiguration.enabled: false",
            )
        ],
    )
    off = body.replace(
        "mediatedDevicesConfiguration:\n", "mediatedDevicesConfiguration:\n  enabled: false\n"
    )
    assert check(tmp_path / "b", off) == (True, [])


def test_rule7_sriov_vgpu_on_flux_needs_kubevirt_1_9(tmp_path):
    body = FLUX + "variant: vgpu\n" + MANAGER + SRIOV
    message = (
        "SR-IOV vGPU on {} needs KubeVirt >= 1.9 (kubevirt#16890); upgrade KubeVirt and set "
        "spec.kubevirt.version"
    )
    assert check(tmp_path, body + "kubevirt:\n  version: '1.8'\n") == (
        False,
        [
            E(14, "spec.devices[0]", message.format("ada")),
            E(18, "spec.devices[1]", message.format("blackwell")),
        ],
    )
    assert check(tmp_path / "b", body + "kubevirt:\n  version: '1.9'\n") == (True, [])
    assert check(tmp_path / "c", body + "kubevirt:\n  version: '1.10'\n") == (True, [])


def test_rule7_licensing_on_a_host_cluster_emits_nothing(tmp_path):
    body = FLUX + "variant: passthrough\n" + L40S + "vgpu:\n  licensing:\n    secretName: nls\n"
    assert check(tmp_path, body) == (
        True,
        [
            W(
                15,
                "spec.vgpu.licensing.secretName",
                "vGPU guests license themselves (token and gridd.conf via cloud-init), so a host "
                "cluster emits nothing for it; it is used only on plain Flux with variant "
                "container, where the operator runs the driver",
            )
        ],
    )
    release = find(built(tmp_path, body), "HelmRelease", "gpu-operator")
    assert "licensingConfig" not in release["spec"]["values"]["driver"]


def test_rule7_licensing_on_a_flux_container_cluster(tmp_path):
    body = FLUX + "variant: container\nvgpu:\n  licensing:\n    secretName: nls\n"
    assert check(tmp_path, body) == (True, [])
    release = find(built(tmp_path, body), "HelmRelease", "gpu-operator")
    assert release["spec"]["values"]["driver"] == {
        "enabled": True,
        "licensingConfig": {"nlsEnabled": True, "secretName": "nls"},
    }


def test_rule7_licensing_config_map_is_deprecated_and_emitted(tmp_path):
    body = FLUX + "variant: container\nvgpu:\n  licensing:\n    configMapName: licensing\n"
    assert check(tmp_path, body) == (
        True,
        [
            W(
                11,
                "spec.vgpu.licensing.configMapName",
                "deprecated by the GPU Operator (emitted as driver.licensingConfig.configMapName): "
                "use secretName, a Secret with client_configuration_token.tok and gridd.conf",
            )
        ],
    )
    release = find(built(tmp_path, body), "HelmRelease", "gpu-operator")
    assert release["spec"]["values"]["driver"]["licensingConfig"] == {
        "configMapName": "licensing",
        "nlsEnabled": True,
    }


@pytest.mark.parametrize(
    ("platform", "variant"),
    [("flux", "passthrough"), ("flux", "vgpu"), ("cozystack", "vgpu"), ("cozystack", "container")],
)
def test_rule7_licensing_config_map_where_nothing_uses_it_is_refused(tmp_path, platform, variant):
    head = FLUX if platform == "flux" else COZY
    body = head + f"variant: {variant}\nvgpu:\n  licensing:\n    configMapName: licensing\n"
    ok, problems = check(tmp_path, body, FULL if platform == "cozystack" else None)
    assert not ok
    [problem] = [p for p in problems if p.field == "spec.vgpu.licensing.configMapName"]
    assert problem.severity == "error"
    assert problem.message.startswith("nothing on this cluster would use it")


def test_rule7_licensing_secret_name_must_be_a_secret_name(tmp_path):
    body = FLUX + "variant: container\nvgpu:\n  licensing:\n    secretName: NLS_Token\n"
    assert check(tmp_path, body) == (
        False,
        [
            E(
                11,
                "spec.vgpu.licensing.secretName",
                '"NLS_Token" is not a valid Secret name (DNS-1123 subdomain)',
            )
        ],
    )


# --- rule 8: HAMi ------------------------------------------------------------------------------


def test_rule8_hami_needs_the_gpu_operator(tmp_path):
    assert check(tmp_path, FLUX + "variant: none\nhami: true\n") == (
        False,
        [E(9, "spec.hami", "HAMi needs the GPU Operator; choose a variant or set hami: false")],
    )


def test_rule8_hami_with_container_on_cozystack(tmp_path):
    assert check(tmp_path, COZY + "variant: container\nhami: true\n", FULL) == (
        False,
        [
            E(
                10,
                "spec.hami",
                "on a Cozystack management cluster HAMi and the container variant both register "
                "nvidia.com/gpu; use passthrough with container-labelled nodes, or drop hami",
            )
        ],
    )


def test_rule8_hami_without_container_nodes(tmp_path):
    body = COZY + "variant: passthrough\nhami: true\nnodes:\n  gpu-1: vm-passthrough\n"
    assert check(tmp_path, body, FULL) == (
        True,
        [
            W(
                10,
                "spec.hami",
                "HAMi serves only nodes labelled container; label GPU nodes in spec.nodes",
            )
        ],
    )


def test_rule8_hami_with_passthrough_on_cozystack_is_enabled_in_the_bundle(tmp_path):
    live = platform_yaml(values="bundles:\n  disabledPackages: [cozystack.hami]\n")
    body = COZY + "variant: passthrough\nhami: true\nnodes:\n  gpu-1: container\n"
    assert check(tmp_path, body, live) == (True, [W(11, "spec.nodes", UNLISTED)])
    bundles = platform_values(built(tmp_path, body, live))["bundles"]
    assert bundles["enabledPackages"] == ["cozystack.gpu-operator", "cozystack.hami"]
    assert bundles["disabledPackages"] == []


def test_rule8_container_and_hami_on_flux_turns_the_device_plugin_off(tmp_path):
    body = FLUX + "variant: container\nhami: true\n"
    assert check(tmp_path, body) == (True, [])
    objs = built(tmp_path, body)
    assert find(objs, "HelmRelease", "gpu-operator")["spec"]["values"]["devicePlugin"] == {
        "enabled": False
    }
    assert find(objs, "HelmRelease", "hami")["spec"]["dependsOn"] == [
        {"name": "gpu-operator", "namespace": "gpu-operator"}
    ]


UNLISTED = (
    "GPU nodes not listed here run as vm-passthrough (the GPU Operator's "
    "sandboxWorkloads.defaultWorkload on this variant); list every GPU node that should run "
    "otherwise"
)


# --- rule 9: node workload labels -----------------------------------------------------------------


def test_rule9_container_nodes_without_hami_get_nothing(tmp_path):
    body = FLUX + "variant: passthrough\n" + L40S + "nodes:\n  gpu-1: container\n"
    assert check(tmp_path, body) == (
        True,
        [
            W(13, "spec.nodes", UNLISTED),
            W(
                14,
                "spec.nodes.gpu-1",
                "on variant passthrough the GPU Operator runs no driver and no device plugin, so "
                "a container node's GPUs serve nothing; set spec.hami: true (HAMi serves "
                "container nodes) or label it vm-passthrough",
            ),
        ],
    )
    # with HAMi they are served, and the vm-vgpu error may suggest container
    hami = FLUX + "variant: passthrough\nhami: true\n" + L40S
    hami += "nodes:\n  gpu-1: container\n  gpu-2: vm-vgpu\n"
    assert check(tmp_path / "b", hami) == (
        False,
        [
            W(14, "spec.nodes", UNLISTED),
            E(
                16,
                "spec.nodes.gpu-2",
                "the variant is one value per cluster: a vm-vgpu node on a passthrough cluster "
                "gets no operands for it; label it vm-passthrough (or container, for HAMi)",
            ),
        ],
    )
    # nodes that all run the default say nothing about the others; nor does one listed as the
    # default next to a container node (the author knows where unlisted nodes go)
    same = FLUX + "variant: passthrough\n" + L40S + "nodes:\n  gpu-1: vm-passthrough\n"
    assert check(tmp_path / "c", same) == (True, [])
    both = FLUX + "variant: passthrough\nhami: true\n" + L40S
    both += "nodes:\n  gpu-1: container\n  gpu-2: vm-passthrough\n"
    assert check(tmp_path / "d", both) == (True, [])


def test_rule2_vgpu_to_container_declares_the_kept_packages_vgpu_values_off(tmp_path):
    # The kept Package carries Helm's components.gpu-operator values from vgpu; server-side apply
    # leaves fields it does not declare, so the container Package declares both managers off.
    live = platform_yaml(
        values="""\
        bundles:
          enabledPackages: [cozystack.gpu-operator]
          iaas: {gpuOperatorVariant: vgpu}
        """
    )
    ok, problems = check(tmp_path, COZY + "variant: container\n", live)
    assert ok
    assert not [p for p in problems if "vGPU" in p.message or "kubectl patch" in p.message]
    objs = built(tmp_path / "b", COZY + "variant: container\n", live)
    package = find(objs, "Package", "cozystack.gpu-operator")
    assert package["spec"] == {
        "variant": "container",
        "components": {
            "gpu-operator": {
                "values": {
                    "gpu-operator": {
                        "vgpuManager": {"enabled": False},
                        "vgpuDeviceManager": {"enabled": False},
                    }
                }
            }
        },
    }


def test_rule9_node_labels_on_the_container_variant(tmp_path):
    assert check(tmp_path, FLUX + "variant: container\nnodes:\n  gpu-1: container\n") == (
        True,
        [
            W(
                9,
                "spec.nodes",
                "ignored: sandbox workloads are off on variant container, so the GPU Operator "
                "treats every node as container",
            )
        ],
    )


def test_rule9_nodes_are_labelled_by_hand_never_put_in_git(tmp_path):
    body = FLUX + "variant: passthrough\n" + L40S
    body += "nodes:\n  gpu-2: container\n  gpu-1: vm-passthrough\n"
    result = checked(tmp_path, body)
    assert label_commands(result.profiles[0]) == [
        "kubectl label node gpu-1 nvidia.com/gpu.workload.config=vm-passthrough --overwrite",
        "kubectl label node gpu-2 nvidia.com/gpu.workload.config=container --overwrite",
    ]
    assert not [o for o in built(tmp_path, body) if o["kind"] == "Node"]


def test_rule9_workload_must_be_a_known_label(tmp_path):
    body = FLUX + "variant: passthrough\n" + L40S + "nodes:\n  gpu-1: gpu\n"
    assert check(tmp_path, body) == (
        False,
        [
            E(
                14,
                "spec.nodes.gpu-1",
                '"gpu" (a string) is not one of container, vm-passthrough, vm-vgpu; '
                'did you mean "vm-vgpu"?',
            )
        ],
    )


# --- rule 10: Flux objects ----------------------------------------------------------------------


def test_rule10_drift_detection_disabled(tmp_path):
    body = FLUX + "variant: passthrough\n" + L40S + "flux:\n  driftDetection: disabled\n"
    assert check(tmp_path, body) == (
        True,
        [
            W(
                14,
                "spec.flux.driftDetection",
                "hand edits of the emitted HelmReleases will go unnoticed; use enabled or warn",
            )
        ],
    )


def test_rule10_helm_releases_carry_the_profiles_drift_detection(tmp_path):
    body = FLUX + "variant: container\nhami: true\nflux:\n  driftDetection: warn\n"
    body += "  interval: 7m\n"
    objs = built(tmp_path, body)
    for name in ("gpu-operator", "hami"):
        spec = find(objs, "HelmRelease", name)["spec"]
        assert spec["driftDetection"] == {"mode": "warn"}
        assert spec["interval"] == "7m"


def test_rule10_no_drift_warning_on_cozystack(tmp_path):
    # Cozystack's own HelmReleases are not this tool's; the setting has nothing to act on
    body = COZY + "variant: passthrough\nflux:\n  driftDetection: disabled\n"
    assert check(tmp_path, body, FULL) == (True, [])


# --- platform version -----------------------------------------------------------------------------


def test_cozystack_version_not_supported(tmp_path):
    body = COZY.replace('"1.6"', '"1.4"') + "variant: passthrough\n"
    assert check(tmp_path, body, FULL) == (
        False,
        [
            E(
                8,
                "spec.platform.version",
                '"1.4" is older than the GPU bundle: GPU wiring through the bundle starts at '
                f"v1.5.0; use {KNOWN}",
            )
        ],
    )


@pytest.mark.parametrize("version", ["1.5", "1.6", "main"])
def test_cozystack_supported_versions(tmp_path, version):
    body = COZY.replace('"1.6"', f'"{version}"') + "variant: passthrough\n"
    assert check(tmp_path, body, FULL) == (True, [])


def test_cozystack_version_required(tmp_path):
    body = "platform:\n  type: cozystack\nvariant: passthrough\n"
    assert check(tmp_path, body, FULL) == (
        False,
        [E(6, "spec.platform", f"version is required on Cozystack: {KNOWN}")],
    )


def test_platform_version_on_flux_is_ignored(tmp_path):
    body = FLUX + '  version: "1.6"\nvariant: passthrough\n' + L40S
    assert check(tmp_path, body) == (
        True,
        [W(8, "spec.platform.version", "ignored on plain Flux; set spec.kubevirt.version")],
    )


def test_problems_are_sorted_by_file_and_line(tmp_path):
    live = platform_yaml("default")
    body = COZY.replace('"1.6"', "main") + "variant: passthrough\nhami: true\nkubevirt: {}\n"
    ok, problems = check(tmp_path, body, live)
    assert not ok
    assert [(p.file, p.line, p.severity) for p in problems] == [
        (PROFILE, 10, "warning"),
        (PROFILE, 11, "error"),
        (PLATFORM, 6, "error"),
    ]


# --- the nightly audit job ------------------------------------------------------------------------


def test_audit_job_image_is_optional(tmp_path):
    # the default is the published image of the rendering version (tests/renderer/test_audit_rbac)
    body = FLUX + "variant: passthrough\n" + L40S + "audit:\n  schedule: '0 4 * * *'\n"
    assert check(tmp_path, body) == (True, [])


def test_flux_url_missing_without_origin_is_a_warning(tmp_path: Path):
    folder = tmp_path / "clusters" / "c1"
    folder.mkdir(parents=True)
    (folder / "gpu-profile.yaml").write_text(
        HEAD + textwrap.indent("platform: {type: flux}\nvariant: none\n", "  ")
    )
    (warning,) = check_clusters(tmp_path).warnings
    assert warning == Problem(
        "clusters/c1/gpu-profile.yaml",
        warning.line,
        "spec.flux.url",
        "not set and the checkout has no origin remote: clusters/c1/flux/ is not written; "
        "set spec.flux.url",
        "warning",
    )


# --- live state in platform.yaml the profile would drop or leave behind ---------------------------


def test_every_kept_package_leaving_the_bundle_is_announced_with_its_delete_command(tmp_path):
    live = platform_yaml(
        values="""\
        bundles:
          enabledPackages: [cozystack.external-dns, cozystack.gpu-operator, cozystack.hami]
        """
    )
    ok, problems = check(tmp_path, COZY + "variant: none\n", live)
    assert ok
    assert [(p.file, p.line, p.severity) for p in problems] == [(PLATFORM, 11, "warning")] * 2
    for name, problem in zip(("cozystack.gpu-operator", "cozystack.hami"), problems, strict=True):
        assert problem.message.startswith(f"{name} leaves the bundle")
        assert problem.message.endswith(f"delete it: kubectl delete packages.cozystack.io {name}")
    assert not any("external-dns" in p.message for p in problems), "it stays in the bundle"


def test_hami_kept_from_the_bundle_does_not_go_unannounced_on_passthrough_without_hami(tmp_path):
    live = platform_yaml(
        values="""\
        bundles:
          enabledPackages: [cozystack.gpu-operator, cozystack.hami]
        """
    )
    ok, problems = check(tmp_path, COZY + "variant: passthrough\n", live)
    assert ok
    [hami] = problems
    assert hami.message.startswith("cozystack.hami leaves the bundle") and hami.line == 11


def test_container_with_a_kept_hami_left_running_is_an_error(tmp_path):
    live = platform_yaml(
        values="""\
        bundles:
          enabledPackages: [cozystack.gpu-operator, cozystack.hami]
        """
    )
    ok, problems = check(tmp_path, COZY + "variant: container\n", live)
    assert not ok
    [error] = [p for p in problems if p.severity == "error"]
    assert (error.file, error.line, error.field) == (PROFILE, 9, "spec.variant")
    assert "kubectl delete packages.cozystack.io cozystack.hami" in error.message
    assert "both register nvidia.com/gpu" in error.message
    assert "gpu-gitops import --cluster c1" in error.message


def test_hami_disabled_live_is_not_announced(tmp_path):
    live = platform_yaml(
        values="""\
        bundles:
          enabledPackages: [cozystack.gpu-operator, cozystack.hami]
          disabledPackages: [cozystack.hami]
        """
    )
    ok, problems = check(tmp_path, COZY + "variant: container\n", live)
    assert ok and not [p for p in problems if "hami" in p.message]


def test_each_live_device_the_profile_drops_is_warned_once(tmp_path):
    live = platform_yaml(
        values="""\
        gpu:
          permittedHostDevices:
            pciHostDevices:
              - {pciVendorSelector: "10de:2bb5", resourceName: nvidia.com/GB202GL_RTX_PRO_6000}
              - {pciVendorSelector: "10DE:26B9", resourceName: nvidia.com/AD102GL_L40S}
              - {pciVendorSelector: "10DE:2331", resourceName: nvidia.com/GH100_H100_PCIE}
        """
    )
    body = COZY + (
        "variant: passthrough\ndevices:\n"
        "  - {class: RTX, pciVendorSelector: '10DE:2BB5', "
        "resourceName: nvidia.com/GB202GL_RTX_PRO_6000}\n"
    )
    ok, problems = check(tmp_path, body, live)
    assert ok
    dropped = [p for p in problems if p.file == PLATFORM]
    assert [(p.line, p.severity) for p in dropped] == [(14, "warning"), (15, "warning")]
    assert dropped[0].message.startswith("device 10DE:26B9 (nvidia.com/AD102GL_L40S) is permitted")
    assert all(p.message.endswith("move it to spec.devices") for p in dropped)
    assert not any("2BB5" in p.message for p in dropped), "kept devices are not warned"


def test_live_gpu_values_of_another_shape_do_not_crash_the_device_check(tmp_path):
    live = platform_yaml(values="gpu: {permittedHostDevices: [not, a, mapping]}\n")
    ok, problems = check(tmp_path, COZY + "variant: passthrough\n", live)
    assert ok and not [p for p in problems if "move it to spec.devices" in p.message]
