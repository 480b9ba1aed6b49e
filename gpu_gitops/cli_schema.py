"""`gpu-gitops schema`: the JSON Schema of gpu-profile.yaml, from the validator's own model."""

from __future__ import annotations

import argparse
import json

from gpu_gitops.commands import Command, add_examples
from gpu_gitops.console import Console
from renderer.model import GPUProfile
from renderer.schema import json_schema

__all__ = ["SCHEMA_ID", "cmd_schema", "define_schema"]

SCHEMA_ID = "https://gpu-gitops.dev/schemas/gpu-profile-v1alpha1.json"


def cmd_schema(args: argparse.Namespace, console: Console) -> int:
    console.data(json.dumps(json_schema(GPUProfile, SCHEMA_ID), indent=2) + "\n")
    return 0


def define_schema(p: argparse.ArgumentParser) -> Command:
    add_examples(p, "gpu-gitops schema > gpu-profile.schema.json")
    return cmd_schema
