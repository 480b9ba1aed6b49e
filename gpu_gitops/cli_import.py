"""`gpu-gitops import`: write a cluster's live file from the live object it stands for.

On Cozystack (or with no profile yet) that is clusters/<name>/platform.yaml from the platform
Package; on plain Flux clusters/<name>/kubevirt.yaml from the KubeVirt CR spec.kubevirt names.
The file carries import's mark: the API server (and context) it was read from, and when; the
time is SOURCE_DATE_EPOCH when set (reproducible runs and tests), else now.

Exit codes (DESIGN §7): 0 written (or already up to date), 2 error (nothing written).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from datetime import UTC, datetime

from audit.errors import AuditError
from audit.kube.api import KubeApi
from audit.kube.kubeconfig import ClusterConfig, load_cluster_config
from gpu_gitops.console import Console
from kubedata.errors import YamlError
from kubedata.objects import KubeObject, ObjectKey
from kubedata.yaml_io import load_all
from renderer.errors import Problem, ProfileError
from renderer.kubevirt_file import kubevirt_file_text, kubevirt_key
from renderer.live_file import IMPORTED_AT, ImportMark
from renderer.platform_file import PLATFORM_KEY, left_out_secrets, platform_file_text
from renderer.profile import (
    MAX_FILE_BYTES,
    check_cluster_name,
    kubevirt_path,
    platform_path,
    read_profile,
)
from renderer.repofiles import read_bytes, repo_path
from renderer.write import replace_file

__all__ = ["cmd_import"]

_Text = Callable[[KubeObject, str, ImportMark], str]


def _now() -> str:
    """The import time, RFC 3339 UTC: SOURCE_DATE_EPOCH (reproducible-builds.org) when set."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None:
        when = datetime.now(UTC)
    elif epoch.isdigit():
        when = datetime.fromtimestamp(int(epoch), UTC)
    else:
        raise ProfileError(
            [Problem("SOURCE_DATE_EPOCH", 0, "", f'"{epoch}" is not a count of seconds')]
        )
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _source(config: ClusterConfig) -> str:
    """What the mark names as the source: the server and the context (never a local path)."""
    return f"{config.server} (context {config.context})" if config.context else config.server


def _old_time(data: bytes | None) -> str | None:
    """The import time in the file written before (None: no such file or mark)."""
    try:
        docs = load_all(data.decode("utf-8")) if data else []
    except (UnicodeDecodeError, YamlError):
        return None
    meta = docs[0].get("metadata") if docs and isinstance(docs[0], dict) else None
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    at = annotations.get(IMPORTED_AT) if isinstance(annotations, dict) else None
    return at if isinstance(at, str) else None


def _target(args: argparse.Namespace) -> tuple[ObjectKey, str, _Text, str]:
    """(object, file, text function, what to say when it is missing) for the cluster's platform."""
    profile = read_profile(args.repo, args.cluster)
    if profile is not None and profile.spec.platform.type == "flux":
        key = kubevirt_key(profile.spec.kubevirt)
        missing = "are spec.kubevirt.namespace and .name right, and the right --context?"
        return key, kubevirt_path(args.cluster), kubevirt_file_text, missing
    missing = (
        "is this a Cozystack cluster, and the right --context? (for plain Flux, write "
        f"clusters/{args.cluster}/gpu-profile.yaml with spec.platform.type: flux first)"
    )
    return PLATFORM_KEY, platform_path(args.cluster), platform_file_text, missing


def cmd_import(args: argparse.Namespace, console: Console) -> int:
    check_cluster_name(args.cluster)
    key, rel, file_text, missing = _target(args)
    now = _now()
    config = load_cluster_config(args.kubeconfig, args.context)
    for warning in config.warnings:
        console.problem(f"gpu-gitops: warning: {warning}")
    with KubeApi(config) as api:
        live = api.get(key)
    if live is None:
        raise AuditError(f"{config.server} has no {key}: {missing}")
    if key == PLATFORM_KEY:
        for field in left_out_secrets(live):
            console.problem(
                f"{rel}: warning: {field} looks like a secret and was not copied (it stays live "
                "as it is); keep it in a Secret and let the chart read it from there"
            )
    # never through a symbolic link committed in the checkout
    path = repo_path(args.repo, rel)
    old = read_bytes(args.repo, rel, MAX_FILE_BYTES)
    # Unchanged live state keeps the file (and its import time) as it is.
    then = _old_time(old)
    if (
        then is not None
        and old == file_text(live, args.cluster, ImportMark(_source(config), then)).encode()
    ):
        console.say(f"{rel} is up to date")
        return 0
    replace_file(path, file_text(live, args.cluster, ImportMark(_source(config), now)))
    console.say(f"wrote {rel}")
    return 0
