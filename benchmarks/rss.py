"""Peak resident memory of this process, for a benchmark step measured in a process of its own.

A process that starts others (the audit's compare worker) is counted with them: the sum of the
peaks of each (an upper bound on what a pod holds at once).

Why this exists: `getrusage().ru_maxrss` is the wrong figure there. On Linux it keeps, across
exec, the high-water mark of the process image exec replaced: for a step that the benchmark
runner started with subprocess (vfork, then exec), that is the runner's own peak, whatever the
step used. `VmHWM` in /proc/self/status is the peak of this process image alone.
"""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["children_peak_rss", "peak_rss_mib", "wait_peak_rss_mib"]


def peak_rss_mib() -> float:
    """This process's peak RSS in MiB (the kB of VmHWM are KiB); ru_maxrss where /proc is not
    there (not Linux)."""
    hwm = _hwm_kb("self")
    if hwm is not None:
        return hwm / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _hwm_kb(pid: int | str) -> int | None:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _sample(pid: int, peaks: dict[int, int]) -> None:
    """The VmHWM of `pid` and of every process below it, into `peaks` (pid -> kB)."""
    todo = [pid]
    while todo:
        here = todo.pop()
        hwm = _hwm_kb(here)
        if hwm is not None:
            peaks[here] = max(peaks.get(here, 0), hwm)
        todo += _children(here)


def wait_peak_rss_mib(child: subprocess.Popen[bytes]) -> float:
    """Wait for `child`, sampling its VmHWM and that of the processes it starts every 20 ms
    until it exits; the sum of their peaks in MiB.

    Not wait4's ru_maxrss: after vfork and exec, that carries the high-water mark of the
    (often much larger) process that started it."""
    peaks: dict[int, int] = {}
    while True:
        _sample(child.pid, peaks)
        if child.poll() is not None:
            return sum(peaks.values()) / 1024
        time.sleep(0.02)


@contextmanager
def children_peak_rss() -> Iterator[dict[int, int]]:
    """For a step measured in this process: the peaks (pid -> kB) of the processes it starts
    meanwhile, sampled every 20 ms by a thread; add their sum to peak_rss_mib()."""
    peaks: dict[int, int] = {}
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.02):
            for pid in _children(os.getpid()):
                _sample(pid, peaks)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peaks
    finally:
        stop.set()
        thread.join()
