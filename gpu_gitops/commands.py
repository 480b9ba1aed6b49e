"""Building blocks for subcommands: every command has help, examples and the same --repo.

A command is defined by a function in the module that runs it, `define(parser) -> run`: it adds
the command's arguments and examples to its parser and returns the function that runs it. The CLI
imports that module only when the command is asked for (see cli.py), so a module's imports are
exactly what its command uses.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from gpu_gitops.console import Console

__all__ = ["Command", "Define", "add_examples", "add_repo_arg", "say_warnings"]

Command = Callable[[argparse.Namespace, Console], int]
Define = Callable[[argparse.ArgumentParser], Command]


def add_examples(parser: argparse.ArgumentParser, examples: str) -> None:
    """End the command's --help with usage examples, laid out as written."""
    parser.epilog = "examples:\n  " + examples.strip().replace("\n", "\n  ")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def add_repo_arg(parser: argparse.ArgumentParser) -> None:
    """--repo DIR; when left out, cli.py puts in the root of the enclosing git checkout."""
    parser.add_argument(
        "--repo",
        type=Path,
        metavar="DIR",
        help="the gitops checkout (default: the git checkout around the current directory)",
    )


def say_warnings(console: Console, warnings: Sequence[object]) -> None:
    """Warnings found while loading profiles, one `file:line: warning: ...` line each."""
    for w in warnings:
        console.problem(str(w))
