"""The renderer's picture of Cozystack's platform chart against the chart itself, rendered by Helm.

`predict_packages` re-states templates/bundles/iaas.yaml; here the real chart (../shared/reference,
see helmchart.py) renders the same values and the GPU Packages must be equal, failures included:
1. the platform Package built for every Cozystack example in clusters/;
2. every case of Cozystack's own helm-unittest suite tests/bundles_gpu_kubevirt_wiring_test.yaml,
   parsed here, at versions "1.6" (v1.6.2's iaas.yaml) and "main";
3. the version-specific guards, and bundle switches the suite does not exercise.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from renderer.cozystack_names import GPU_OPERATOR, HAMI, KUBEVIRT, PLATFORM_PACKAGE
from renderer.values.cozystack import ChartFailure, effective_values, predict_packages
from tests import reference
from tests.renderer.values.helmchart import (
    MAIN_CHART,
    ChartFailed,
    PlatformChart,
    cozystack_examples,
)

SUITE = f"{MAIN_CHART}/tests/bundles_gpu_kubevirt_wiring_test.yaml"
GPU_PACKAGES = (GPU_OPERATOR, KUBEVIRT, HAMI)
SUITE_VERSIONS = ("1.6", "main")


# --- shared plumbing -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chart(helm_binary: Path, reference_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    return PlatformChart(helm_binary, reference_dir, tmp_path_factory.mktemp("platform-chart"))


Outcome = tuple[str, Any]
"""("ok", {name: Package}) or ("fail", message)."""


def gpu_packages(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The Packages carrying GPU wiring, by name (the chart also renders many others)."""
    out: dict[str, dict[str, Any]] = {}
    for doc in docs:
        name = doc.get("metadata", {}).get("name")
        if doc.get("kind") == "Package" and name in GPU_PACKAGES:
            assert name not in out, f"the chart rendered {name} twice"
            out[name] = doc
    return out


def chart_outcome(
    chart: PlatformChart, values: dict[str, Any], version: str, variant: str | None = None
) -> tuple[Outcome, list[dict[str, Any]]]:
    try:
        docs = chart.render(values, version, variant)
    except ChartFailed as exc:
        return ("fail", exc.message), []
    return ("ok", gpu_packages(docs)), docs


def predicted_outcome(
    values: dict[str, Any], version: str, variant: str | None = None
) -> tuple[Outcome, list[dict[str, Any]]]:
    try:
        docs = predict_packages(effective_values(copy.deepcopy(values), variant), version)
    except ChartFailure as exc:
        return ("fail", str(exc)), []
    names = [d["metadata"]["name"] for d in docs]
    assert len(names) == len(set(names)), f"predicted twice: {names}"
    assert set(names) <= set(GPU_PACKAGES), f"predicted a non-GPU Package: {names}"
    return ("ok", {d["metadata"]["name"]: d for d in docs}), docs


def same(a: Any, b: Any) -> bool:
    """Equal as YAML data, types included: Python's == takes True for 1 and 4 for 4.0."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def assert_agree(expected: Outcome, got: Outcome) -> None:
    """Chart (expected) vs renderer (got): same failure text, or the same Packages exactly."""
    if expected[0] == "fail" or got[0] == "fail":
        assert got == expected, "chart and predict_packages disagree on failing"
        return
    want, have = expected[1], got[1]
    assert sorted(have) == sorted(want), "Packages rendered by the chart vs predicted"
    for name in want:
        assert have[name] == want[name], f"{name} differs"
        assert same(have[name], want[name]), f"{name} differs in a value's type"


# --- 1. the examples -------------------------------------------------------------------------


COZYSTACK_EXAMPLES = cozystack_examples()


def test_there_are_cozystack_examples() -> None:
    assert len(COZYSTACK_EXAMPLES) >= 3, COZYSTACK_EXAMPLES


@pytest.mark.parametrize("cluster", COZYSTACK_EXAMPLES)
def test_example_packages_equal_chart(cluster: str, built, chart: PlatformChart) -> None:
    lp, objects = built[cluster]
    platform = [
        o for o in objects if o["kind"] == "Package" and o["metadata"]["name"] == PLATFORM_PACKAGE
    ]
    assert len(platform) == 1, f"{cluster}: built output has {len(platform)} platform Packages"
    spec = platform[0]["spec"]
    values = spec["components"]["platform"]["values"]
    variant = spec.get("variant")
    version = lp.profile.spec.platform.version
    assert version is not None

    expected, rendered = chart_outcome(chart, values, version, variant)
    got, _ = predicted_outcome(values, version, variant)
    assert expected[0] == "ok", (
        f"{cluster}: the platform chart refuses the built values: {expected[1]}"
    )
    assert_agree(expected, got)

    # What the profile asked for is what the chart wires.
    names = set(expected[1])
    gpu_via_bundle = lp.profile.spec.variant in ("passthrough", "vgpu")
    assert (GPU_OPERATOR in names) == gpu_via_bundle
    assert (HAMI in names) == (gpu_via_bundle and lp.profile.spec.hami)
    kubevirt = (
        expected[1].get(KUBEVIRT, {}).get("spec", {}).get("components", {}).get("kubevirt", {})
    )
    permitted = kubevirt.get("values", {}).get("permittedHostDevices", {})
    wired = {d["resourceName"] for entries in permitted.values() for d in entries}
    assert {d.resource_name for d in lp.profile.spec.devices} <= wired
    # DESIGN §4 rule 4: never emit a Package the platform itself renders.
    rendered_names = {d["metadata"]["name"] for d in rendered if d.get("kind") == "Package"}
    emitted = {o["metadata"]["name"] for o in objects if o["kind"] == "Package"}
    assert not (emitted - {PLATFORM_PACKAGE}) & rendered_names


# --- 2. Cozystack's helm-unittest suite ------------------------------------------------------

_MISSING = object()
_KNOWN_TEST_KEYS = {"it", "set", "documentSelector", "asserts"}
_KNOWN_ASSERTS = {
    "equal",
    "notEqual",
    "exists",
    "notExists",
    "contains",
    "notContains",
    "failedTemplate",
}


def _suite() -> list[dict[str, Any]]:
    root = reference.find()
    if root is None:
        return []
    path = root / SUITE
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert doc["templates"] == ["templates/bundles/iaas.yaml"], doc["templates"]
    tests: list[dict[str, Any]] = doc["tests"]
    return tests


def _short_id(index: int, text: str) -> str:
    words = re.sub(r"[^a-z0-9]+", " ", text.lower()).split()
    out = ""
    for word in words:
        if len(out) + len(word) + 1 > 60:
            break
        out = f"{out}-{word}" if out else word
    return f"{index:02d}-{out}"


SUITE_CASES = _suite()
_SUITE_PARAMS = [
    pytest.param(case, version, id=f"{version}-{_short_id(i, case['it'])}")
    for i, case in enumerate(SUITE_CASES)
    for version in SUITE_VERSIONS
] or [pytest.param(None, "main", id="suite-absent")]


def _set_values(set_: dict[str, Any] | None) -> dict[str, Any]:
    """helm-unittest `set:` keys are dotted paths; nested maps are taken as they are."""
    out: dict[str, Any] = {}
    for key, value in (set_ or {}).items():
        *parents, leaf = key.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def _lookup(doc: Any, path: str) -> Any:
    if re.search(r"[\[\]\"'\\]", path):
        pytest.fail(f"suite path {path!r} uses syntax this port does not read: map it by hand")
    node = doc
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _check(kind: str, args: dict[str, Any], doc: dict[str, Any]) -> str | None:
    """One helm-unittest assertion on one document; a message when it does not hold."""
    value = _lookup(doc, args["path"])
    where = f"{kind} {args['path']}"
    if kind == "exists":
        return None if value is not _MISSING else f"{where}: absent"
    if kind == "notExists":
        return None if value is _MISSING else f"{where}: present ({value!r})"
    if kind in ("equal", "notEqual"):
        equal = value is not _MISSING and same(value, args["value"])
        return None if equal == (kind == "equal") else f"{where}: {value!r} vs {args['value']!r}"
    if kind in ("contains", "notContains"):
        if not isinstance(value, list):
            return f"{where}: not a list ({value!r})"
        found = any(same(item, args["content"]) for item in value)
        return None if found == (kind == "contains") else f"{where}: {args['content']!r}"
    raise AssertionError(kind)


def _suite_failures(
    case: dict[str, Any], outcome: Outcome, docs: list[dict[str, Any]]
) -> list[str]:
    """What of the case's asserts fails on this render (docs: every object it rendered)."""
    failures = []
    for item in case["asserts"]:
        ((kind, args),) = ((k, v) for k, v in item.items() if k != "documentSelector")
        if kind == "failedTemplate":
            if outcome != ("fail", args["errorMessage"]):
                failures.append(f"failedTemplate: got {outcome[0]} {outcome[1]!r}")
            continue
        if outcome[0] == "fail":
            failures.append(f"{kind} {args['path']}: render failed: {outcome[1]}")
            continue
        selector = item.get("documentSelector", case.get("documentSelector"))
        if selector is None:
            pytest.fail(f"{case['it']!r}: an assert with no documentSelector: map it by hand")
        selected = [d for d in docs if _lookup(d, selector["path"]) == selector["value"]]
        if len(selected) != 1:
            failures.append(f"{kind}: {len(selected)} documents match {selector}")
            continue
        message = _check(kind, args, selected[0])
        if message:
            failures.append(message)
    return failures


def test_suite_is_read_whole(reference_dir: Path) -> None:
    """Every `it:` of the suite is a case here, and every assert kind is one this port reads."""
    text = (reference_dir / SUITE).read_text(encoding="utf-8")
    assert len(SUITE_CASES) == len(re.findall(r"^  - it: ", text, re.MULTILINE)) > 20
    for case in SUITE_CASES:
        assert set(case) <= _KNOWN_TEST_KEYS, f"{case['it']!r}: keys {sorted(set(case))}"
        for item in case["asserts"]:
            assert set(item) - {"documentSelector"} <= _KNOWN_ASSERTS, item
        # and the port's asserts can fail: nothing rendered satisfies none of them
        assert _suite_failures(case, ("ok", {}), []), case["it"]


@pytest.mark.parametrize(("case", "version"), _SUITE_PARAMS)
def test_suite_case(case: dict[str, Any] | None, version: str, reference_dir: Path, chart) -> None:
    assert case is not None, "suite file absent although reference_dir exists"
    values = _set_values(case.get("set"))
    expected, rendered = chart_outcome(chart, values, version)
    got, predicted = predicted_outcome(values, version)
    # The port reads the suite right: its asserts hold on the real chart...
    assert _suite_failures(case, expected, rendered) == []
    # ...and on what the renderer predicts,
    assert _suite_failures(case, got, predicted) == []
    # which equals the chart's GPU Packages exactly, not only in the fields the suite pins.
    assert_agree(expected, got)


# --- 3. guards and switches the suite leaves out ----------------------------------------------

_ON = {"system": {"enabled": True, "variant": "isp-full"}, "iaas": {"enabled": True}}
# (id, platform Package variant, values); every case runs at every version.
EXTRA_CASES: list[tuple[str, str | None, dict[str, Any]]] = [
    # main only: iaas without the system bundle fails; v1.6.2 renders it.
    ("iaas-without-system-bundle", None, {"bundles": {"iaas": {"enabled": True}}}),
    (
        "iaas-without-system-bundle-gpu",
        None,
        {"bundles": {"iaas": {"enabled": True}, "enabledPackages": [GPU_OPERATOR]}},
    ),
    ("iaas-off-renders-nothing", None, {"bundles": {"enabledPackages": [GPU_OPERATOR]}}),
    ("isp-full-variant-defaults", "isp-full", {}),
    ("isp-full-generic-gpu", "isp-full-generic", {"bundles": {"enabledPackages": [GPU_OPERATOR]}}),
    ("isp-hosted-with-iaas-fails", "isp-hosted", {"bundles": {"iaas": {"enabled": True}}}),
    ("isp-hosted-iaas-off", "isp-hosted", {"bundles": {"enabledPackages": [GPU_OPERATOR]}}),
    ("hami-with-gpu", "isp-full", {"bundles": {"enabledPackages": [GPU_OPERATOR, HAMI]}}),
    ("hami-alone", "isp-full", {"bundles": {"enabledPackages": [HAMI]}}),
    (
        "hami-disabled-wins",
        "isp-full",
        {"bundles": {"enabledPackages": [GPU_OPERATOR, HAMI], "disabledPackages": [HAMI]}},
    ),
    ("kubevirt-disabled", None, {"bundles": {**_ON, "disabledPackages": [KUBEVIRT]}}),
    ("cpu-ratio-zero", None, {"bundles": _ON, "resources": {"cpuAllocationRatio": 0}}),
    ("cpu-ratio-null", None, {"bundles": _ON, "resources": {"cpuAllocationRatio": None}}),
    ("cpu-ratio-float", None, {"bundles": _ON, "resources": {"cpuAllocationRatio": 2.5}}),
    (
        "variant-empty-string",
        None,
        {
            "bundles": {
                **_ON,
                "iaas": {"enabled": True, "gpuOperatorVariant": ""},
                "enabledPackages": [GPU_OPERATOR],
            }
        },
    ),
    (
        "variant-null",
        None,
        {
            "bundles": {
                **_ON,
                "iaas": {"enabled": True, "gpuOperatorVariant": None},
                "enabledPackages": [GPU_OPERATOR],
            }
        },
    ),
    (
        "vgpu-image-only",
        None,
        {
            "bundles": {
                **_ON,
                "iaas": {"enabled": True, "gpuOperatorVariant": "vgpu"},
                "enabledPackages": [GPU_OPERATOR],
            },
            "gpu": {"vgpuManager": {"image": "my-vgpu-manager"}},
        },
    ),
    (
        "vgpu-replace-defaults-empty",
        None,
        {
            "bundles": {
                **_ON,
                "iaas": {"enabled": True, "gpuOperatorVariant": "vgpu"},
                "enabledPackages": [GPU_OPERATOR],
            },
            "gpu": {"replaceDefaults": True, "vgpuDeviceManager": {"enabled": True}},
        },
    ),
    (
        "passthrough-replace-defaults-empty",
        None,
        {
            "bundles": {**_ON, "enabledPackages": [GPU_OPERATOR]},
            "gpu": {"replaceDefaults": True},
        },
    ),
    (
        "variant-typo-with-iaas-off",
        None,
        {"bundles": {"iaas": {"gpuOperatorVariant": "container"}}},
    ),
]


@pytest.mark.parametrize("version", ["1.5", "1.6", "main"])
@pytest.mark.parametrize(
    ("variant", "values"), [pytest.param(v, vals, id=i) for i, v, vals in EXTRA_CASES]
)
def test_chart_switch(variant: str | None, values: dict[str, Any], version: str, chart) -> None:
    expected, _ = chart_outcome(chart, values, version, variant)
    got, _ = predicted_outcome(values, version, variant)
    assert_agree(expected, got)


def test_system_bundle_guard_is_main_only(chart: PlatformChart) -> None:
    """The guard the renderer must know per version: main fails, v1.6.2 renders the bundle."""
    values = {"bundles": {"iaas": {"enabled": True}, "enabledPackages": [GPU_OPERATOR]}}
    main, _ = chart_outcome(chart, values, "main")
    assert main[0] == "fail"
    assert main[1].startswith("bundles.iaas.enabled requires bundles.system.enabled")
    v16, _ = chart_outcome(chart, values, "1.6")
    assert v16[0] == "ok"
    assert set(v16[1]) == {KUBEVIRT, GPU_OPERATOR}


def test_oracle_can_fail(chart: PlatformChart) -> None:
    """The comparison sees a one-field difference and a missing Package."""
    values = {"bundles": {**_ON, "enabledPackages": [GPU_OPERATOR]}}
    expected, _ = chart_outcome(chart, values, "main")
    got, _ = predicted_outcome(values, "main")
    assert_agree(expected, got)
    changed = copy.deepcopy(got[1])
    changed[KUBEVIRT]["spec"]["components"]["kubevirt"]["values"]["extraFeatureGates"] = []
    with pytest.raises(AssertionError, match="differs"):
        assert_agree(expected, ("ok", changed))
    del changed[GPU_OPERATOR]
    with pytest.raises(AssertionError, match="rendered by the chart vs predicted"):
        assert_agree(expected, ("ok", changed))
