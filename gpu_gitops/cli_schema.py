"""`gpu-gitops schema`: the JSON Schema of gpu-profile.yaml, from the validator's own model and
every rule JSON Schema can say (renderer/rules/profile_schema.py)."""

from __future__ import annotations

import argparse
import json

from gpu_gitops.console import Console
from renderer.rules.profile_schema import profile_schema

__all__ = ["cmd_schema"]


def cmd_schema(args: argparse.Namespace, console: Console) -> int:
    console.data(json.dumps(profile_schema(), indent=2) + "\n")
    return 0
