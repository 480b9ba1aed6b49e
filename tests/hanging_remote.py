"""A bare git remote whose pre-receive hook hangs, and a check that nothing it started lives on.

The hook leaves a background child (sleeping far longer than any test may take) and then becomes
`sleep` itself, both holding the pipes of the `git receive-pack` that runs it: killing `git push`
alone would leave them running, and a read of its output would wait for them past the guard."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HANG_SECONDS = 40
_BACKGROUND_SECONDS = 3600


@contextlib.contextmanager
def hang_on_push(bare: Path, hook_name: str = "pre-receive") -> Iterator[list[Path]]:
    """Make every push to `bare` hang in `hook_name` (post-receive: after the ref moved); the
    files that will hold the pids of what the hook runs. Whatever of it still runs at the end is
    killed (when the test failed)."""
    pids = [bare / "hook.pid", bare / "background.pid"]
    hook = bare / "hooks" / hook_name
    hook.write_text(
        "#!/bin/sh\n"
        f"sleep {_BACKGROUND_SECONDS} &\n"
        f"echo $! > {pids[1]}\n"
        f"echo $$ > {pids[0]}\n"
        f"exec sleep {HANG_SECONDS}\n"
    )
    hook.chmod(0o755)
    try:
        yield pids
    finally:
        for pid_file in pids:
            if pid_file.exists() and running(pid_file, grace=0):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


def running(pid_file: Path, grace: float = 10.0) -> bool:
    """Whether the process named in `pid_file` still runs `grace` seconds from now at the latest
    (a SIGKILL is delivered asynchronously: this waits for it, it does not time it; a zombie not
    yet reaped by init is not running)."""
    end = time.monotonic() + grace
    while _alive(pid_file.read_text().strip()):
        if time.monotonic() >= end:
            return True
        time.sleep(0.02)
    return False


def _alive(pid: str) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gpu_gitops(*argv: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own; the timeout is a guard for the test run only."""
    return subprocess.run(
        [sys.executable, "-m", "gpu_gitops.cli", *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=HANG_SECONDS * 3,
    )
