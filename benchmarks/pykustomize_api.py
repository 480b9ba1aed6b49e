"""The fair baseline build: pykustomize's public API over overlays on disk, in one process.

A module of its own, without the renderer, so a baseline process that imports it carries only
pykustomize (its peak RSS is the baseline's own).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

__all__ = ["pykustomize_build"]


def pykustomize_build(paths: list[Path]) -> list[str]:
    """`Kustomizer.build` once per overlay, one event loop, no workers: the YAML built."""
    import pykustomize

    async def build_all() -> list[str]:
        kustomizer = pykustomize.Kustomizer()
        return [(await kustomizer.build(path)).yaml for path in paths]

    return asyncio.run(build_all())
