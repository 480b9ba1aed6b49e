"""`gpu-gitops publish`: commit the built output of every cluster to the branch its Flux follows
(spec.flux.branch), one commit per branch; `--branch NAME` publishes only that branch's clusters."""

from __future__ import annotations

import argparse

from gpu_gitops.console import Console
from renderer.publish.publish import PublishResult, publish, publish_branches

__all__ = ["cmd_publish"]


def cmd_publish(args: argparse.Namespace, console: Console) -> int:
    options = {
        "push": args.push,
        "remote": args.remote,
        "allow_dirty": args.allow_dirty,
        "progress": console.progress,
    }
    results = (
        (publish(args.repo, branch=args.branch, **options),)
        if args.branch is not None
        else publish_branches(args.repo, **options)
    )
    for result in results:
        _say(result, console, args.remote)
    return 0


def _say(result: PublishResult, console: Console, remote: str) -> None:
    for warning in result.warnings:
        console.problem(str(warning))
    short = result.source[:12]
    if result.dirty:
        dirty = ", ".join(result.dirty)
        console.say(f"rendered the working tree on {short} (--allow-dirty): {dirty}")
    if result.superseded_by:
        console.say(
            f"no changes: {result.branch} already holds a render of "
            f"{result.superseded_by[:12]}, which includes {short}"
        )
    elif result.commit is None:
        console.say(f"no changes on {result.branch}")
    else:
        what = ", ".join([*result.changed, *(f"-{n}" for n in result.removed)])
        console.say(f"committed to {result.branch} from {short}: {what}")
        console.data(result.commit + "\n")
    if result.pushed:
        retried = f" after {result.attempts - 1} retry(s)" if result.attempts > 1 else ""
        console.say(f"pushed {result.branch} to {remote}{retried}")
