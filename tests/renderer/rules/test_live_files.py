"""The live files' marks (renderer/rules/live_files.py), as table cases: import's mark is accepted,
no mark is refused with the import command, a hand-written file warns for each list it replaces."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.renderer.profile_texts import IMPORTED, PLATFORM_OK, kubevirt_text
from tests.renderer.test_rules import COZY, FLUX, L40S, check

IMPORT = "gpu-gitops import --cluster c1 [--kubeconfig F] [--context C]"
HAND = "{gpu-gitops.io/hand-written: 'true'}"
UNMARKED = (
    "not written by gpu-gitops import (no gpu-gitops.io/imported-from and gpu-gitops.io/imported-at"
    " annotations), so nothing says it is the live state the build replaces lists of; capture it: "
    f'{IMPORT}, or annotate it gpu-gitops.io/hand-written: "true"'
)


def _hand(path: str, built: str) -> str:
    return (
        f"written by hand: the built {path} [{built}] replaces the live list whole, and nothing "
        f"shows this file holds what is live; compare it with the cluster, or capture it: {IMPORT}"
    )


PLATFORM_BODY = COZY + "variant: passthrough\n"
FLUX_BODY = FLUX + "variant: passthrough\n" + L40S
KV = "clusters/c1/kubevirt.yaml"
PF = "clusters/c1/platform.yaml"


@pytest.mark.parametrize(
    ("body", "platform", "kubevirt", "valid", "expected"),
    [
        pytest.param(PLATFORM_BODY, PLATFORM_OK, None, True, [], id="platform-imported"),
        pytest.param(
            PLATFORM_BODY,
            PLATFORM_OK.replace(f", annotations: {IMPORTED}", ""),
            None,
            False,
            [(PF, 3, "metadata.annotations", "error", UNMARKED)],
            id="platform-unmarked",
        ),
        pytest.param(
            PLATFORM_BODY,
            PLATFORM_OK.replace(IMPORTED, HAND),
            None,
            True,
            [
                (
                    PF,
                    4,
                    f"{'spec.components.platform.values.bundles.enabledPackages'}",
                    "warning",
                    _hand(
                        "bundles.enabledPackages", "cozystack.external-dns, cozystack.gpu-operator"
                    ),
                ),
                # passthrough writes the mdev list empty too: the chart ignores it, the apply not
                (
                    PF,
                    4,
                    "",
                    "warning",
                    _hand("gpu.permittedHostDevices.mediatedDevices", "nothing"),
                ),
                (PF, 4, "", "warning", _hand("gpu.permittedHostDevices.pciHostDevices", "nothing")),
                (PF, 4, "", "warning", _hand("gpu.vgpuManager.imagePullSecrets", "nothing")),
            ],
            id="platform-hand-written",
        ),
        pytest.param(FLUX_BODY, None, kubevirt_text(), True, [], id="kubevirt-imported"),
        pytest.param(
            FLUX_BODY,
            None,
            kubevirt_text().replace(f"  annotations: {IMPORTED}\n", ""),
            False,
            [(KV, 3, "metadata.annotations", "error", UNMARKED)],
            id="kubevirt-unmarked",
        ),
        pytest.param(
            FLUX_BODY,
            None,
            kubevirt_text("[Snapshot]").replace(IMPORTED, HAND),
            True,
            [
                (
                    KV,
                    6,
                    "",
                    "warning",
                    _hand("developerConfiguration.featureGates", "Snapshot, HostDevices"),
                ),
                (KV, 6, "", "warning", _hand("permittedHostDevices.pciHostDevices", "10DE:26B9")),
            ],
            id="kubevirt-hand-written",
        ),
    ],
)
def test_live_file_marks(
    tmp_path: Path,
    body: str,
    platform: str | None,
    kubevirt: str | None,
    valid: bool,
    expected: list[tuple[str, int, str, str, str]],
) -> None:
    ok, problems = check(tmp_path, body, platform, kubevirt)
    mine = [p for p in problems if p.file in (PF, KV)]
    assert ok is valid, problems
    assert [(p.file, p.line, p.severity, p.message) for p in mine] == [
        (f, line, sev, msg) for f, line, _, sev, msg in expected
    ]
