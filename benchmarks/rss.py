"""Peak resident memory of this process, for a benchmark step measured in a process of its own.

Why this exists: `getrusage().ru_maxrss` is the wrong figure there. On Linux it keeps, across
exec, the high-water mark of the process image exec replaced: for a step that the benchmark
runner started with subprocess (vfork, then exec), that is the runner's own peak, whatever the
step used. `VmHWM` in /proc/self/status is the peak of this process image alone.
"""

from __future__ import annotations

import contextlib
import resource
import subprocess
import time
from pathlib import Path

__all__ = ["peak_rss_mb", "wait_peak_rss_mb"]


def peak_rss_mb() -> float:
    """This process's peak RSS in MB: VmHWM; ru_maxrss where /proc is not there (not Linux)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def wait_peak_rss_mb(child: subprocess.Popen[bytes]) -> float:
    """Wait for `child`, sampling its VmHWM every 20 ms until it exits; its peak RSS in MB.

    Not wait4's ru_maxrss: after vfork and exec, that carries the high-water mark of the
    (often much larger) process that started it."""
    peak = 0
    while True:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{child.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        if child.poll() is not None:
            return peak / 1024
        time.sleep(0.02)
