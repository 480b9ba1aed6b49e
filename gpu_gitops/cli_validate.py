"""`gpu-gitops validate`: profiles against the contract and DESIGN §4; committed overlays build."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpu_gitops.commands import Command, add_examples, add_repo_arg, say_warnings
from gpu_gitops.console import Console
from renderer.committed import build_committed
from renderer.errors import Problem, ProfileError
from renderer.kustomize import KUSTOMIZATION
from renderer.profile import PROFILE_FILE, check_cluster_name
from renderer.repofiles import repo_path
from renderer.validate import check_clusters

__all__ = ["cmd_validate", "define_validate"]


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    repo: Path = args.repo
    names = [_cluster_of(repo, p) for p in args.paths]
    checked = check_clusters(repo, names)
    say_warnings(console, checked.warnings)
    # Committed overlays must build as they are (offline, from inside the checkout only).
    present = [
        lp.name
        for lp in checked.profiles
        if (repo_path(repo, f"overlays/{lp.name}") / KUSTOMIZATION).is_file()
    ]
    for name in build_committed(repo, present):
        console.say(f"overlays/{name}: builds")
    if args.crds:
        # jsonschema is loaded only when CRDs are given: validate alone starts without it
        from gpu_gitops.cli_crds import check_schemas

        check_schemas(args.crds, checked, console)
    console.say(f"{len(checked.profiles)} profile(s) valid, {len(checked.warnings)} warning(s)")
    return 0


def _cluster_of(repo: Path, raw: str) -> str:
    """A PATH argument (cluster folder, profile file, or bare name) -> cluster name.

    A path, taken from the current directory or from the repository (so `validate .` in
    clusters/ams1 works), must lead to a folder directly under <repo>/clusters/: anything else is
    refused rather than silently reduced to its last component.
    """
    path = Path(raw)
    if path.name == PROFILE_FILE:
        path = path.parent
    name = path.name
    if len(path.parts) != 1 or path.is_absolute():
        clusters = (repo / "clusters").resolve()
        tried = ((base / path).resolve() for base in (Path.cwd(), repo))
        found = [c for c in tried if c.parent == clusters]
        if not found:
            raise ProfileError(
                [Problem(raw, 0, "", f"not a cluster folder under {repo / 'clusters'}/")]
            )
        name = found[0].name
    check_cluster_name(name, raw)
    return name


def define_validate(p: argparse.ArgumentParser) -> Command:
    add_examples(
        p,
        """
gpu-gitops validate
gpu-gitops validate clusters/ams1
gpu-gitops validate clusters/ams1/gpu-profile.yaml
gpu-gitops validate --crds crds/    # CRD files of the cluster (kubectl get crd -o yaml)""",
    )
    p.add_argument(
        "paths", nargs="*", metavar="PATH", help="cluster folders or profile files (default: all)"
    )
    p.add_argument(
        "--crds",
        type=Path,
        metavar="DIR",
        help="also check the built output against the CRD files in DIR (schema, unknown fields)",
    )
    add_repo_arg(p)
    return cmd_validate
