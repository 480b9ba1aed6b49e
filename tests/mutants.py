"""The mutation check a maintainer runs before a release: would the tests notice a wrong audit?

    python -m tests.mutants [PACKAGE...] [--list]

Each mutant below is one hand-written change at a decision point of the audit's comparison and
findings, adopt's plan, the renderer's values and rules, and the diff engine: a comparison
flipped, a branch dropped, a constant changed, an early return. The check copies the checkout
(without .git and .venv) to a temporary folder once, then for each mutant writes the changed
module there, runs the tests that cover its package (`TESTS`, stopping at the first failure) and
puts the module back; the checkout itself is never written. A mutant is killed when a test fails.
Mutants that cannot change behaviour are listed as equivalent, with the reason, and not run.

It prints one line per mutant and the score per package; it exits 1 when a package of `TARGETS`
kills fewer than 90% of its mutants, or when a mutant no longer applies (its text is not in the
module exactly once: edit the mutant with the code). Run it with the upstream reference files
(tests/reference.py finds them, or set GPU_GITOPS_REFERENCE): without them the oracle tests skip
and the score is a fresh clone's. Not a test module: pytest never collects it (no `test_` name).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tests import reference

REPO_ROOT = Path(__file__).resolve().parent.parent
Kind = Literal["flip", "drop", "constant", "return"]

TESTS: dict[str, tuple[str, ...]] = {
    "audit/compare": (
        "tests/audit/compare",
        "tests/audit/findings",
        "tests/audit/test_demo_data.py",
        "tests/audit/test_real_objects.py",
        "tests/audit/test_run.py",
    ),
    "audit/findings": (
        "tests/audit/findings",
        "tests/audit/test_demo_data.py",
        "tests/audit/test_real_objects.py",
        "tests/audit/test_run.py",
        "tests/audit/test_report.py",
    ),
    "adopt/plan": (
        "tests/adopt/test_plan.py",
        "tests/adopt/test_real_objects.py",
        "tests/adopt/test_adopt_api.py",
    ),
    "renderer/values": (
        "tests/renderer/values",
        "tests/renderer/test_overlays.py",
        "tests/renderer/test_rules.py",
        "tests/audit/test_demo_data.py",
    ),
    "renderer/rules": ("tests/renderer/rules", "tests/renderer/test_rules.py"),
    "kubedata/diff": ("tests/kubedata/test_diff.py", "tests/audit/compare"),
    "kubedata/quantity": ("tests/kubedata/test_quantity.py", "tests/audit/compare"),
}
"""The tests that cover each package (what the mutants of its modules are run against)."""
TARGETS = frozenset({"audit/compare", "audit/findings", "adopt/plan", "renderer/values"})
THRESHOLD = 0.9


@dataclass(frozen=True)
class Mutant:
    file: str
    """Repository-relative module."""
    old: str
    """Text found exactly once in the module..."""
    new: str
    """...and what it becomes."""
    kind: Kind
    wrong: str
    """The wrong behaviour the mutant stands for."""
    equivalent: str = ""
    """Why no test can tell the mutant from the code (then it is not run)."""

    @property
    def package(self) -> str:
        parts = self.file.removesuffix(".py").split("/")
        return "/".join(parts[:2])


def _m(file: str, old: str, new: str, kind: Kind, wrong: str, equivalent: str = "") -> Mutant:
    return Mutant(file, old, new, kind, wrong, equivalent)


_DIFFER = "audit/compare/differ.py"
_NORMALIZE = "audit/compare/normalize.py"
_QUANTITY = "kubedata/quantity.py"
_PAIRS = "audit/compare/pairs.py"
_DEFAULTS = "audit/compare/defaults.py"
_CLASSIFY = "audit/findings/classify.py"
_COLLECT = "audit/findings/collect.py"
_ATTRIBUTE = "audit/findings/attribute.py"
_SEVERITY = "audit/findings/severity.py"
_PROVENANCE = "audit/findings/provenance.py"
_PLAN = "adopt/plan.py"
_FLUX = "renderer/values/flux.py"
_COZY = "renderer/values/cozystack.py"
_WIRING = "renderer/values/wiring.py"
_DEVICES = "renderer/rules/devices.py"
_PLATFORM_RULES = "renderer/rules/platform.py"
_CHECKS = "renderer/rules/checks.py"
_DIFF = "kubedata/diff.py"

MUTANTS: tuple[Mutant, ...] = (
    # -- audit/compare ----------------------------------------------------------------------------
    _m(
        _DIFFER,
        "return isinstance(value, list) and not value",
        "return isinstance(value, list)",
        "drop",
        "a list git declares and someone deletes live is never reported",
    ),
    _m(
        _DIFFER,
        "matches(p[: len(fpath)], fpath) or matches(p, fpath[: len(p)])",
        "matches(p, fpath[: len(p)])",
        "drop",
        "a scoped comparison never walks down to its scope (wiring checks see nothing)",
    ),
    _m(
        _DIFFER,
        'fpath[1] == "labels" and is_injected(fpath[2], INJECTED_LABELS)',
        'fpath[1] == "labels"',
        "drop",
        "every label added by hand is ignored as injected",
    ),
    _m(
        _DIFFER,
        "return any(matches(p, fpath) for p in self.live_only_ignored)",
        "return False",
        "return",
        "server-populated fields (clusterIP...) become findings",
    ),
    _m(
        _DIFFER,
        "    if same_value(desired, live):\n        return []\n",
        "",
        "drop",
        "the equal-pair fast path is skipped",
        equivalent="the walk finds no change between equal values either (only slower)",
    ),
    _m(
        _DIFFER,
        'd = {k: v for k, v in desired.items() if k != "apiVersion"}',
        "d = dict(desired)",
        "drop",
        "an object served at another version reads as drift",
    ),
    _m(
        _NORMALIZE,
        "value = value.astimezone(dt.UTC).replace(tzinfo=None)",
        "value = value.replace(tzinfo=None)",
        "drop",
        "a timestamp with an offset is compared in its own zone, not UTC",
    ),
    _m(
        _NORMALIZE,
        "data[key] = base64.b64encode(str(value).encode()).decode()",
        "data.setdefault(key, base64.b64encode(str(value).encode()).decode())",
        "flip",
        "a Secret's data wins over its stringData (the API server does the opposite)",
    ),
    _m(
        _NORMALIZE,
        "if isinstance(value, float) and value.is_integer():",
        "if isinstance(value, float):",
        "drop",
        "1.5 becomes 1",
    ),
    _m(
        _NORMALIZE,
        "drop_list = child == [] and not (declared and declared_empty_is_a_value(key))",
        "drop_list = child == []",
        "drop",
        "a declared empty atomic list (featureGates: []) is pruned instead of compared",
    ),
    _m(
        _NORMALIZE,
        "(child == {} and not keep_empty_maps)",
        "(child == {})",
        "drop",
        "KubeVirt's empty-map flags (disableSerialConsoleLog: {}) are pruned",
    ),
    _m(
        _NORMALIZE,
        "for key in ALWAYS_DROPPED_ANNOTATIONS:\n                annotations.pop(key, None)",
        "for key in ():\n                annotations.pop(key, None)",
        "drop",
        "last-applied-configuration (a whole Secret, maybe) is compared and reported",
    ),
    _m(
        _NORMALIZE,
        'if key == "status":\n            continue',
        'if key == "status":\n            pass',
        "drop",
        "status is compared as drift",
    ),
    _m(_NORMALIZE, "if total < 1:", "if total <= 1:", "flip", "one second reads 1000ms"),
    _m(
        _NORMALIZE,
        'if not raw or _DURATION.sub("", raw):',
        "if not raw:",
        "drop",
        "a value that is no duration is rewritten as one",
    ),
    _m(
        _QUANTITY,
        'sign = "-" if q < 0 else ""',
        'sign = ""',
        "constant",
        "negative quantities lose their sign",
    ),
    _m(
        _QUANTITY,
        "scaled = q * 1000 ** -_DECIMAL[suffix]",
        "scaled = q * 100 ** -_DECIMAL[suffix]",
        "constant",
        "a milli quantity gets the wrong spelling",
    ),
    _m(
        _QUANTITY,
        "if abs(exp) > _MAX_EXPONENT:",
        "if exp > _MAX_EXPONENT:",
        "drop",
        "a huge negative exponent is computed (a hostile value costs seconds)",
    ),
    _m(
        _PAIRS,
        "if key not in meta_l or not same_value(value, meta_l[key]):",
        "if key not in meta_l:",
        "drop",
        "the raw fast path calls a pair with changed metadata unchanged",
    ),
    _m(
        _PAIRS,
        "    return all(\n        key in declared or key in ALWAYS_DROPPED_ANNOTATIONS",
        "    return True or all(\n        key in declared or key in ALWAYS_DROPPED_ANNOTATIONS",
        "return",
        "a label added by hand passes the raw fast path as unchanged",
    ),
    _m(
        _DEFAULTS,
        'return "Always" if tag in ("", "latest") else "IfNotPresent"',
        'return "IfNotPresent"',
        "constant",
        "imagePullPolicy: Always of a :latest image reads as drift",
    ),
    # -- audit/findings ---------------------------------------------------------------------------
    _m(
        _CLASSIFY,
        "if all(o.manager in _HELM_MANAGERS for o in owners):",
        "if any(o.manager in _HELM_MANAGERS for o in owners):",
        "flip",
        "a field owned by Helm and a hand edit is promised to revert at the next upgrade",
    ),
    _m(
        _CLASSIFY,
        'return "next-upgrade", release, mode == "disabled", "the next upgrade recreates it"',
        'return "next-upgrade", release, True, "the next upgrade recreates it"',
        "constant",
        "a missing object under drift detection `warn` is called missed",
    ),
    _m(
        _CLASSIFY,
        'path.startswith(p.rstrip("/") + "/")',
        'path.startswith(p.rstrip("/"))',
        "flip",
        "an ignore rule for /spec/a also ignores /spec/ab",
    ),
    _m(
        _CLASSIFY,
        'if finding.path.startswith("/spec") and finding.path != "/spec/suspend":',
        'if finding.path.startswith("/spec"):',
        "drop",
        "a suspended generated HelmRelease is promised to be rewritten",
    ),
    _m(
        _CLASSIFY,
        "if not others and not merge:",
        "if not others:",
        "drop",
        "additions to an ssa: Merge object are promised to revert",
    ),
    _m(
        _CLASSIFY,
        "    if entry.subresource:\n        return False\n",
        "",
        "drop",
        "a kubectl edit of the status subresource counts as taken over",
    ),
    _m(
        _CLASSIFY,
        'mode = "disabled" if controller.operator_generated else (controller.drift_mode or',
        "mode = (controller.drift_mode or",
        "drop",
        "an operator-generated HelmRelease's drift detection is believed",
    ),
    _m(
        _CLASSIFY,
        'if controller.apply_method == "csa" and finding.object.group not in BUILTIN_GROUPS:',
        'if controller.apply_method == "csa":',
        "drop",
        "built-in objects of a csa release are said never to revert",
    ),
    _m(
        _CLASSIFY,
        '"next-upgrade", release, False, "helm-controller reports it (mode warn), no fix"',
        '"next-upgrade", release, True, "helm-controller reports it (mode warn), no fix"',
        "constant",
        "drift detection in warn mode is said to miss what it reports",
    ),
    _m(
        _COLLECT,
        "if attribution.has_managed_fields or is_known_default(",
        "if is_known_default(",
        "drop",
        "API-server defaults (no manager wrote them) become findings",
    ),
    _m(
        _COLLECT,
        "schema is not None and not schema.keeps(change.field_path):",
        "schema is not None:",
        "drop",
        "a hand deletion in a custom resource is filed as pruning",
    ),
    _m(
        _COLLECT,
        "if added and partial and not _hand_wiring(change, live_obj, attribution):",
        "if added and partial:",
        "drop",
        "GPU wiring added by hand to an ssa: Merge object is left to its creator",
    ),
    _m(
        _COLLECT,
        "    return not attribution.attributed or any(",
        "    return any(",
        "drop",
        "unattributable GPU wiring on a Merge object is not reported",
    ),
    _m(
        _COLLECT,
        '        if finding.type == "suspended" and spot in by_path:\n'
        "            out.remove(by_path[spot])\n",
        "",
        "drop",
        "a suspended object is also reported as a live-only /spec/suspend",
    ),
    _m(
        _ATTRIBUTE,
        "owners = [e for d, e in covering if d == best]",
        "owners = [e for d, e in covering]",
        "drop",
        "every covering manager is an owner",
    ),
    _m(
        _ATTRIBUTE,
        "return depth + 1, False  # a scalar",
        "return depth, False  # a scalar",
        "constant",
        "the owner of an atomic list loses to its parent map's",
    ),
    _m(
        _ATTRIBUTE,
        'owns_self = isinstance(node, dict) and "." in node',
        "owns_self = isinstance(node, dict)",
        "drop",
        "a granular map's manager owns every child of it",
    ),
    _m(
        _ATTRIBUTE,
        'if not isinstance(fields, dict) or not raw.get("manager"):',
        "if not isinstance(fields, dict):",
        "drop",
        "a nameless managedFields entry is an owner",
    ),
    _m(
        _SEVERITY,
        'return "medium" if gpu_object or ref.kind in ("Kustomization", "GitRepository") else',
        'return "medium" if gpu_object else',
        "drop",
        "a suspended Kustomization or GitRepository is low",
    ),
    _m(
        _SEVERITY,
        'if gpu_object and finding.revert in ("never", "next-upgrade", "unknown"):',
        "if gpu_object:",
        "drop",
        "drift of a GPU object the next reconcile removes is medium",
    ),
    _m(
        _SEVERITY,
        '    if finding.type == "added" and not finding.attributed:\n        return "info"\n',
        "",
        "drop",
        "an unattributable live-only field (maybe a default) is drift",
    ),
    _m(
        _SEVERITY,
        "return name == GPU_OPERATOR  # the variant",
        "return True  # the variant",
        "return",
        "the variant of every GPU Package is GPU wiring",
    ),
    _m(
        _SEVERITY,
        "in _RELEASES_OF_PACKAGES:\n        return False",
        "in ():\n        return False",
        "drop",
        "the platform release's values are GPU wiring twice (Package and release)",
    ),
    # -- adopt/plan -------------------------------------------------------------------------------
    _m(
        _PLAN,
        '        if f.desired is None:\n            return f"kubectl label node {node} '
        '{WORKLOAD_LABEL}-"\n',
        "",
        "drop",
        "the revert of an added node label is `...=None --overwrite`",
    ),
    _m(
        _PLAN,
        "if GPU_OPERATOR in live and GPU_OPERATOR not in desired:",
        "if GPU_OPERATOR in live:",
        "drop",
        "enabledPackages that already listed the GPU Operator still switch the variant",
    ),
    _m(
        _PLAN,
        "        values: Any = package\n",
        "        values: Any = {}\n",
        "constant",
        "the live gpuOperatorVariant is not read: vgpu is adopted as passthrough",
    ),
    _m(
        _PLAN,
        "if (selector, value) not in have:",
        "if (selector, value) in have:",
        "flip",
        "a device added live is not appended to spec.devices",
    ),
    _m(
        _PLAN,
        "if value not in profile_selectors:",
        "if False:",
        "drop",
        "a default-table device gone live is 'removed' from a profile that never listed it",
    ),
    _m(
        _PLAN,
        '    if not edits:\n        raise _No("the live device list differs only',
        '    if False:\n        raise _No("the live device list differs only',
        "drop",
        "a device list differing only in unset fields is adopted as an empty edit",
    ),
    _m(
        _PLAN,
        "g not in desired and g not in _RENDERED_GATES]",
        "g not in desired]",
        "drop",
        "HostDevices, which the renderer adds, is copied into featureGates",
    ),
    _m(
        _PLAN,
        "if any(g in _RENDERED_GATES for g in dropped):",
        "if False:",
        "drop",
        "HostDevices removed live is adopted (every GPU cluster needs it)",
    ),
    _m(
        _PLAN,
        '        if not ctx.flux:\n            raise _No(\n                "on Cozystack',
        '        if ctx.flux:\n            raise _No(\n                "on Cozystack',
        "flip",
        "feature gates are adopted on Cozystack and refused on plain Flux",
    ),
    _m(
        _PLAN,
        '    if f.live is None:\n        return ctx.profile_file, [Edit("delete", path)]\n'
        '    return ctx.profile_file, [Edit("set", path, f.live)]\n\n\n# -- Packages',
        '    return ctx.profile_file, [Edit("set", path, f.live)]\n\n\n# -- Packages',
        "drop",
        "a mediatedDevicesConfiguration deleted live is set to null in the profile",
    ),
    _m(
        _PLAN,
        "if f.source is None or f.source.file != ctx.platform_file:",
        "if f.source is None:",
        "drop",
        "a GPU key the renderer writes is adopted into platform.yaml",
    ),
    _m(
        _PLAN,
        'variant = str((live.get("spec") or {}).get("variant") or "default")',
        'variant = "default"',
        "constant",
        "a vgpu GPU Operator Package is adopted as passthrough",
    ),
    _m(
        _PLAN,
        "if len(rest) > 1:",
        "if len(rest) > 2:",
        "constant",
        "one pull secret of vgpuManager is adopted as the whole list",
    ),
    _m(
        _PLAN,
        '    if f.redacted:\n        return (\n            "the value is redacted',
        '    if False:\n        return (\n            "the value is redacted',
        "drop",
        "a redacted secret is copied into git",
    ),
    _m(
        _PLAN,
        'if f.revert == "next-upgrade" and f.revert_release:',
        "if f.revert_release:",
        "drop",
        "drift the next reconcile reverts is told to force a Helm upgrade",
    ),
    _m(
        _PLAN,
        'if f.type == "missing" or (f.redacted and f.desired is not None):',
        'if f.type == "missing":',
        "drop",
        "the revert command of a redacted value spells the secret out",
    ),
    _m(
        _PROVENANCE,
        "    if f.desired is None:\n        patch: list",
        "    if False:\n        patch: list",
        "drop",
        "the revert of a live-only field adds null instead of removing it",
    ),
    _m(
        _PLAN,
        'if f.type in ("orphan", "unmanaged") and ctx.flux:',
        'if f.type in ("orphan", "unmanaged"):',
        "drop",
        "a Cozystack HelmRelease made by hand is adopted as a profile switch",
    ),
    _m(
        _PLAN,
        'if tokens != ("metadata", "labels", WORKLOAD_LABEL):',
        "if False:",
        "drop",
        "any Node label is adopted as the GPU workload label",
    ),
    _m(
        _PLAN,
        'bool(entry.get("externalResourceProvider", False))',
        'bool(entry.get("externalResourceProvider", True))',
        "constant",
        "a live device without externalResourceProvider is adopted with it on",
    ),
    # -- renderer/values --------------------------------------------------------------------------
    _m(
        _FLUX,
        'spec.vgpu.device_manager and spec.variant == "vgpu"',
        "spec.vgpu.device_manager",
        "drop",
        "the vGPU Device Manager is turned on outside the vgpu variant",
    ),
    _m(
        _FLUX,
        '"devicePlugin": {"enabled": not spec.hami},',
        '"devicePlugin": {"enabled": True},',
        "constant",
        "HAMi and the GPU Operator's device plugin both register nvidia.com/gpu",
    ),
    _m(
        _FLUX,
        "if licensing.secret_name or licensing.config_map_name:",
        "if licensing.secret_name:",
        "drop",
        "a licensing ConfigMap alone is dropped",
    ),
    _m(
        _FLUX,
        "{k: v for k, v in names.items() if v}",
        "dict(names)",
        "drop",
        "an unset licensing name is written as null",
    ),
    _m(
        _FLUX,
        'if spec.variant not in ("passthrough", "vgpu"):',
        'if spec.variant == "none":',
        "flip",
        "the container variant keeps the KubeVirt GPU wiring",
    ),
    _m(
        _FLUX,
        'mdev = mdev_entries(spec.devices) if spec.variant == "vgpu" else []',
        "mdev = mdev_entries(spec.devices)",
        "drop",
        "vGPU types are permitted on passthrough",
    ),
    _m(
        _FLUX,
        "return [g for g in dict.fromkeys(wanted) if g not in removed]",
        "return [g for g in wanted if g not in removed]",
        "drop",
        "HostDevices is listed twice, or kept where the GPU wiring goes",
    ),
    _m(
        _WIRING,
        "        for selector, d in selected\n        if selector is not None\n",
        "        for selector, d in selected\n",
        "drop",
        "a device without this selector gets an entry with a null selector",
    ),
    _m(
        _WIRING,
        '(("pciHostDevices", pci), ("mediatedDevices", mdev)) if v}',
        '(("pciHostDevices", pci), ("mediatedDevices", mdev))}',
        "drop",
        "an empty device list is written, replacing the live one",
    ),
    _m(
        _COZY,
        "        if value is None:\n            out.pop(key, None)\n",
        "        if False:\n            out.pop(key, None)\n",
        "drop",
        "a null value does not delete the key (Helm's coalescing does)",
    ),
    _m(
        _COZY,
        "out[key] = coalesce(out[key], value)",
        "out[key] = copy_data(value)",
        "drop",
        "a values map replaces the chart's instead of merging into it",
    ),
    _m(
        _COZY,
        "return names if name in names else [*names, name]",
        "return [*names, name]",
        "drop",
        "a package already enabled is listed twice",
    ),
    _m(
        _COZY,
        "hami_on = gpu_on and spec.hami",
        "hami_on = spec.hami",
        "drop",
        "HAMi is enabled in the bundle without the GPU Operator",
    ),
    _m(
        _COZY,
        "if not (n == GPU_OPERATOR and gpu_on) and not (n == HAMI and hami_on)",
        "if not (n == GPU_OPERATOR and gpu_on)",
        "drop",
        "HAMi stays in disabledPackages when the profile turns it on",
    ),
    _m(
        _COZY,
        'spec.variant, current if current in ("default", "vgpu") else "default"',
        "spec.variant, current",
        "drop",
        "an unknown live gpuOperatorVariant is kept",
    ),
    _m(
        _COZY,
        '{"bundles.disabledPackages": disabled} if disabled != live_disabled else {}',
        '{"bundles.disabledPackages": disabled}',
        "drop",
        "the admin's disabledPackages is written (replaced whole) when unchanged",
    ),
    _m(
        _COZY,
        '"mediatedDevices": [] if passthrough else mdev_entries(spec.devices),',
        '"mediatedDevices": mdev_entries(spec.devices),',
        "drop",
        "vGPU types are written on passthrough, where the chart ignores them",
    ),
    _m(
        _COZY,
        "return sorted((_optional_on(before) - _optional_on(after)) | newly_disabled)",
        "return sorted(_optional_on(before) - _optional_on(after))",
        "drop",
        "a package entering disabledPackages is not announced as leaving",
    ),
    _m(
        _COZY,
        'PACKAGE_VARIANT_VALUES.get(package_variant or "default", {})',
        'PACKAGE_VARIANT_VALUES.get("default", {})',
        "constant",
        "the platform Package's variant is ignored in the effective values",
    ),
    _m(
        _COZY,
        'full = system_variant in ("isp-full", "isp-full-generic")',
        'full = system_variant in ("isp-full",)',
        "constant",
        "isp-full-generic is said to refuse the iaas bundle",
    ),
    _m(
        _COZY,
        "gpu_on = GPU_OPERATOR in enabled and GPU_OPERATOR not in disabled",
        "gpu_on = GPU_OPERATOR in enabled",
        "drop",
        "a disabled GPU Operator is predicted to render",
    ),
    # -- renderer/rules ---------------------------------------------------------------------------
    _m(
        _DEVICES,
        '    if sel in seen:\n        c.add(\n            (*at, "pciVendorSelector"),',
        '    if False:\n        c.add(\n            (*at, "pciVendorSelector"),',
        "drop",
        "a repeated PCI selector is accepted",
    ),
    _m(
        _DEVICES,
        'spec.variant == "passthrough" and not spec.replace_defaults\n',
        'spec.variant == "passthrough"\n',
        "drop",
        "a default-table device is refused even with replaceDefaults",
    ),
    _m(
        _DEVICES,
        'if spec.variant == "passthrough" and not d.external_resource_provider:',
        'if spec.variant == "passthrough":',
        "drop",
        "every passthrough device is told to set externalResourceProvider",
    ),
    _m(_DEVICES, "< (1, 9):", "< (1, 8):", "constant", "SR-IOV vGPU is allowed on KubeVirt 1.8"),
    _m(
        _DEVICES,
        '_MDEV_ARCHITECTURES = ("pascal", "volta", "turing", "ampere")',
        '_MDEV_ARCHITECTURES = ("pascal", "volta", "turing")',
        "constant",
        "the vGPU Device Manager is refused on Ampere",
    ),
    _m(
        _DEVICES,
        "if not d.pci_vendor_selector and not d.mdev_name_selector:",
        "if not d.pci_vendor_selector:",
        "drop",
        "a vGPU type is told to set a PCI selector",
    ),
    _m(
        _DEVICES,
        "        if name != advertised:\n",
        "        if False:\n",
        "drop",
        "a vGPU resource name the plugin never advertises passes",
    ),
    _m(
        _PLATFORM_RULES,
        'if gpu_on and system.get("variant") == "isp-hosted":',
        'if system.get("variant") == "isp-hosted":',
        "drop",
        "a hosted platform without GPUs is refused",
    ),
    # -- kubedata/diff ----------------------------------------------------------------------------
    _m(_DIFF, "        return a is b\n", "        return a == b\n", "flip", "true equals 1"),
    _m(
        _DIFF,
        "elif not self.ignored_removal(sub, b[key]):",
        "else:",
        "drop",
        "a declared empty list absent live is a removal",
    ),
    _m(
        _DIFF,
        "if len(set(kb)) != len(kb) or len(set(ka)) != len(ka):",
        "if len(set(kb)) != len(kb):",
        "drop",
        "duplicate keys on the after side are matched as if unique",
    ),
    _m(
        _DIFF,
        "        if common_b != common_a:\n",
        "        if False:\n",
        "drop",
        "a keyed list's reorder is not noted",
    ),
    _m(
        _DIFF,
        "if whole.same_items() and not rule.ordered:",
        "if whole.same_items():",
        "drop",
        "a reorder of an ordered atomic list is noise",
    ),
    _m(
        _DIFF,
        '        if whole.same_items():\n            whole.emit("reordered")',
        '        if False:\n            whole.emit("reordered")',
        "drop",
        "a set's reorder is not noted",
    ),
    _m(
        _DIFF,
        "item.get(k, defaults.get(k))",
        "item.get(k)",
        "drop",
        "a key field left to its default (protocol: TCP) is another key",
    ),
    _m(
        _DIFF,
        "    if isinstance(b, dict | list) and same_value(b, a):\n            return\n",
        "",
        "drop",
        "the equal-subtree shortcut is skipped",
        equivalent="the walk below finds no change in equal subtrees either (only slower)",
    ),
    _m(
        _DIFF,
        'if change.kind == "added" and self.ignored_addition(change.field_path):',
        "if self.ignored_addition(change.field_path):",
        "drop",
        "a declared server-populated field changed by hand is ignored",
    ),
    _m(
        _DIFF,
        'out += f".{seg}" if out else seg',
        'out += f".{seg}"',
        "constant",
        "every readable path starts with a dot",
    ),
    # -- more of renderer/rules and kubedata/diff -------------------------------------------------
    _m(
        _CHECKS,
        'if spec.hami and spec.variant == "none":',
        "if False:",
        "drop",
        "HAMi without the GPU Operator passes",
    ),
    _m(
        _CHECKS,
        'if spec.hami and c.cozystack and spec.variant == "container":',
        'if spec.hami and spec.variant == "container":',
        "drop",
        "HAMi with the container variant is refused on plain Flux too",
    ),
    _m(
        _CHECKS,
        "        if workload == clash:\n",
        "        if False:\n",
        "drop",
        "a vm-vgpu node on a passthrough cluster passes",
    ),
    _m(
        _CHECKS,
        'if workload == "container" and own and not spec.hami:',
        'if workload == "container" and own:',
        "drop",
        "a container node is warned about although HAMi serves it",
    ),
    _m(
        _PLATFORM_RULES,
        'full = system.get("variant") in ("isp-full", "isp-full-generic")',
        'full = system.get("variant") in ("isp-full",)',
        "constant",
        "isp-full-generic is refused for the GPU bundle",
    ),
    _m(
        _PLATFORM_RULES,
        'elif version == "main" and not system.get("enabled"):',
        'elif not system.get("enabled"):',
        "drop",
        "Cozystack 1.6 is told it needs bundles.system.enabled",
    ),
    _m(
        _PLATFORM_RULES,
        'if not gpu_on and current not in (None, "default", "vgpu"):',
        'if not gpu_on and current not in (None, "default", "vgpu", "container"):',
        "drop",
        "a gpuOperatorVariant that fails the chart passes unwarned",
    ),
    _m(
        _DIFF,
        '        if a is _ABSENT:\n            self.emit(Change("removed"',
        '        if b is _ABSENT:\n            self.emit(Change("removed"',
        "flip",
        "an item only the before side of a positional list has is an addition",
    ),
    _m(
        _DIFF,
        "            if text not in in_b:\n",
        "            if text in in_b:\n",
        "flip",
        "a set reports the values both sides have as added",
    ),
)


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    line: int
    result: Literal["killed", "survived", "equivalent", "timeout"]
    seconds: float


def located(mutant: Mutant, text: str) -> int:
    """The line of the mutant's text; ValueError when it is not there exactly once."""
    count = text.count(mutant.old)
    if count != 1:
        raise ValueError(f"{mutant.file}: the mutant's text is there {count} times, not once")
    return text[: text.index(mutant.old)].count("\n") + 1


def _copy_tree(dest: Path) -> None:
    ignore = shutil.ignore_patterns(
        ".git", ".venv", ".cache", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"
    )
    shutil.copytree(REPO_ROOT, dest, ignore=ignore, symlinks=True)


def _pytest(tree: Path, tests: Sequence[str], env: dict[str, str], timeout: float) -> int | None:
    """The exit code of the tests in `tree` (None when they ran out of time)."""
    argv = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
    try:
        done = subprocess.run(
            argv, cwd=tree, env=env, timeout=timeout, capture_output=True, check=False
        )
    except subprocess.TimeoutExpired:
        return None
    return done.returncode


def _environment(tree: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    found = reference.find()
    if found is not None:
        env["GPU_GITOPS_REFERENCE"] = str(found)
    return env


def run(mutants: Sequence[Mutant], tree: Path) -> list[Outcome]:
    env = _environment(tree)
    baseline: dict[str, float] = {}
    for package in sorted({m.package for m in mutants if not m.equivalent}):
        start = time.monotonic()
        if _pytest(tree, TESTS[package], env, timeout=1800) != 0:
            raise SystemExit(f"the tests of {package} fail without a mutant: fix them first")
        baseline[package] = time.monotonic() - start
    out = []
    for mutant in mutants:
        path = tree / mutant.file
        original = path.read_text(encoding="utf-8")
        line = located(mutant, original)
        if mutant.equivalent:
            out.append(Outcome(mutant, line, "equivalent", 0.0))
            _say(out[-1])
            continue
        mutated = original.replace(mutant.old, mutant.new)
        compile(mutated, mutant.file, "exec")  # a mutant that does not compile is a typo here
        start = time.monotonic()
        try:
            path.write_text(mutated, encoding="utf-8")
            code = _pytest(tree, TESTS[mutant.package], env, 10 * baseline[mutant.package] + 60)
        finally:
            path.write_text(original, encoding="utf-8")
        result: Literal["killed", "survived", "timeout"] = (
            "timeout" if code is None else "survived" if code == 0 else "killed"
        )
        out.append(Outcome(mutant, line, result, time.monotonic() - start))
        _say(out[-1])
    return out


def _say(o: Outcome) -> None:
    m = o.mutant
    why = f" ({m.equivalent})" if m.equivalent else ""
    print(f"{o.result:10} {m.file}:{o.line} {m.kind}: {m.wrong}{why}", flush=True)


def scores(outcomes: Sequence[Outcome]) -> list[tuple[str, int, int, int, float]]:
    """(package, mutants, equivalent, killed, score) per package; timeouts count as killed."""
    rows = []
    for package in sorted({o.mutant.package for o in outcomes}):
        mine = [o for o in outcomes if o.mutant.package == package]
        equivalent = sum(o.result == "equivalent" for o in mine)
        killed = sum(o.result in ("killed", "timeout") for o in mine)
        counted = len(mine) - equivalent
        rows.append((package, len(mine), equivalent, killed, killed / counted if counted else 1.0))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mutants", description=__doc__)
    parser.add_argument("packages", nargs="*", help=f"some of: {', '.join(TESTS)}")
    parser.add_argument("--list", action="store_true", help="check and list the mutants only")
    args = parser.parse_args(argv)
    unknown = set(args.packages) - set(TESTS)
    if unknown:
        parser.error(f"no mutants for {', '.join(sorted(unknown))}")
    chosen = [m for m in MUTANTS if not args.packages or m.package in args.packages]
    stale = []
    for m in chosen:
        try:
            located(m, (REPO_ROOT / m.file).read_text(encoding="utf-8"))
        except ValueError as exc:
            stale.append(str(exc) + f": {m.wrong}")
    if stale:
        print("\n".join(stale), file=sys.stderr)
        return 1
    if args.list:
        for m in chosen:
            line = located(m, (REPO_ROOT / m.file).read_text(encoding="utf-8"))
            print(f"{m.file}:{line} {m.kind}: {m.wrong}")
        return 0
    if reference.find() is None:
        print("warning: no reference files: the oracle tests skip (a fresh clone's score)")
    with tempfile.TemporaryDirectory(prefix="gpu-gitops-mutants-") as tmp:
        tree = Path(tmp) / "tree"
        _copy_tree(tree)
        outcomes = run(chosen, tree)
    print("\n| package | mutants | equivalent | killed | score |\n|---|---|---|---|---|")
    failed = False
    for package, total, equivalent, killed, score in scores(outcomes):
        print(f"| {package} | {total} | {equivalent} | {killed} | {score:.0%} |")
        failed |= package in TARGETS and score < THRESHOLD
    survivors = [o for o in outcomes if o.result == "survived"]
    if survivors:
        print(f"\n{len(survivors)} survivor(s): write the test that fails on each")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
