"""`gpu-gitops build`: the built manifests of one cluster, rendered fresh, on stdout."""

from __future__ import annotations

import argparse
import json

from gpu_gitops.commands import say_warnings
from gpu_gitops.console import Console
from kubedata.yaml_io import load_all
from renderer.kustomize.workers import build_overlays
from renderer.profile import check_cluster_name
from renderer.render import render_profiles
from renderer.validate import check_clusters

__all__ = ["cmd_build"]


def cmd_build(args: argparse.Namespace, console: Console) -> int:
    check_cluster_name(args.cluster)
    checked = check_clusters(args.repo, [args.cluster])
    say_warnings(console, checked.warnings)
    rendered = render_profiles(checked.profiles)
    text = build_overlays(rendered.overlays)[args.cluster]
    if args.output == "json":
        text = json.dumps(load_all(text), indent=2, sort_keys=True) + "\n"
    console.data(text)
    return 0
