"""The gpu-gitops command line: argument parsing and exit codes; the work is in the packages.

Start-up is part of the interface (`--help`, `validate` in a pre-commit hook): this module imports
nothing but the standard library and the console. Each command lives in a module of its own,
imported only when that command runs (or its --help is asked for), so `render` and `validate`
never load the auditor, httpx or GitPython. A new command is one line in COMMANDS and a
`define_<name>(parser) -> run` function in its module (see commands.py).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from gpu_gitops import __version__
from gpu_gitops.console import Console
from kubedata.errors import GpuGitopsError
from renderer.checkout import checkout_root
from renderer.errors import ProfileError

__all__ = ["BUILDERS", "COMMANDS", "main", "run"]

# command -> (module defining it, line for `gpu-gitops --help`); in the order --help lists them
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": (
        "gpu_gitops.cli_validate",
        "Check profiles (and committed overlays); exit 2 on any error.",
    ),
    "render": (
        "gpu_gitops.cli_render",
        "Write overlays/<name>/ for each cluster from its profile.",
    ),
    "build": (
        "gpu_gitops.cli_build",
        "Print the built manifests of one cluster (multi-document YAML).",
    ),
    "schema": ("gpu_gitops.cli_schema", "Print the JSON Schema of gpu-profile.yaml (for editors)."),
    "demo": ("gpu_gitops.demo", "Run the whole loop on built-in example data, offline."),
    "audit": (
        "gpu_gitops.cli_audit",
        "Compare a live cluster with git: who changed what, and will anything revert it.",
    ),
    "adopt": (
        "gpu_gitops.cli_adopt",
        "Keep live drift: put what the audit found into the profile, on a branch for review.",
    ),
    "fleet": (
        "gpu_gitops.cli_fleet",
        "Every cluster's nightly audit from Prometheus: missing, incomplete, drifted; worst first.",
    ),
    "import": (
        "gpu_gitops.cli_import",
        "Write clusters/<name>/platform.yaml from the live platform Package.",
    ),
    "diff": (
        "gpu_gitops.cli_pr",
        "Render two refs and compare the built objects per cluster; exit 1 on changes or warnings.",
    ),
    "comment": (
        "gpu_gitops.cli_pr",
        "Post a body as one sticky pull-request comment, updated in place on every run.",
    ),
    "publish": (
        "gpu_gitops.cli_publish",
        "Build every cluster from its profile at HEAD and commit the flat manifests to the "
        "rendered branch (no checkout; the working tree and index are not touched). Prints the "
        'new commit, or "no changes".',
    ),
}

BUILDERS = frozenset({"validate", "build", "demo", "diff", "publish"})
"""Commands that build overlays: kustomize's worker starts before their modules are imported, so
kustomize loads in it meanwhile (`validate` in a pre-commit hook waits for both)."""


def _parser(chosen: str | None) -> argparse.ArgumentParser:
    """Every command listed; only `chosen` gets its arguments, from its own module."""
    parser = argparse.ArgumentParser(
        prog="gpu-gitops",
        description="Render GPU profiles into Flux-ready manifests; audit live clusters for drift.",
        epilog="Exit codes: 0 success, 1 drift/diff/stale found, 2 bad input or error.",
    )
    parser.add_argument("--version", action="version", version=f"gpu-gitops {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            define = getattr(importlib.import_module(module), f"define_{name}")
            p.set_defaults(func=define(p))
    return parser


def _chosen(argv: Sequence[str]) -> str | None:
    """The command named in argv: the first word that is not an option (top-level options take
    no value, so it cannot be one's argument)."""
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: Sequence[str] | None = None, console: Console | None = None) -> int:
    console = console or Console()
    argv = sys.argv[1:] if argv is None else list(argv)
    chosen = _chosen(argv)
    if chosen in BUILDERS:
        from renderer.kustomize.workers import start_workers

        start_workers(1)
    args = _parser(chosen).parse_args(argv)
    if getattr(args, "repo", "") is None:
        args.repo = checkout_root(Path.cwd())
    try:
        code: int = args.func(args, console)
        return code
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
