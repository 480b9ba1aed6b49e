"""Cozystack's real platform chart, rendered with a real Helm binary (the oracle of test_oracle).

`PlatformChart.render(values, version, variant)` runs `helm template` on the platform chart in
../shared/reference and returns the Packages templates/bundles/iaas.yaml emits. "main" renders the
reference chart where it lies; "1.5" and "1.6" render a scratch copy whose iaas.yaml and values.yaml
are v1.6.2's (reference/cozystack@v1.6.2/packages/core/platform/). The other bundle templates of
that copy are main's, not v1.6.2's, so the copy keeps only _helpers.tpl and bundles/iaas.yaml.

A platform PackageSource variant (the platform Package's spec.variant) layers values-<variant>.yaml
before the Package's values, as the operator's ArtifactGenerator does. The reference holds only
main's variant files; they are used for every version.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import REPO_ROOT

__all__ = [
    "IAAS_TEMPLATE",
    "RELEASE",
    "ChartFailed",
    "PlatformChart",
    "cozystack_examples",
]

RELEASE = "cozystack"
RELEASE_NAMESPACE = "cozy-system"
IAAS_TEMPLATE = "templates/bundles/iaas.yaml"
MAIN_CHART = "cozystack-platform-chart"
V162_PLATFORM = "cozystack@v1.6.2/packages/core/platform"
_V162_FILES = (IAAS_TEMPLATE, "values.yaml")
_VERSION_CHART = {"1.5": "v1.6.2", "1.6": "v1.6.2", "main": "main"}
# Helm prints a template's `fail` as
#   Error: execution error at (cozy-platform/templates/bundles/iaas.yaml:2:4): <message>
# followed by a blank line and a hint about --debug.
_EXEC_ERROR = re.compile(r"^Error: execution error at \([^()]*:\d+:\d+\): ", re.MULTILINE)
_DEBUG_HINT = "\n\nUse --debug flag to render out invalid YAML"
# What Helm says when --show-only names a template whose output is empty (the iaas bundle is off).
_EMPTY_TEMPLATE = f"Error: could not find template {IAAS_TEMPLATE} in chart"


class ChartFailed(Exception):
    """Helm refused to render; `message` is the chart's own text, `stderr` all Helm said."""

    def __init__(self, message: str, stderr: str) -> None:
        super().__init__(message)
        self.message = message
        self.stderr = stderr


def _chart_message(stderr: str) -> str:
    """The text a template passed to `fail`, without Helm's prefix and hint."""
    text = stderr.strip()
    match = _EXEC_ERROR.search(text)
    if match:
        text = text[match.end() :]
    return text.split(_DEBUG_HINT, 1)[0].strip()


class PlatformChart:
    """Renders the platform chart at a Cozystack version; chart copies live under `scratch`."""

    def __init__(self, helm: Path, reference: Path, scratch: Path) -> None:
        self.helm = helm
        self.reference = reference
        self.scratch = scratch
        self._charts: dict[str, Path] = {}
        # Keep Helm off the user's ~/.cache and ~/.config.
        home = scratch / "helm-home"
        self._env = {
            **os.environ,
            "HELM_CACHE_HOME": str(home / "cache"),
            "HELM_CONFIG_HOME": str(home / "config"),
            "HELM_DATA_HOME": str(home / "data"),
        }

    def chart(self, version: str) -> Path:
        """The chart folder for a profile's platform.version."""
        if version not in _VERSION_CHART:
            raise ValueError(f"unknown Cozystack version {version!r}")
        source = _VERSION_CHART[version]
        if source not in self._charts:
            main = self.reference / MAIN_CHART
            if source == "main":
                self._charts[source] = main
            else:
                dest = self.scratch / f"platform-chart-{source}"
                shutil.rmtree(dest, ignore_errors=True)
                shutil.copytree(main, dest, ignore=shutil.ignore_patterns("tests"))
                for path in (dest / "templates").rglob("*"):
                    keep = path.name == "_helpers.tpl" or path == dest / IAAS_TEMPLATE
                    if path.is_file() and not keep:
                        path.unlink()
                for rel in _V162_FILES:
                    shutil.copyfile(self.reference / V162_PLATFORM / rel, dest / rel)
                self._charts[source] = dest
        return self._charts[source]

    def render(
        self, values: dict[str, Any], version: str, variant: str | None = None
    ) -> list[dict[str, Any]]:
        """The objects iaas.yaml renders for these platform values; ChartFailed if Helm fails."""
        chart = self.chart(version)
        if not (chart / IAAS_TEMPLATE).is_file():
            raise FileNotFoundError(chart / IAAS_TEMPLATE)
        args = [str(self.helm), "template", RELEASE, str(chart), "--namespace", RELEASE_NAMESPACE]
        if variant not in (None, "default"):
            variant_file = chart / f"values-{variant}.yaml"
            if not variant_file.is_file():
                raise ValueError(f"the platform PackageSource has no variant {variant!r}")
            args += ["-f", str(variant_file)]
        self.scratch.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", suffix=".yaml", dir=self.scratch, encoding="utf-8", delete=False
        ) as fh:
            yaml.safe_dump(values, fh, sort_keys=False)
            values_file = Path(fh.name)
        try:
            args += ["-f", str(values_file), "--show-only", IAAS_TEMPLATE]
            proc = subprocess.run(
                args, capture_output=True, text=True, env=self._env, timeout=60, check=False
            )
        finally:
            values_file.unlink()
        if proc.returncode != 0:
            if proc.stderr.strip() == _EMPTY_TEMPLATE:
                return []  # the bundle rendered nothing (bundles.iaas.enabled is off)
            raise ChartFailed(_chart_message(proc.stderr), proc.stderr)
        return [doc for doc in yaml.safe_load_all(proc.stdout) if doc is not None]


def cozystack_examples() -> list[str]:
    """The example clusters (clusters/) on Cozystack: the ones the platform chart renders."""
    names = []
    for path in sorted((REPO_ROOT / "clusters").glob("*/gpu-profile.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if ((doc.get("spec") or {}).get("platform") or {}).get("type") == "cozystack":
            names.append(path.parent.name)
    return names
