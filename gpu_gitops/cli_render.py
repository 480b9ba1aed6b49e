"""`gpu-gitops render`: write overlays/<name>/ and clusters/<name>/flux/ from the profiles."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpu_gitops.commands import say_warnings
from gpu_gitops.console import Console
from renderer.render import label_commands, left_over, render_profiles
from renderer.validate import check_clusters
from renderer.write import checkout_lock, extra_paths, stale_files, write_dirs

__all__ = ["cmd_render"]


def cmd_render(args: argparse.Namespace, console: Console) -> int:
    repo: Path = args.repo
    checked = check_clusters(repo, args.cluster)
    say_warnings(console, checked.warnings)
    rendered = render_profiles(checked.profiles)
    # Overlays of removed clusters are pruned only when every cluster is rendered.
    gone = () if args.cluster else tuple(left_over(repo, rendered))
    if args.check:
        stale = stale_files(repo, rendered.dirs) + extra_paths(repo, rendered.dirs, gone)
        for path in sorted(stale):
            console.say(f"stale: {path}")
        if stale:
            console.say("generated files are out of date: run gpu-gitops render and commit them")
            return 1
        console.say("generated files are up to date")
        return 0
    with checkout_lock(repo):
        changed = write_dirs(repo, rendered.dirs, remove=gone)
    for d in changed:
        console.say(f"{'removed' if d in gone else 'wrote'} {d}/")
    if not changed:
        console.say("no changes")
    for lp in checked.profiles:
        for command in label_commands(lp):
            console.data(command + "\n")
    return 0
