"""`gpu-gitops render`: write overlays/<name>/ and clusters/<name>/flux/ from the profiles."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpu_gitops.commands import say_warnings
from gpu_gitops.console import Console
from renderer.incremental import render_checkout
from renderer.render import left_over
from renderer.write import (
    checkout_lock,
    extra_paths,
    outdated_dirs,
    remove_debris,
    stale_digests,
    write_dirs,
)

__all__ = ["cmd_render"]


def cmd_render(args: argparse.Namespace, console: Console) -> int:
    repo: Path = args.repo
    result = render_checkout(repo, args.cluster)
    say_warnings(console, result.warnings)
    digests = result.digests
    # Overlays of removed clusters are pruned only when every cluster is rendered.
    gone = () if args.cluster else tuple(left_over(repo, digests))
    if args.check:
        stale = stale_digests(repo, digests) + extra_paths(repo, digests, gone)
        for path in sorted(stale):
            console.say(f"stale: {path}")
        if stale:
            console.say("generated files are out of date: run gpu-gitops render and commit them")
            return 1
        console.say("generated files are up to date")
        return 0
    with checkout_lock(repo):
        remove_debris(repo, digests)
        changed = write_dirs(repo, result.texts(outdated_dirs(repo, digests)), remove=gone)
    for d in changed:
        console.say(f"{'removed' if d in gone else 'wrote'} {d}/")
    if not changed:
        console.say("no changes")
    for command in result.labels:
        console.data(command + "\n")
    return 0
