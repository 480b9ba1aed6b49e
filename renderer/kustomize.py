"""Kustomize: pykustomize's native library, called through ctypes (in the build workers).

pykustomize ships kustomize as a shared library with a small C interface (declared in its
`_ffi.py`). Its Python layer parses that declaration with cffi at import and wraps each build in an
event loop: about 90 ms of start-up for every build worker (pycparser, asyncio, importlib.metadata),
most of what `gpu-gitops validate` of one profile used to wait for. The same library called
through ctypes costs a few ms. The library keeps one process-wide "last error": build.py runs each
build in a worker process of its own (kustomize_worker.py), one build at a time. Errors are
RuntimeErrors carrying a message: the worker passes the message on, build.py makes the BuildError
(the worker imports nothing of the renderer but this module, to start fast).
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import platform
from pathlib import Path

__all__ = ["KUSTOMIZATION", "kustomize_build"]

KUSTOMIZATION = "kustomization.yaml"

# pykustomize's BuildOptions() defaults, as its to_json() writes them
_OPTIONS = (
    b'{"load_restrictions": 0, "reorder": "unspecified", "add_managedby_label": false, '
    b'"enable_plugins": false, "enable_helm": false, "helm_command": ""}'
)
# where pykustomize keeps its library: _lib/<os>-<go arch>/<name> (as its _find_library looks)
_NAMES = {
    "Linux": "libpykustomize.so",
    "Darwin": "libpykustomize.dylib",
    "Windows": "pykustomize.dll",
}
_GO_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}


@functools.cache
def _library() -> ctypes.CDLL:
    spec = importlib.util.find_spec("pykustomize")
    folders = list(spec.submodule_search_locations or []) if spec else []
    system, machine = platform.system(), platform.machine()
    rel = Path("_lib", f"{system.lower()}-{_GO_ARCH.get(machine, machine)}", _NAMES.get(system, ""))
    found = [Path(f) / rel for f in folders if (Path(f) / rel).is_file()]
    if not found:
        raise RuntimeError(
            f"pykustomize's kustomize library ({rel}) is not installed for {system} {machine}: "
            "pip install --ignore-requires-python pykustomize"
        )
    lib = ctypes.CDLL(str(found[0]))
    lib.pykustomize_build.argtypes = [
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_void_p),
    ]
    lib.pykustomize_build.restype = ctypes.c_int
    lib.pykustomize_last_error.argtypes = []
    lib.pykustomize_last_error.restype = ctypes.c_void_p
    lib.pykustomize_free.argtypes = [ctypes.c_void_p]
    lib.pykustomize_free.restype = None
    return lib


def kustomize_build(path: Path) -> str:
    """`kustomize build path`: multi-document YAML; RuntimeError holding kustomize's message."""
    lib = _library()
    out = ctypes.c_void_p()
    if lib.pykustomize_build(str(path).encode(), _OPTIONS, ctypes.byref(out)) != 0:
        err = lib.pykustomize_last_error()
        raise RuntimeError(ctypes.string_at(err).decode() if err else "unknown kustomize error")
    if not out.value:
        return ""
    try:
        return ctypes.string_at(out.value).decode()
    finally:
        lib.pykustomize_free(out.value)
