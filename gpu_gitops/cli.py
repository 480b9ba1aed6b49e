"""The gpu-gitops command line: exit codes; the arguments are in arguments.py, the work in the
packages.

Start-up is part of the interface (`COMMAND --help`, `validate` in a pre-commit hook): this module
imports nothing but the standard library, the console and the parser (arguments.py). Each command
runs in a module of its own, imported only once its arguments are parsed, so `--help` of any
command loads no command, and `render` and `validate` never load the auditor, httpx or GitPython.
"""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from gpu_gitops.arguments import COMMANDS, parser
from gpu_gitops.commands import Command
from gpu_gitops.console import Console
from kubedata.errors import GpuGitopsError
from kubedata.gc_pause import paused_gc
from renderer.checkout import checkout_root
from renderer.errors import ProfileError

__all__ = ["BUILDERS", "COMMANDS", "main", "run"]

BUILDERS = frozenset({"validate", "build", "demo", "diff", "publish"})
"""Commands that build overlays: kustomize's worker starts before their modules are imported, so
kustomize loads in it meanwhile (`validate` in a pre-commit hook waits for both)."""


def _chosen(argv: Sequence[str]) -> str | None:
    """The command named in argv: the first word that is not an option (top-level options take
    no value, so it cannot be one's argument)."""
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: Sequence[str] | None = None, console: Console | None = None) -> int:
    console = console or Console()
    argv = sys.argv[1:] if argv is None else list(argv)
    chosen = _chosen(argv)
    if chosen in BUILDERS and not {"-h", "--help"} & set(argv):  # --help builds nothing
        from renderer.kustomize.workers import start_workers

        start_workers(1)
    args = parser(chosen).parse_args(argv)
    # what a command imports lives as long as the process: the collector need not scan it
    with paused_gc(promote=True):
        module = importlib.import_module(COMMANDS[args.command][0])
    command: Command = getattr(module, f"cmd_{args.command}")
    if getattr(args, "repo", "") is None:
        args.repo = checkout_root(Path.cwd())
    try:
        return command(args, console)
    except ProfileError as exc:
        for problem in exc.problems:
            console.problem(str(problem))
        return 2
    except KeyboardInterrupt:
        console.say("interrupted")
        return 130
    except GpuGitopsError as exc:
        # raised on purpose, by any package: one line (a message never carries a traceback)
        console.problem(f"gpu-gitops: error: {exc}")
        return 2
    except Exception as exc:
        if args.debug:
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        console.problem(
            f"gpu-gitops: error: internal error ({type(exc).__name__}: {first}); "
            "rerun with --debug and report it"
        )
        return 2


def run() -> NoReturn:
    """The `gpu-gitops` program: main() in a process of its own, which then ends."""
    code = main()
    # The collection at interpreter exit would walk every object the command made (about 8 ms for
    # `validate`) to free what the process's end frees anyway.
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()
