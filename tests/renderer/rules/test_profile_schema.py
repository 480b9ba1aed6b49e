"""The shipped JSON Schema says what `validate` says.

A corpus of profiles (the bad-input cases of test_bad_input.py, one profile per rule below, and the
examples) goes through `validate` and through the schema, both with Python's jsonschema and with
ajv (strict mode, the validator editors' YAML language servers use): every verdict must agree,
except for entries marked with a NOT_EXPRESSIBLE reason, where validate must refuse what the
schema cannot see.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from kubedata.errors import YamlError
from kubedata.yaml_io import load_marked
from renderer.errors import ProfileError
from renderer.rules.checker import RuleChecker
from renderer.rules.profile_schema import NOT_EXPRESSIBLE, profile_schema
from renderer.validate import check_files
from tests.conftest import REPO_ROOT
from tests.renderer import test_bad_input
from tests.renderer.profile_texts import HEAD, PLATFORM_OK

AJV_VERSION = "8.20.0"
NODE_CACHE = Path(os.environ.get("GPU_GITOPS_NODE_CACHE", REPO_ROOT / ".cache" / "node"))

FLUX = "  platform: {type: flux}\n"
COZY = '  platform: {type: cozystack, version: "1.6"}\n'
MANAGER = "  vgpu: {manager: {repository: registry.example.com/nvidia, version: '550.144.02'}}\n"
DM = "  vgpu: {deviceManager: true, manager: {repository: r.example.com/n, version: '1'}}\n"
MDEV_TYPES = "  mediatedDevicesConfiguration: {mediatedDeviceTypes: [nvidia-692]}\n"


def device(**fields: str | None) -> str:
    items = ", ".join(f"{k}: {json.dumps(v)}" for k, v in {"class": "g", **fields}.items())
    return f"    - {{{items}}}\n"


def devices(*items: str) -> str:
    return "  devices:\n" + "".join(items)


RTX = device(pciVendorSelector="10DE:2BB5", resourceName="nvidia.com/GB202GL_RTX_PRO_6000")
L40S_24Q = device(mdevNameSelector="NVIDIA L40S-24Q", resourceName="nvidia.com/NVIDIA_L40S-24Q")
A100_20C = device(mdevNameSelector="NVIDIA A100-20C", resourceName="nvidia.com/NVIDIA_A100-20C")
A10 = device(pciVendorSelector="10DE:2236", resourceName="nvidia.com/GA102GL_A10")

# (id, spec body, platform.yaml or None, NOT_EXPRESSIBLE key or None); validate refuses each.
INVALID: list[tuple[str, str, str | None, str | None]] = [
    (
        "neither-selector",
        FLUX + "  variant: passthrough\n" + devices(device(resourceName="n.io/x")),
        None,
        None,
    ),
    (
        "null-selectors",
        FLUX
        + "  variant: passthrough\n"
        + devices(device(resourceName="n.io/x", pciVendorSelector=None)),
        None,
        None,
    ),
    (
        "resource-kubernetes-io",
        FLUX
        + "  variant: passthrough\n"
        + devices(device(pciVendorSelector="10DE:2236", resourceName="kubernetes.io/a10")),
        None,
        None,
    ),
    (
        "resource-domain-too-long",
        FLUX
        + "  variant: passthrough\n"
        + devices(device(pciVendorSelector="10DE:2236", resourceName="a" * 254 + "/x")),
        None,
        None,
    ),
    (
        "node-name",
        FLUX + "  variant: passthrough\n" + devices(A10) + "  nodes: {GPU_1: vm-passthrough}\n",
        None,
        None,
    ),
    (
        "vm-passthrough-on-vgpu",
        FLUX
        + "  variant: vgpu\n"
        + MANAGER
        + devices(A100_20C)
        + MDEV_TYPES
        + "  nodes: {gpu-1: vm-passthrough}\n",
        None,
        None,
    ),
    (
        "vgpu-manager-version-missing",
        FLUX
        + "  variant: vgpu\n  vgpu: {manager: {repository: r.example.com}}\n"
        + devices(A100_20C)
        + MDEV_TYPES,
        None,
        None,
    ),
    (
        "cozystack-gpu-operator-version",
        COZY + "  variant: passthrough\n  gpuOperatorVersion: v26.3.1\n",
        PLATFORM_OK,
        None,
    ),
    (
        "cozystack-version-null",
        "  platform: {type: cozystack, version: null}\n  variant: passthrough\n",
        PLATFORM_OK,
        None,
    ),
    (
        "mdev-in-cozystack-defaults",
        COZY
        + "  variant: vgpu\n"
        + DM
        + devices(
            device(mdevNameSelector="NVIDIA A100-40C", resourceName="nvidia.com/NVIDIA_A100-40C")
        ),
        PLATFORM_OK,
        None,
    ),
    (
        "pci-default-lower-case",
        COZY
        + "  variant: passthrough\n"
        + devices(device(pciVendorSelector="10de:26b9", resourceName="nvidia.com/AD102GL_L40S")),
        PLATFORM_OK,
        None,
    ),
    (
        "sriov-blackwell-inferred-from-pci",
        FLUX + "  variant: vgpu\n" + MANAGER + devices(RTX),
        None,
        None,
    ),
    (
        "sriov-blackwell-inferred-from-resource",
        COZY
        + "  variant: vgpu\n"
        + MANAGER
        + devices(device(pciVendorSelector="10DE:2BFF", resourceName="nvidia.com/GB202GL_X")),
        PLATFORM_OK,
        None,
    ),
    (
        "sriov-kubevirt-01.08",
        FLUX + "  variant: vgpu\n" + MANAGER + devices(RTX) + "  kubevirt: {version: '01.08'}\n",
        None,
        None,
    ),
    (
        "device-manager-on-inferred-ada",
        FLUX + "  variant: vgpu\n" + DM + devices(L40S_24Q),
        None,
        None,
    ),
    (
        "device-manager-on-ada-rtx6000",
        FLUX
        + "  variant: vgpu\n"
        + DM
        + devices(
            device(
                mdevNameSelector="NVIDIA RTX6000-Ada-24Q",
                resourceName="nvidia.com/NVIDIA_RTX6000-Ada-24Q",
            )
        ),
        None,
        None,
    ),
    (
        "two-mdev-creators",
        FLUX + "  variant: vgpu\n" + DM + devices(A100_20C) + MDEV_TYPES,
        None,
        None,
    ),
    (
        "two-mdev-creators-per-node",
        FLUX
        + "  variant: vgpu\n"
        + DM
        + devices(A100_20C)
        + "  mediatedDevicesConfiguration: {nodeMediatedDeviceTypes: "
        "[{nodeSelector: {a: b}, mediatedDeviceTypes: [nvidia-692]}]}\n",
        None,
        None,
    ),
    (
        "licensing-config-map-on-a-vgpu-host",
        FLUX
        + "  variant: vgpu\n"
        + MANAGER.replace("}}", "}, licensing: {configMapName: lic}}")
        + devices(A10),
        None,
        None,
    ),
    (
        "container-with-a-kept-hami",
        COZY + "  variant: container\n",
        PLATFORM_OK.replace("[cozystack.external-dns]", "[cozystack.hami]"),
        "platform.yaml",
    ),
    (
        "platform-iaas-disabled",
        COZY + "  variant: passthrough\n",
        PLATFORM_OK.replace(
            "        bundles:\n", "        bundles:\n          iaas: {enabled: false}\n"
        ),
        "platform.yaml",
    ),
    (
        "platform-system-variant-distro",
        COZY + "  variant: passthrough\n",
        PLATFORM_OK.replace(
            "        bundles:\n",
            "        bundles:\n          iaas: {enabled: true}\n"
            "          system: {variant: distro-full}\n",
        ),
        "platform.yaml",
    ),
    ("cozystack-without-platform-yaml", COZY + "  variant: passthrough\n", None, "platform.yaml"),
    (
        "cron-range-backwards",
        FLUX + "  variant: none\n  audit: {schedule: '30-10 * * * *', image: gpu-gitops}\n",
        None,
        "cron-range",
    ),
    (
        "image-name-too-long",
        FLUX + "  variant: none\n  audit: {image: " + "a" * 256 + "}\n",
        None,
        "image-name-length",
    ),
    (
        "alert-label-key",
        FLUX + "  variant: none\n  audit: {alerts: {labels: {'a b': x}}}\n",
        None,
        None,
    ),
    (
        "alert-label-value",
        FLUX + "  variant: none\n  audit: {alerts: {labels: {release: 'kube prometheus'}}}\n",
        None,
        None,
    ),
    ("alerts-not-a-mapping", FLUX + "  variant: none\n  audit: {alerts: [x]}\n", None, None),
    (
        "runbook-url-with-user-info",
        FLUX + "  variant: none\n  audit: {alerts: {runbookBaseURL: 'https://t0ken@wiki/rb'}}\n",
        None,
        None,
    ),
    (
        "mdev-duplicate",
        FLUX + "  variant: vgpu\n" + MANAGER + devices(A100_20C, A100_20C) + MDEV_TYPES,
        None,
        "duplicate",
    ),
]

# valid (validate exit 0, warnings allowed): the schema must accept them too
VALID: list[tuple[str, str, str | None]] = [
    # the image defaults to the published image of the rendering version
    ("audit-without-image", FLUX + "  variant: none\n  audit: {schedule: '@daily'}\n", None),
    (
        "sriov-blackwell-on-kubevirt-1.9",
        FLUX + "  variant: vgpu\n" + MANAGER + devices(RTX) + "  kubevirt: {version: '1.9'}\n",
        None,
    ),
    ("sriov-ampere-on-kubevirt-1.8", FLUX + "  variant: vgpu\n" + MANAGER + devices(A10), None),
    ("device-manager-on-ampere", FLUX + "  variant: vgpu\n" + DM + devices(A100_20C), None),
    (
        "device-manager-and-kubevirt-off",
        FLUX
        + "  variant: vgpu\n"
        + DM
        + devices(A100_20C)
        + "  mediatedDevicesConfiguration: {enabled: false, mediatedDeviceTypes: [nvidia-692]}\n",
        None,
    ),
    (
        "pci-written-ampere-overrides-nothing",
        FLUX
        + "  variant: vgpu\n"
        + MANAGER
        + devices(device(pciVendorSelector="10DE:2236", resourceName="nvidia.com/GB202GL_X")),
        None,
    ),
    ("mdev-without-creator-warns", FLUX + "  variant: vgpu\n" + MANAGER + devices(A100_20C), None),
    (
        "replace-defaults-repeats-a-default",
        COZY
        + "  variant: passthrough\n  replaceDefaults: true\n"
        + devices(device(pciVendorSelector="10DE:26B9", resourceName="nvidia.com/AD102GL_L40S")),
        PLATFORM_OK,
    ),
    (
        "container-nodes-with-hami",
        FLUX
        + "  variant: passthrough\n  hami: true\n"
        + devices(A10)
        + "  nodes: {gpu-1: container, gpu-2: vm-passthrough}\n",
        None,
    ),
    ("null-audit", FLUX + "  variant: none\n  audit: null\n", None),
    (
        "alerts-settings",
        FLUX
        + "  variant: none\n  audit:\n    alerts:\n"
        + "      labels: {release: kube-prometheus-stack, example.com/team: gpu, empty: ''}\n"
        + "      runbookBaseURL: https://wiki.example.com/runbooks/\n",
        None,
    ),
    ("alerts-empty-settings", FLUX + "  variant: none\n  audit: {alerts: {}}\n", None),
    (
        "licensing-config-map-on-flux-container",
        FLUX + "  variant: container\n  vgpu: {licensing: {configMapName: lic}}\n",
        None,
    ),
]

# which bad-input cases of test_bad_input.py the schema cannot see, and why
BAD_INPUT_MARKS = {
    **dict.fromkeys(
        [case[0] for case in test_bad_input.CASES if case[0].startswith("yaml-")]
        + ["empty-file", "comments-only", "oversized-file", "not-utf8"],
        "file",
    ),
    "name-not-the-folder-name": "folder",
    "pci-selector-duplicate": "duplicate",
    **dict.fromkeys(
        [
            "cozystack-iaas-off",
            "cozystack-isp-hosted",
            "cozystack-main-without-system-enabled",
            "platform-yaml-not-a-package",
            "platform-yaml-bundles-list",
            "platform-yaml-syntax-error",
        ],
        "platform.yaml",
    ),
}


def _corpus() -> list[tuple[str, bytes, bytes | None, bool, str | None]]:
    """(id, profile, platform.yaml, valid, NOT_EXPRESSIBLE key)"""
    out: list[tuple[str, bytes, bytes | None, bool, str | None]] = []
    for cid, profile, platform, _ in test_bad_input.CASES:
        data = profile.encode() if isinstance(profile, str) else profile
        mark = BAD_INPUT_MARKS.get(cid)
        out.append((f"bad-input:{cid}", data, platform.encode() if platform else None, False, mark))
    for cid, body, platform, mark in INVALID:
        out.append(
            (cid, (HEAD + body).encode(), platform.encode() if platform else None, False, mark)
        )
    for cid, body, platform in VALID:
        out.append(
            (cid, (HEAD + body).encode(), platform.encode() if platform else None, True, None)
        )
    for folder in sorted((REPO_ROOT / "clusters").iterdir()):
        profile = (folder / "gpu-profile.yaml").read_bytes()
        live = folder / "platform.yaml"
        text = profile.replace(f"name: {folder.name}\n".encode(), b"name: c1\n")
        live_bytes = live.read_bytes() if live.exists() else None
        out.append((f"example:{folder.name}", text, live_bytes, True, None))
    return out


CORPUS = _corpus()


def _validate(profile: bytes, platform: bytes | None) -> bool:
    try:
        check_files({"c1": (profile, platform)})
    except ProfileError:
        return False
    return True


def _document(profile: bytes) -> Any:
    """The profile as the schema sees it, or None where there is no JSON document."""
    try:
        data, _ = load_marked(profile.decode("utf-8"), "c1")
    except (YamlError, UnicodeDecodeError):
        return None
    return data


@pytest.fixture(scope="module")
def validator() -> Any:
    schema = profile_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_corpus_covers_every_reason_and_both_verdicts():
    marks = {entry[4] for entry in CORPUS} - {None}
    assert marks == set(NOT_EXPRESSIBLE)
    invalid = [e for e in CORPUS if not e[3]]
    assert len(invalid) >= 80 and len([e for e in CORPUS if e[3]]) >= 12


@pytest.mark.parametrize(
    ("profile", "platform", "valid", "mark"),
    [pytest.param(*entry[1:], id=entry[0]) for entry in CORPUS],
)
def test_schema_and_validate_agree(validator, profile, platform, valid, mark):
    assert _validate(profile, platform) == valid, "the corpus entry's verdict is stale"
    doc = _document(profile)
    if mark is None:
        assert doc is not None
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
        assert (not errors) == valid, errors or "validate refuses it, the schema accepts it"
    else:
        # validate refuses what the schema cannot see: if the schema learns to, drop the mark
        assert mark in NOT_EXPRESSIBLE
        assert doc is None or validator.is_valid(doc)


# --- every error rule is in the corpus ------------------------------------------------------------


def _error_sites() -> set[tuple[str, int, int]]:
    """(module, first line, last line) of every c.add / c.platform_problem that is an error."""
    sites = set()
    for path in sorted((REPO_ROOT / "renderer" / "rules").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("add", "platform_problem")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "c"
            ):
                continue
            severity = [*node.args[2:], *(k.value for k in node.keywords if k.arg == "severity")]
            if any(isinstance(a, ast.Constant) and a.value == "warning" for a in severity):
                continue
            sites.add((path.name, node.lineno, node.end_lineno or node.lineno))
    return sites


def test_every_error_rule_has_a_corpus_entry(monkeypatch):
    """A new error rule fails this until the corpus shows the schema says it (or marks why not)."""
    hit: set[tuple[str, int]] = set()

    def recording(method: Any) -> Any:
        def record(self: RuleChecker, path: Any, message: str, severity: str = "error") -> None:
            caller = sys._getframe(1)
            if severity == "error":
                hit.add((Path(caller.f_code.co_filename).name, caller.f_lineno))
            method(self, path, message, severity)

        return record

    monkeypatch.setattr(RuleChecker, "add", recording(RuleChecker.add))
    monkeypatch.setattr(RuleChecker, "platform_problem", recording(RuleChecker.platform_problem))
    for _, profile, platform, _, _ in CORPUS:
        _validate(profile, platform)
    sites = _error_sites()
    assert len(sites) >= 25
    missed = {
        site for site in sites if not any(f == site[0] and site[1] <= n <= site[2] for f, n in hit)
    }
    assert missed == set(), "error rules no corpus entry reaches (file, lines)"


# --- ajv, strict ---------------------------------------------------------------------------------

_AJV_SCRIPT = """\
const Ajv2020 = require(process.argv[2] + "/node_modules/ajv/dist/2020").default;
const fs = require("fs");
const schema = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const docs = JSON.parse(fs.readFileSync(process.argv[4], "utf8"));
const validate = new Ajv2020({strict: true, allErrors: true}).compile(schema);
console.log(JSON.stringify(docs.map((doc) => validate(doc))));
"""


@pytest.fixture(scope="module")
def ajv() -> Path:
    """ajv in the project's node cache (.ci/run installs it; installed here if missing)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are not installed: ajv cannot run")
    if not (NODE_CACHE / "node_modules" / "ajv" / "package.json").is_file():
        subprocess.run(
            [
                npm,
                "install",
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(NODE_CACHE),
                f"ajv@{AJV_VERSION}",
            ],
            check=True,
            capture_output=True,
        )
    return NODE_CACHE


def test_ajv_strict_compiles_the_schema_and_agrees(ajv, tmp_path, validator):
    docs = [(entry[0], _document(entry[1])) for entry in CORPUS]
    docs = [(cid, doc) for cid, doc in docs if doc is not None]
    (tmp_path / "schema.json").write_text(json.dumps(profile_schema()))
    (tmp_path / "docs.json").write_text(json.dumps([doc for _, doc in docs]))
    (tmp_path / "check.js").write_text(_AJV_SCRIPT)
    run = subprocess.run(
        [
            "node",
            str(tmp_path / "check.js"),
            str(ajv),
            *(str(tmp_path / f) for f in ("schema.json", "docs.json")),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr  # strict mode refuses to compile a loose schema
    verdicts = json.loads(run.stdout)
    assert {cid: v for (cid, _), v in zip(docs, verdicts, strict=True)} == {
        cid: validator.is_valid(doc) for cid, doc in docs
    }
