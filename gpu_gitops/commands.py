"""What the modules running commands share: the signature of a command, and its warnings.

A command is `cmd_<name>(args, console) -> exit code` in the module COMMANDS names for it
(arguments.py, where its arguments are defined). The CLI imports that module only when the
command runs (see cli.py), so a module's imports are exactly what its command uses.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from gpu_gitops.console import Console

__all__ = ["Command", "say_warnings"]

Command = Callable[[argparse.Namespace, Console], int]


def say_warnings(console: Console, warnings: Sequence[object]) -> None:
    """Warnings found while loading profiles, one `file:line: warning: ...` line each."""
    for w in warnings:
        console.problem(str(w))
