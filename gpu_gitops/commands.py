"""Building blocks for subcommands: every command has help, examples and the same --repo."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpu_gitops.console import Console

__all__ = ["Command", "Subparsers", "add_command", "add_repo_arg"]

Command = Callable[[argparse.Namespace, Console], int]
Subparsers = Any  # argparse's _SubParsersAction is private


def add_command(
    sub: Subparsers, name: str, func: Command, help_text: str, examples: str
) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with usage examples."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help_text,
        description=help_text,
        epilog="examples:\n  " + examples.strip().replace("\n", "\n  "),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(func=func)
    return parser


def add_repo_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--repo",
        type=Path,
        default=Path(),
        metavar="DIR",
        help="the gitops checkout (default: current directory)",
    )
