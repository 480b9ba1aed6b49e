"""Overlays built by kustomize in worker processes (worker.py), offline, with a deadline; the
tool's own overlays in this process (inprocess.py), with kustomize as its reference.

The kustomize library keeps one process-wide "last error", cannot be cancelled and hangs a forked
child. So builds run in two worker processes of their own (renderer.kustomize.worker, started
fresh, never forked; one build at a time each, so every error is its own), kept for the life of
the command. A build that gives no result within the deadline ends the workers and fails
with one line: a hostile overlay (a FIFO, a remote base on a silent server) never hangs the
command. The workers' environment points git and HTTP at nothing, so a remote resource that got
past the checks of committed.py still cannot be fetched.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import queue
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, TYPE_CHECKING

from renderer.errors import BuildError
from renderer.kustomize.library import library_path

if TYPE_CHECKING:
    from renderer.overlays import Overlay

__all__ = [
    "BUILD_TIMEOUT",
    "SCRATCH_PREFIX",
    "build_dir",
    "build_dirs",
    "build_overlays",
    "materialize",
    "scratch_dir",
    "start_workers",
]

BUILD_TIMEOUT = float(os.environ.get("GPU_GITOPS_BUILD_TIMEOUT", "120"))
"""Seconds one build may take (GPU_GITOPS_BUILD_TIMEOUT); the examples build in well under one."""
_WORKERS = 2
_WORKER_SCRIPT = Path(__file__).with_name("worker.py")
SCRATCH_PREFIX = "gpu-gitops-"
SWEEP_AFTER = 300.0
_TMPFS = Path("/dev/shm")
_OFFLINE = {
    # kustomize fetches remote bases with git and remote files with Go's HTTP client
    "GIT_ALLOW_PROTOCOL": "none",
    "GIT_TERMINAL_PROMPT": "0",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "",
}


@contextmanager
def scratch_dir(prefix: str) -> Iterator[str]:
    """A scratch directory for overlays kustomize must read from disk, removed afterwards.

    On tmpfs when the machine has one: writing a thousand small overlays took 2 s on a disk-backed
    /tmp here and 0.04 s on /dev/shm. tmpfs is memory, so a folder left by a killed run must not
    stay until the next boot: each is flock-ed while in use, and every run first removes the
    `gpu-gitops-*` folders nobody holds (see _sweep; no PID involved, so a reused PID fools
    nothing).
    """
    base = _swept_base()
    # made under a name the sweep skips, and named for it only once locked
    hidden = Path(tempfile.mkdtemp(prefix="." + prefix, dir=base))
    path = hidden.with_name(hidden.name[1:])
    fd = os.open(hidden, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        hidden.rename(path)
        yield str(path)
    finally:
        for p in (hidden, path):
            shutil.rmtree(p, ignore_errors=True)
        os.close(fd)


def _swept_base() -> Path:
    """Where scratch folders go, once the ones of killed runs are removed from it."""
    fast = _TMPFS.is_dir() and os.access(_TMPFS, os.W_OK | os.X_OK)
    base = _TMPFS if fast else Path(tempfile.gettempdir())
    _sweep(base)
    return base


def _sweep(base: Path) -> None:
    """Remove the scratch folders of runs that ended without cleaning up (killed, crashed).

    Only those untouched for SWEEP_AFTER seconds: a run of a version that did not lock its
    folder yet may still be using a younger one."""
    uid, now = os.getuid(), time.time()
    for path in base.glob(f"{SCRATCH_PREFIX}*"):
        try:
            info = path.lstat()
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid:
                continue
            if now - info.st_mtime < SWEEP_AFTER:
                continue
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # in use
        finally:
            os.close(fd)
        shutil.rmtree(path, ignore_errors=True)


class _Worker:
    def __init__(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
        self.proc = subprocess.Popen(
            # -I: not the checkout's folder on sys.path (a committed json.py must not run);
            # -S: the worker needs nothing but the standard library
            [sys.executable, "-I", "-S", str(_WORKER_SCRIPT), str(library_path())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env | _OFFLINE,
        )

    def build(self, path: Path) -> tuple[bool, str]:
        stdin: IO[bytes] | None = self.proc.stdin
        stdout: IO[bytes] | None = self.proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write(json.dumps({"path": str(path.absolute())}).encode() + b"\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            return False, f"the build process ended (exit code {self.proc.wait()})"
        ok, text = json.loads(line)
        return bool(ok), str(text)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


_LOCK = threading.Lock()
_POOL: list[_Worker] = []


def _workers(n: int) -> list[_Worker]:
    _POOL[:] = [w for w in _POOL if w.proc.poll() is None]
    while len(_POOL) < n:
        _POOL.append(_Worker())
    return _POOL[:n]


def start_workers(jobs: int) -> None:
    """Start the workers `jobs` builds will use, ahead of them: each loads kustomize (about 20 ms)
    while the caller reads and checks what it will build. Nothing starts when kustomize's library
    is missing: the first build says so."""
    with _LOCK, suppress(BuildError):
        _workers(min(_WORKERS, jobs))


def _end_workers() -> None:
    for w in _POOL:
        w.stop()
    _POOL.clear()


atexit.register(_end_workers)


def build_dirs(
    paths: Sequence[Path],
    progress: Callable[[str], None] | None = None,
    timeout: float = BUILD_TIMEOUT,
) -> list[str]:
    """Build kustomization directories; their YAML in the same order. BuildError names the first
    that failed, or one that gave no result within `timeout` seconds."""
    if not paths:
        return []
    with _LOCK:
        return _build_all(paths, progress, timeout)


def _build_all(
    paths: Sequence[Path], progress: Callable[[str], None] | None, timeout: float
) -> list[str]:
    jobs: queue.SimpleQueue[int] = queue.SimpleQueue()
    for i in range(len(paths)):
        jobs.put(i)
    results: queue.SimpleQueue[tuple[int, bool, str]] = queue.SimpleQueue()
    failed = threading.Event()
    busy: dict[int, Path] = {}

    def run(worker: _Worker) -> None:
        while not failed.is_set():
            try:
                i = jobs.get_nowait()
            except queue.Empty:
                return
            busy[id(worker)] = paths[i]
            ok, text = worker.build(paths[i])
            busy.pop(id(worker), None)
            results.put((i, ok, text))

    workers = _workers(min(_WORKERS, len(paths)))
    threads = [threading.Thread(target=run, args=(w,), daemon=True) for w in workers]
    for t in threads:
        t.start()
    out: list[str | None] = [None] * len(paths)
    error: BuildError | None = None
    for _ in paths:
        try:
            i, ok, text = results.get(timeout=timeout)
        except queue.Empty:
            stuck = ", ".join(sorted(p.name for p in busy.values())) or "an overlay"
            error = BuildError(
                f"kustomize build of {stuck} did not finish within {timeout:g} s "
                "(GPU_GITOPS_BUILD_TIMEOUT); it was stopped"
            )
            _end_workers()  # the only way to stop a build: its process
            break
        if not ok:
            error = BuildError(f"kustomize build of {paths[i].name} failed: {text}")
            break
        out[i] = text
        if progress:
            progress(paths[i].name)
    failed.set()
    for t in threads:
        t.join()  # each finishes the build it is on (or was ended with its process)
    if error is not None:
        raise error
    return [text or "" for text in out]


def build_dir(path: Path) -> str:
    """Build one kustomization directory; multi-document YAML as kustomize prints it."""
    (text,) = build_dirs([path])
    return text


def materialize(root: Path, overlays: Mapping[str, Overlay]) -> None:
    """Write overlays/base/ and overlays/<name>/ under `root` (a scratch directory)."""
    # overlays.py loads the whole renderer: validate, which builds only committed overlays
    # (committed.py -> build_dirs), starts without it
    from renderer.overlays import base_files

    for rel, text in base_files().items():
        _write(root / "overlays" / "base" / rel, text)
    for name, overlay in overlays.items():
        for rel, text in overlay.files.items():
            _write(root / "overlays" / name / rel, text)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def build_overlays(
    overlays: Mapping[str, Overlay], progress: Callable[[str], None] | None = None
) -> dict[str, str]:
    """Build every overlay; cluster name -> built YAML, in name order.

    The tool's own overlays are built in this process (inprocess.py, byte for byte what kustomize
    prints); the others, and any it leaves, by kustomize from a scratch copy."""
    # inprocess.py loads the whole renderer (see materialize)
    from renderer.kustomize.inprocess import build_generated

    built: dict[str, str] = {}
    left: dict[str, Overlay] = {}
    for name in sorted(overlays):
        text = build_generated(overlays[name])
        if text is None:
            left[name] = overlays[name]
            continue
        built[name] = text
        if progress:
            progress(name)
    if not left:
        _swept_base()  # what killed runs left is removed all the same
    else:
        with scratch_dir("gpu-gitops-build-") as tmp:
            root = Path(tmp)
            materialize(root, left)
            texts = build_dirs([root / "overlays" / name for name in left], progress)
            built |= dict(zip(left, texts, strict=True))
    return {name: built[name] for name in sorted(built)}
