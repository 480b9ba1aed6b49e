"""A kustomize build process, driven by workers.py: `python -I -S worker.py LIBRARY`.

LIBRARY is pykustomize's native kustomize library (found by library.py), called through ctypes.
Its C interface is pykustomize's private one, declared in its `_ffi.py`; pykustomize's own Python
layer (cffi parsing that declaration at import, an event loop per build) would cost every worker
about 90 ms of start-up. This script imports nothing but the standard library and is run by its
path without site-packages, so a worker is up in about 15 ms and loads the library before its first
request: started early (workers.start_workers), it is ready when the overlays are.

Reads one JSON line per build ({"path": "/scratch/overlays/x"}) from stdin and answers one JSON
line each ([true, "<yaml>"] or [false, "<kustomize's first line>"]). A process of its own so that a
build can be stopped (by ending the process) and its error is its own (the library keeps one
process-wide last error).
"""

from __future__ import annotations

import ctypes
import json
import sys

__all__ = ["Kustomize", "main"]

# pykustomize's BuildOptions() defaults, as its to_json() writes them
_OPTIONS = (
    b'{"load_restrictions": 0, "reorder": "unspecified", "add_managedby_label": false, '
    b'"enable_plugins": false, "enable_helm": false, "helm_command": ""}'
)


class Kustomize:
    """kustomize's library, loaded from `library` (a path)."""

    def __init__(self, library: str) -> None:
        lib = ctypes.CDLL(library)
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
        self._lib = lib

    def build(self, path: str) -> str:
        """`kustomize build path`: multi-document YAML; RuntimeError holding kustomize's message."""
        out = ctypes.c_void_p()
        if self._lib.pykustomize_build(path.encode(), _OPTIONS, ctypes.byref(out)) != 0:
            err = self._lib.pykustomize_last_error()
            raise RuntimeError(ctypes.string_at(err).decode() if err else "unknown kustomize error")
        if not out.value:
            return ""
        try:
            return ctypes.string_at(out.value).decode()
        finally:
            self._lib.pykustomize_free(out.value)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _build(kustomize: Kustomize | str, path: str) -> tuple[bool, str]:
    """One answer; `kustomize` is the library, or why it could not be loaded."""
    if isinstance(kustomize, str):
        return False, kustomize
    try:
        return True, kustomize.build(path)
    except Exception as exc:
        return False, _first_line(exc)


def main(argv: list[str]) -> int:
    kustomize: Kustomize | str
    try:
        kustomize = Kustomize(argv[1])
    except OSError as exc:  # every build is answered with it: the error is each build's
        kustomize = f"cannot load kustomize's library: {_first_line(exc)}"
    for line in sys.stdin:
        sys.stdout.write(json.dumps(_build(kustomize, json.loads(line)["path"])) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
