"""Kustomize: where pykustomize keeps its native library, which the build workers load.

pykustomize ships kustomize as a shared library with a small C interface. The build workers
(worker.py) call it through ctypes rather than through pykustomize's Python layer (see
there why); this module only finds the library, as pykustomize's own `_find_library` does, without
importing pykustomize or ctypes.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path

from renderer.errors import BuildError

__all__ = ["KUSTOMIZATION", "library_path"]

KUSTOMIZATION = "kustomization.yaml"

_NAMES = {"Linux": "libpykustomize.so", "Darwin": "libpykustomize.dylib"}
_GO_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}


@functools.cache
def library_path() -> Path:
    """pykustomize's _lib/<os>-<go arch>/<name>; BuildError saying how to install it."""
    spec = importlib.util.find_spec("pykustomize")
    folders = list(spec.submodule_search_locations or []) if spec else []
    system, machine = os.uname().sysname, os.uname().machine
    rel = Path("_lib", f"{system.lower()}-{_GO_ARCH.get(machine, machine)}", _NAMES.get(system, ""))
    found = [Path(f) / rel for f in folders if (Path(f) / rel).is_file()]
    if not found:
        raise BuildError(
            f"pykustomize's kustomize library ({rel}) is not installed for {system} {machine}: "
            "pip install --ignore-requires-python pykustomize"
        )
    return found[0]
