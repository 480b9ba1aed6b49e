"""`gpu-gitops publish`: commit the built output of every cluster to the rendered branch."""

from __future__ import annotations

import argparse

from gpu_gitops.commands import Command, add_examples, add_repo_arg
from gpu_gitops.console import Console
from renderer.publish.publish import publish

__all__ = ["cmd_publish", "define_publish"]


def cmd_publish(args: argparse.Namespace, console: Console) -> int:
    result = publish(
        args.repo,
        branch=args.branch,
        push=args.push,
        remote=args.remote,
        allow_dirty=args.allow_dirty,
        progress=console.progress,
    )
    for warning in result.warnings:
        console.problem(str(warning))
    short = result.source[:12]
    if result.dirty:
        dirty = ", ".join(result.dirty)
        console.say(f"rendered the working tree on {short} (--allow-dirty): {dirty}")
    if result.superseded_by:
        console.say(
            f"no changes: {args.branch} already holds a render of {result.superseded_by[:12]}, "
            f"which includes {short}"
        )
    elif result.commit is None:
        console.say("no changes")
    else:
        what = ", ".join([*result.changed, *(f"-{n}" for n in result.removed)])
        console.say(f"committed to {args.branch} from {short}: {what}")
        console.data(result.commit + "\n")
    if result.pushed:
        retried = f" after {result.attempts - 1} retry(s)" if result.attempts > 1 else ""
        console.say(f"pushed {args.branch} to {args.remote}{retried}")
    return 0


def define_publish(p: argparse.ArgumentParser) -> Command:
    """`publish`'s arguments and examples."""
    add_examples(
        p,
        """
gpu-gitops publish
gpu-gitops publish --push            # a push rejected as non-fast-forward is redone on the new tip
gpu-gitops publish --branch rendered-staging --push --remote upstream
gpu-gitops publish --allow-dirty     # uncommitted profile edits; hydrator.metadata says so""",
    )
    p.add_argument(
        "--branch",
        default="rendered",
        metavar="NAME",
        help="branch to commit to (default: rendered)",
    )
    p.add_argument("--push", action="store_true", help="push the branch after committing")
    p.add_argument(
        "--remote", default="origin", metavar="NAME", help="remote to push to (default: origin)"
    )
    p.add_argument(
        "--allow-dirty",
        action="store_true",
        help="publish uncommitted changes to clusters/ instead of refusing them",
    )
    add_repo_arg(p)
    return cmd_publish
