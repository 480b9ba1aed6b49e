"""Helm release Secrets made the way Helm makes them, from a chart rendered by the real helm binary.

`helm install --dry-run=client -o json` prints Helm's own release record (the JSON Helm stores:
name, info, chart, config, manifest, version, namespace, apply_method) without touching a cluster;
`helm template` renders the same manifest but not the record. The record is then stored as Helm's
secrets driver stores it (pkg/storage/driver/util.go, secrets.go): JSON -> gzip -> base64 into
`data.release`, which the API shows base64-encoded once more.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["helm_template", "kubevirt_chart", "release_record", "release_secret"]

KUBEVIRT_CHART = "cozystack/packages/system/kubevirt"
# Cozystack's charts carry `version: 0.0.0` (set at build time); the folder here has no Chart.yaml.
KUBEVIRT_CHART_YAML = "apiVersion: v2\nname: cozy-kubevirt\nversion: 0.0.0\n"


def kubevirt_chart(reference: Path, workdir: Path) -> Path:
    """A copy of Cozystack's kubevirt chart with the Chart.yaml it lacks."""
    chart = workdir / "cozy-kubevirt"
    shutil.copytree(reference / KUBEVIRT_CHART, chart)
    (chart / "Chart.yaml").write_text(KUBEVIRT_CHART_YAML)
    return chart


def _helm(helm: Path, args: list[str], workdir: Path) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(workdir),
        "KUBECONFIG": os.devnull,  # client dry run: no cluster
        "HELM_CACHE_HOME": str(workdir / "cache"),
        "HELM_CONFIG_HOME": str(workdir / "config"),
        "HELM_DATA_HOME": str(workdir / "data"),
    }
    done = subprocess.run(
        [str(helm), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"helm {args[0]} failed: {done.stderr.strip()}")
    return done.stdout


def release_record(
    helm: Path,
    chart: Path,
    release: str,
    namespace: str,
    values: dict[str, Any],
    workdir: Path,
    *,
    server_side: bool = True,
) -> dict[str, Any]:
    """Helm's release record for installing `chart` with `values`."""
    digest = hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:12]
    values_file = workdir / f"{release}-{digest}.json"
    values_file.write_text(json.dumps(values))
    out = _helm(
        helm,
        [
            "install",
            release,
            str(chart),
            "-n",
            namespace,
            "--dry-run=client",
            "-o",
            "json",
            "-f",
            str(values_file),
            f"--server-side={'true' if server_side else 'false'}",
        ],
        workdir,
    )
    record: dict[str, Any] = json.loads(out)
    return record


def helm_template(
    helm: Path, chart: Path, release: str, namespace: str, values: dict[str, Any], workdir: Path
) -> str:
    values_file = workdir / f"{release}-template-values.json"
    values_file.write_text(json.dumps(values))
    return _helm(
        helm, ["template", release, str(chart), "-n", namespace, "-f", str(values_file)], workdir
    )


def release_secret(
    record: dict[str, Any], *, revision: int, status: str, when: str, compress: bool = True
) -> dict[str, Any]:
    """The Secret Helm's storage driver writes for one revision, as the API returns it."""
    record = json.loads(json.dumps(record))
    record["version"] = revision
    info = record.setdefault("info", {})
    info.update(
        status=status,
        last_deployed=when,
        description="Install complete" if revision == 1 else "Upgrade complete",
    )
    if status == "failed":
        info["description"] = 'Upgrade "kubevirt" failed: context deadline exceeded'
    payload = json.dumps(record, separators=(",", ":")).encode()
    if compress:
        payload = gzip.compress(payload, compresslevel=9, mtime=0)
    helm_layer = base64.b64encode(payload)
    name = record["name"]
    labels = {
        "createdAt": "1760432530",
        "modifiedAt": "1760432531",
        "name": name,
        "owner": "helm",
        "status": status,
        "version": str(revision),
    }
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "creationTimestamp": when,
            "labels": labels,
            "managedFields": [
                {
                    "apiVersion": "v1",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:data": {".": {}, "f:release": {}},
                        "f:metadata": {"f:labels": {".": {}, **{f"f:{k}": {} for k in labels}}},
                        "f:type": {},
                    },
                    "manager": "helm-controller",
                    "operation": "Update",
                    "time": when,
                }
            ],
            "name": f"sh.helm.release.v1.{name}.v{revision}",
            "namespace": record["namespace"],
        },
        "data": {"release": base64.b64encode(helm_layer).decode()},
        "type": "helm.sh/release.v1",
    }
