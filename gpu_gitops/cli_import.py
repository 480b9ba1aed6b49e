"""`gpu-gitops import`: write clusters/<name>/platform.yaml from the live platform Package.

Exit codes (DESIGN §7): 0 written (or already up to date), 2 error (nothing written).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from audit.errors import AuditError
from audit.kube.api import KubeApi
from audit.kube.kubeconfig import load_cluster_config
from gpu_gitops.commands import Command, add_examples, add_repo_arg
from gpu_gitops.console import Console
from renderer.errors import WriteError
from renderer.platform_file import PLATFORM_KEY, platform_file_text
from renderer.profile import MAX_FILE_BYTES, check_cluster_name, platform_path
from renderer.repofiles import read_bytes, repo_path

__all__ = ["cmd_import", "define_import"]


def _write(path: Path, text: str) -> None:
    """Replace the file whole or not at all (a temporary file renamed over it)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            Path(tmp).replace(path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror}; nothing was changed") from None


def cmd_import(args: argparse.Namespace, console: Console) -> int:
    check_cluster_name(args.cluster)
    config = load_cluster_config(args.kubeconfig, args.context)
    for warning in config.warnings:
        console.problem(f"gpu-gitops: warning: {warning}")
    with KubeApi(config) as api:
        live = api.get(PLATFORM_KEY)
    if live is None:
        raise AuditError(
            f"{config.server} has no {PLATFORM_KEY}: is this a Cozystack cluster, "
            "and the right --context?"
        )
    text, secrets = platform_file_text(live, args.cluster)
    rel = platform_path(args.cluster)
    for field in secrets:
        console.problem(
            f"{rel}: warning: {field} looks like a secret and was not copied (it stays live as "
            "it is); keep it in a Secret and let the chart read it from there"
        )
    # never through a symbolic link committed in the checkout
    path = repo_path(args.repo, rel)
    if read_bytes(args.repo, rel, MAX_FILE_BYTES) == text.encode("utf-8"):
        console.say(f"{rel} is up to date")
        return 0
    _write(path, text)
    console.say(f"wrote {rel}")
    return 0


def define_import(p: argparse.ArgumentParser) -> Command:
    """`import`'s arguments and examples."""
    add_examples(
        p,
        """
gpu-gitops import --cluster ams1                      # current kubeconfig context
gpu-gitops import --cluster ams1 --context ams1-admin
exit codes: 0 written, 2 error""",
    )
    p.add_argument("--cluster", required=True, metavar="NAME", help="cluster (clusters/<NAME>/)")
    p.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig (default: KUBECONFIG, ~/.kube)")
    p.add_argument("--context", metavar="NAME", help="kubeconfig context (default: current)")
    add_repo_arg(p)
    return cmd_import
