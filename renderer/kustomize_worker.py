"""A kustomize build process: `python -m renderer.kustomize_worker`, driven by renderer.build.

Reads one JSON line per build ({"path": "/scratch/overlays/x"}) from stdin and answers one JSON
line each ([true, "<yaml>"] or [false, "<kustomize's first line>"]). It imports nothing but the
kustomize library (kustomize.py, through ctypes): a process of its own so that a build can be
stopped (by ending the process) and its error is its own (the library keeps one process-wide last
error).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from renderer.kustomize import kustomize_build


def _build(path: str) -> tuple[bool, str]:
    try:
        return True, kustomize_build(Path(path))
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return False, first


def main() -> None:
    for line in sys.stdin:
        sys.stdout.write(json.dumps(_build(json.loads(line)["path"])) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
