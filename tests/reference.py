"""The upstream reference files the oracle tests read, pinned: `python -m tests.reference fetch`.

Tests find them (`find`) in $GPU_GITOPS_REFERENCE when it is set, else in ../shared/reference
beside the checkout (this project's CI), else in the cache `fetch` fills:
$XDG_CACHE_HOME/gpu-gitops/reference (default ~/.cache/gpu-gitops/reference). A folder counts
when it holds every pinned file. `fetch` downloads each file missing there (or not matching its
sha256) from its repository at the pinned commit and checks it; only when every file checks out
are they moved in place, so a mismatch or an unreachable server leaves the cache as it was.
Origins: ../shared/reference/SOURCES.md; the chart folder is Cozystack's packages/core/platform.

    python -m tests.reference fetch [--dest DIR] [--mirror URL]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

__all__ = ["PINNED", "FetchError", "Pin", "cache_dir", "candidates", "fetch", "find", "main"]

REPO_ROOT = Path(__file__).resolve().parent.parent
FETCH_COMMAND = "python -m tests.reference fetch"
_RAW = "https://raw.githubusercontent.com/"


class Pin(NamedTuple):
    local: str
    """Path in the reference folder."""
    url: str
    sha256: str


class FetchError(Exception):
    """A file could not be fetched or did not match its pin; nothing was written."""


def _pins(base: str, *files: tuple[str, ...]) -> list[Pin]:
    """(local path, sha256[, path in the repository when it differs from the local one's end])."""
    out = []
    for local, sha, *original in files:
        path = original[0] if original else local.split("/", 1)[1]
        out.append(Pin(local, base + path, sha))
    return out


# cozystack main, 2026-08-21
_COZYSTACK_MAIN = _RAW + "cozystack/cozystack/3c780acd417f086f8f18d040d0d7020ff55d3ba3/"
# cozystack v1.6.2
_COZYSTACK_1_6_2 = _RAW + "cozystack/cozystack/bfde94fd26d35c5f0281a1285f194e7ca3041b6a/"
# NVIDIA/gpu-operator v26.3.1
_GPU_OPERATOR_26_3_1 = _RAW + "NVIDIA/gpu-operator/5a25fef4572b2b36e32ebcacd482b586e467dc2d/"
# NVIDIA/gpu-operator v26.7.0
_GPU_OPERATOR_26_7_0 = _RAW + "NVIDIA/gpu-operator/10ee5b3638b89e11e949412aafa5ba99279c3721/"
# fluxcd/helm-controller v1.5.0
_HELM_CONTROLLER = _RAW + "fluxcd/helm-controller/c6187842591276f45cbca7adf3e3a5aa5d233328/"
# fluxcd/kustomize-controller v1.8.0
_KUSTOMIZE_CONTROLLER = (
    _RAW + "fluxcd/kustomize-controller/40b3758089386f35aef0330b917ec8d388dadefb/"
)
# fluxcd/source-controller v1.8.0
_SOURCE_CONTROLLER = _RAW + "fluxcd/source-controller/7fbbcd66663befc3ea37bd7c74b164b52b259241/"

PINNED: tuple[Pin, ...] = (
    *_pins(
        _COZYSTACK_MAIN,
        (
            "cozystack/internal/crdinstall/manifests/cozystack.io_packages.yaml",
            "086aef30043a25a0b92c5b5d475a81253a2bfd5e8ab0b599ad44f2a61fa94465",
        ),
        (
            "cozystack/internal/crdinstall/manifests/cozystack.io_packagesources.yaml",
            "feeb8fe934bf71b4c1da3df04f0b3a81c9d3ae9f023cff05582240d3def8e11a",
        ),
        (
            "cozystack/internal/fluxinstall/manifests/fluxcd.yaml",
            "48b109ade5fa1cda393843aa1d8a4ce0c8eef4f670dd63cd5e66b5b18460fda2",
        ),
        (
            "cozystack/packages/core/installer/example/platform.yaml",
            "edd48a819adc3371d227e8c4e175404847b05cfec677e0e37ed2f6b4edff80c0",
        ),
        (
            "cozystack/packages/core/platform/files/gpu-passthrough-defaults.yaml",
            "915457bba2b7bfd1288b4dbac711383467a0d042a8735689d44087a7a4587779",
        ),
        (
            "cozystack/packages/core/platform/files/gpu-vgpu-defaults.yaml",
            "149c6dcc574ee3fcf114baa0437d4dca3bb0299be6f6de7097207f17e0c2ff0a",
        ),
        (
            "cozystack/packages/core/platform/sources/gpu-operator.yaml",
            "1ba62cd384f5624e537d8f40e60a1f8a657fe3e82660795a1725c1cf0d1a7648",
        ),
        (
            "cozystack/packages/core/platform/sources/hami.yaml",
            "cff948edd7e9d4ba03109d7571b8e1c80cc97df0daab9bacb74536dd71b4f619",
        ),
        (
            "cozystack/packages/core/platform/sources/kubevirt.yaml",
            "ede3ccdb2fd5e9143d1bd2321646ae9ceb57d5607817e4c19ef76947d8d0a340",
        ),
        (
            "cozystack/packages/core/platform/templates/bundles/iaas.yaml",
            "fe10e957eea1c63b933d817c357e11d6d7bd0e902b86febda758d6bcce6c0c82",
        ),
        (
            "cozystack/packages/core/platform/tests/bundles_gpu_kubevirt_wiring_test.yaml",
            "7f00f0baa2ca3942aa637ae9bdaa266d3779874a303750fa89e2e3a7d981a8ae",
        ),
        (
            "cozystack/packages/core/platform/values-isp-full-generic.yaml",
            "2c691be95a8571c9914213a593707096c6961cb8c0af29d41bfc19eb14e2dbc1",
        ),
        (
            "cozystack/packages/core/platform/values-isp-full.yaml",
            "194f9eb006474cdab5707da1cacf06c9baa186c5b478db4f1f9f559bad5a2842",
        ),
        (
            "cozystack/packages/core/platform/values-isp-hosted.yaml",
            "c3a73209ba39e688bbba3c114f990232cf5d2fb7e5b8a7f075217d5905c3b349",
        ),
        (
            "cozystack/packages/core/platform/values.yaml",
            "83d057dc6727e0a45deeee2f12d692491d29e8aecf70e1bc9115277d53142182",
        ),
        (
            "cozystack/packages/system/gpu-operator/values-container.yaml",
            "4b0755bf563805b3e90afb9a2187b17bc43f7f1579b2a3c453c87f7019c3a8f6",
        ),
        (
            "cozystack/packages/system/gpu-operator/values-passthrough.yaml",
            "8f43523da58f3310c22c76a6f3ca5d5527b46917dce469aafcfa2101ea64d086",
        ),
        (
            "cozystack/packages/system/gpu-operator/values-vgpu.yaml",
            "297134d712a2e2c058c15fdee7ba11613bb09f57f006fa67a6da82dab6822006",
        ),
        (
            "cozystack/packages/system/gpu-operator/values.yaml",
            "869087503f8d6fe2afccce9135c6cef24fbe8e29075864857bec3e252266d4e4",
        ),
        (
            "cozystack/packages/system/kubevirt/templates/kubevirt-cr.yaml",
            "35195f120ee88e377652824421a53402fb8a2c1aff6d3fa5b03a02c419f87c69",
        ),
        (
            "cozystack/packages/system/kubevirt/values.yaml",
            "54c4708f5ec1857dc5c807daada7eb4ebd3618f4de2a8cc62eaa8ddc349686b2",
        ),
        (
            "cozystack/packages/system/kubevirt-operator/templates/kubevirt-operator.yaml",
            "5a062fe1c017df89dbc189cae2a996bf3bbae47c14c2d6405dabbfc9ad351aa2",
        ),
        (
            "cozystack-platform-chart/Chart.yaml",
            "8e9938ec30175815e730a6362cd0bd6796e76b02b82cccb3c17d68232b155982",
            "packages/core/platform/Chart.yaml",
        ),
        (
            "cozystack-platform-chart/files/gpu-passthrough-defaults.yaml",
            "915457bba2b7bfd1288b4dbac711383467a0d042a8735689d44087a7a4587779",
            "packages/core/platform/files/gpu-passthrough-defaults.yaml",
        ),
        (
            "cozystack-platform-chart/files/gpu-vgpu-defaults.yaml",
            "149c6dcc574ee3fcf114baa0437d4dca3bb0299be6f6de7097207f17e0c2ff0a",
            "packages/core/platform/files/gpu-vgpu-defaults.yaml",
        ),
        (
            "cozystack-platform-chart/templates/_helpers.tpl",
            "35191dbe152e03868b353bfad528f4b102ab92f4adcffc6cc2bd3e279f8e946a",
            "packages/core/platform/templates/_helpers.tpl",
        ),
        (
            "cozystack-platform-chart/templates/bundles/iaas.yaml",
            "fe10e957eea1c63b933d817c357e11d6d7bd0e902b86febda758d6bcce6c0c82",
            "packages/core/platform/templates/bundles/iaas.yaml",
        ),
        (
            "cozystack-platform-chart/templates/bundles/naas.yaml",
            "3bcdd644b342b61db9fb8b76dd876ebe51a3732b4a9bad31e31fee59a40ca9b2",
            "packages/core/platform/templates/bundles/naas.yaml",
        ),
        (
            "cozystack-platform-chart/templates/bundles/paas.yaml",
            "f633e2c22cbd3c56e73c79d6a7b2fcd283f9ab43d09670521c5f222c0f3fd5bd",
            "packages/core/platform/templates/bundles/paas.yaml",
        ),
        (
            "cozystack-platform-chart/templates/bundles/system.yaml",
            "0f8e3dd7a77adfea047bd626057a8a5323f6e9add06a50756db2b33276c3dc13",
            "packages/core/platform/templates/bundles/system.yaml",
        ),
        (
            "cozystack-platform-chart/templates/sources.yaml",
            "0034e8e499ca3fcf390fd0e3eedb0e6d290639655ce3fca97b70f86be7752e80",
            "packages/core/platform/templates/sources.yaml",
        ),
        (
            "cozystack-platform-chart/tests/bundles_gpu_kubevirt_wiring_test.yaml",
            "7f00f0baa2ca3942aa637ae9bdaa266d3779874a303750fa89e2e3a7d981a8ae",
            "packages/core/platform/tests/bundles_gpu_kubevirt_wiring_test.yaml",
        ),
        (
            "cozystack-platform-chart/values-isp-full-generic.yaml",
            "2c691be95a8571c9914213a593707096c6961cb8c0af29d41bfc19eb14e2dbc1",
            "packages/core/platform/values-isp-full-generic.yaml",
        ),
        (
            "cozystack-platform-chart/values-isp-full.yaml",
            "194f9eb006474cdab5707da1cacf06c9baa186c5b478db4f1f9f559bad5a2842",
            "packages/core/platform/values-isp-full.yaml",
        ),
        (
            "cozystack-platform-chart/values-isp-hosted.yaml",
            "c3a73209ba39e688bbba3c114f990232cf5d2fb7e5b8a7f075217d5905c3b349",
            "packages/core/platform/values-isp-hosted.yaml",
        ),
        (
            "cozystack-platform-chart/values.yaml",
            "83d057dc6727e0a45deeee2f12d692491d29e8aecf70e1bc9115277d53142182",
            "packages/core/platform/values.yaml",
        ),
    ),
    *_pins(
        _COZYSTACK_1_6_2,
        (
            "cozystack@v1.6.2/internal/crdinstall/manifests/cozystack.io_packages.yaml",
            "086aef30043a25a0b92c5b5d475a81253a2bfd5e8ab0b599ad44f2a61fa94465",
        ),
        (
            "cozystack@v1.6.2/internal/crdinstall/manifests/cozystack.io_packagesources.yaml",
            "feeb8fe934bf71b4c1da3df04f0b3a81c9d3ae9f023cff05582240d3def8e11a",
        ),
        (
            "cozystack@v1.6.2/packages/core/platform/sources/gpu-operator.yaml",
            "1ba62cd384f5624e537d8f40e60a1f8a657fe3e82660795a1725c1cf0d1a7648",
        ),
        (
            "cozystack@v1.6.2/packages/core/platform/templates/bundles/iaas.yaml",
            "a5426b5c4f99a99f76c2b2c67707579c8e02e7358ca919a3b88c83efbf21a1a1",
        ),
        (
            "cozystack@v1.6.2/packages/core/platform/values.yaml",
            "98c1b3e3a077e15ed3ef379116027d1c96fd4f6ff85cc31db6440d568e7110c3",
        ),
    ),
    *_pins(
        _GPU_OPERATOR_26_3_1,
        (
            "gpu-operator/deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml",
            "c8af61ec88ab2326e5d1b042496e7dfd77e97a6894ffb8e1c15be26598474bc6",
        ),
        (
            "gpu-operator/deployments/gpu-operator/values.yaml",
            "0610a73d917c6e97381f152c232d658169472de69cac09fb8a70711eeffaebca",
        ),
    ),
    *_pins(
        _GPU_OPERATOR_26_7_0,
        (
            "gpu-operator@v26.7.0/deployments/gpu-operator/values.yaml",
            "21ebfaa82dbfb6ad92b3c0ff33d7c891c7e66c9a0b008ce1c60a1897bae34418",
        ),
    ),
    *_pins(
        _HELM_CONTROLLER,
        (
            "helm-controller/config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml",
            "837f4f95f7f1d8560238657af7c450ca6846d35355baf236f32b60d199050e9a",
        ),
    ),
    *_pins(
        _KUSTOMIZE_CONTROLLER,
        (
            "kustomize-controller/config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml",
            "63b6f4211a51914788f00e98a3566fafb1364cca0954bcd1bec8b0a5d3524a63",
        ),
    ),
    *_pins(
        _SOURCE_CONTROLLER,
        (
            "source-controller/config/crd/bases/source.toolkit.fluxcd.io_externalartifacts.yaml",
            "f9bf7d234ad05e5699f70b2ce8ed2ce9387d0b8543cfa27b516bdd1551bbd059",
        ),
        (
            "source-controller/config/crd/bases/source.toolkit.fluxcd.io_gitrepositories.yaml",
            "6a79e5692f0f6de31fa1ea241d9d9aa9f3e1282dace7dbc8a41a66f2d83511a2",
        ),
        (
            "source-controller/config/crd/bases/source.toolkit.fluxcd.io_ocirepositories.yaml",
            "b9d77e19b7aa03a50cce28860e644b19055b7b0aa1055e4c02c366fb779f1bcf",
        ),
    ),
)


def cache_dir() -> Path:
    """Where `fetch` puts the files: $XDG_CACHE_HOME/gpu-gitops/reference (~/.cache/...)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpu-gitops" / "reference"


def candidates() -> list[Path]:
    """The folders tests look in, in order (only the one named by GPU_GITOPS_REFERENCE if set)."""
    named = os.environ.get("GPU_GITOPS_REFERENCE")
    if named:
        return [Path(named)]
    return [REPO_ROOT.parent / "shared" / "reference", cache_dir()]


def find() -> Path | None:
    """The first candidate folder holding every pinned file; None when there is none."""
    return next((c for c in candidates() if all((c / pin.local).is_file() for pin in PINNED)), None)


def _matches(path: Path, sha256: str) -> bool:
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == sha256


def _download(url: str, timeout: float) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data: bytes = response.read()
    except urllib.error.HTTPError as exc:
        raise FetchError(f"{url}: HTTP {exc.code} {exc.reason}; nothing was written") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FetchError(
            f"cannot reach {urllib.parse.urlsplit(url).netloc} ({reason}); nothing was written"
        ) from None
    return data


def fetch(
    dest: Path,
    pins: Sequence[Pin] = PINNED,
    mirror: str | None = None,
    timeout: float = 30.0,
) -> list[str]:
    """Put every pinned file into `dest`; the local paths that had to be downloaded.

    `mirror` replaces https://raw.githubusercontent.com/ in every URL. FetchError (an unreachable
    server, an HTTP error, a sha256 that is not the pinned one) leaves `dest` as it was.
    """
    todo = [pin for pin in pins if not _matches(dest / pin.local, pin.sha256)]
    if not todo:
        return []
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".gpu-gitops-fetch-", dir=dest.parent) as tmp:
        staged: list[tuple[Path, Path]] = []
        for i, pin in enumerate(todo):
            url = pin.url if mirror is None else mirror.rstrip("/") + "/" + pin.url[len(_RAW) :]
            data = _download(url, timeout)
            got = hashlib.sha256(data).hexdigest()
            if got != pin.sha256:
                raise FetchError(
                    f"{url}: sha256 {got} is not the pinned {pin.sha256}; nothing was written"
                )
            path = Path(tmp) / str(i)
            path.write_bytes(data)
            staged.append((path, dest / pin.local))
        for path, target in staged:  # all checked: now moved in place, each whole
            target.parent.mkdir(parents=True, exist_ok=True)
            path.replace(target)
    return [pin.local for pin in todo]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.reference", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    get = sub.add_parser("fetch", help="download the pinned files the oracle tests read")
    get.add_argument("--dest", type=Path, help=f"folder (default: {cache_dir()})")
    get.add_argument("--mirror", metavar="URL", help="serves raw.githubusercontent.com's paths")
    args = parser.parse_args(argv)
    dest = args.dest or cache_dir()
    try:
        fetched = fetch(dest, mirror=args.mirror)
    except FetchError as exc:
        print(f"python -m tests.reference: error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(fetched)} of {len(PINNED)} files fetched into {dest}; the tests look there")
    if args.dest and not os.environ.get("GPU_GITOPS_REFERENCE"):
        print(f"point the tests at it: export GPU_GITOPS_REFERENCE={dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
