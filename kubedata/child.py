"""A child process under a deadline, ended with everything it started.

`git push` to a remote whose pre-receive hook hangs, or through an `ssh` that keeps the connection,
does not end when `git` is killed: the hook (or `ssh`) still holds the pipes, and a read of them
waits for it. So the child runs in a session of its own, its output is read until the deadline,
and then, or as soon as it has exited, its whole process group is killed: nothing it started
outlives it, and no read waits on a leftover holding a pipe.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubedata.errors import KubeDataError

__all__ = ["ChildTimeout", "Finished", "run_child"]

_QUIET = 0.05
"""Seconds of silence after the child exited before its pipes count as held by a leftover."""


class ChildTimeout(KubeDataError):
    """The child did not finish within its deadline; it and all it started were killed."""


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: bytes
    stderr: bytes


def run_child(
    args: Sequence[str],
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    data: bytes | None = None,
    timeout: float | None = None,
) -> Finished:
    """Run `args` (stdin: `data`, else nothing) in a new session; ChildTimeout after `timeout`
    seconds (None: no deadline). Its process group is killed when it ends, either way."""
    with tempfile.TemporaryFile() as stdin:
        if data is not None:  # a file, not a pipe: no write can block while the output is read
            stdin.write(data)
            stdin.seek(0)
        proc = subprocess.Popen(
            list(args),
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=stdin if data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    end = None if timeout is None else time.monotonic() + timeout
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    try:
        timed_out = _read(proc, end, chunks)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # before the wait: the group id is still ours
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    if timed_out:
        raise ChildTimeout(f"{' '.join(args[:2])} did not finish within {timeout:g} s")
    return Finished(proc.returncode, b"".join(chunks[out_fd]), b"".join(chunks[err_fd]))


def _read(proc: subprocess.Popen[bytes], end: float | None, chunks: dict[int, list[bytes]]) -> bool:
    """Read stdout and stderr until both close, the child exited and they fell quiet, or `end`
    passed (True)."""
    with selectors.DefaultSelector() as sel:
        for fd in chunks:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                return True
            events = sel.select(_QUIET if left is None else min(left, _QUIET))
            for key, _ in events:
                fd = int(key.fd)
                chunk = os.read(fd, 65536)
                if chunk:
                    chunks[fd].append(chunk)
                else:
                    sel.unregister(fd)
            if not events and proc.poll() is not None:
                break  # it is gone; whatever still holds its pipes is a leftover
    return False
