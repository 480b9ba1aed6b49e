"""A kustomize build process: `python -m renderer.kustomize_worker`, driven by renderer.build.

Reads one JSON line per build ({"path": "/scratch/overlays/x"}) from stdin and answers one JSON
line each ([true, "<yaml>"] or [false, "<kustomize's first line>"]). It imports nothing but
pykustomize: a process of its own so that a build can be stopped (by ending the process) and its
error is its own (pykustomize keeps one process-wide last error).
"""

from __future__ import annotations

import asyncio
import json
import sys


def _build(path: str) -> tuple[bool, str]:
    import pykustomize

    try:
        result = asyncio.run(pykustomize.build(path))
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return False, first
    text: str = result.yaml
    return True, text


def main() -> None:
    for line in sys.stdin:
        sys.stdout.write(json.dumps(_build(json.loads(line)["path"])) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
