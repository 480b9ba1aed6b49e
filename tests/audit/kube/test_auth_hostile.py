"""Credentials on a bad day: a token file that is a FIFO or endless, an exec plugin that floods,
hangs, or leaves children behind. Each ends in one line, never a hang, never a leaked process."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from audit.errors import KubeConfigError
from audit.kube.auth import EXEC_MAX_OUTPUT, ExecAuth, TokenFileAuth
from audit.kube.kubeconfig import ClusterConfig, ExecConfig


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_token_file_that_is_no_file_is_refused_at_once(tmp_path: Path, kind: str):
    path = tmp_path / "token"
    if kind == "fifo":
        os.mkfifo(path)  # nobody writes: a blocking read would hang
    else:
        path.symlink_to("/dev/zero")  # never ends
    with pytest.raises(KubeConfigError) as exc:
        TokenFileAuth(path).token()
    assert str(exc.value) == (
        f"token file {path} is not a regular file: point tokenFile at the token itself"
    )


def test_a_huge_token_file_is_refused(tmp_path: Path):
    path = tmp_path / "token"
    path.write_bytes(b"x" * (1 << 20))
    with pytest.raises(KubeConfigError, match="is too large"):
        TokenFileAuth(path).token()


def _plugin(tmp_path: Path, body: str) -> ExecAuth:
    script = tmp_path / "plugin.py"
    script.write_text(textwrap.dedent(body))
    config = ExecConfig(command=sys.executable, args=(str(script),), interactive_mode="Never")
    return ExecAuth(config, ClusterConfig(server="https://x", exec=config), timeout=5)


def test_a_plugin_that_floods_stdout_is_stopped(tmp_path: Path):
    auth = _plugin(tmp_path, "import sys\nwhile True:\n    sys.stdout.buffer.write(b'x' * 65536)\n")
    with pytest.raises(KubeConfigError) as exc:
        auth.credential()
    assert str(exc.value) == (
        f"exec plugin {sys.executable!r} printed over {EXEC_MAX_OUTPUT} bytes; "
        "an ExecCredential is a few KB: run it by hand"
    )


def test_a_plugin_whose_child_holds_stdout_neither_hangs_nor_leaves_the_child(tmp_path: Path):
    """The plugin answers, then exits leaving a child that keeps stdout open for an hour: its
    answer counts without waiting for the child, and the child does not outlive the call."""
    pidfile = tmp_path / "child.pid"
    auth = _plugin(
        tmp_path,
        f"""\
        import json, os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        open({str(pidfile)!r}, "w").write(str(child.pid))
        print(json.dumps({{"apiVersion": "client.authentication.k8s.io/v1",
                          "kind": "ExecCredential", "status": {{"token": "tok-123456789"}}}}))
        sys.stdout.flush()
        os._exit(0)
        """,
    )
    assert auth.credential().token == "tok-123456789"
    child = int(pidfile.read_text())
    assert _gone(child)


def _gone(pid: int) -> bool:
    """No such process, or only its zombie (PID 1 of a container may never reap it). SIGKILL
    is delivered asynchronously: the process is given a few seconds to die."""
    for _ in range(500):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rpartition(")")[2].split()[0] in ("Z", "X"):
            return True
        time.sleep(0.01)
    return False


def test_a_plugin_that_never_answers_is_stopped_with_its_children(tmp_path: Path):
    pidfile = tmp_path / "child.pid"
    auth = _plugin(
        tmp_path,
        f"""        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        open({str(pidfile)!r}, "w").write(str(child.pid))
        time.sleep(3600)
        """,
    )
    auth._timeout = 2
    with pytest.raises(KubeConfigError) as exc:
        auth.credential()
    assert str(exc.value) == (
        f"exec plugin {sys.executable!r} did not answer within 2s: run it by hand"
    )
    assert _gone(int(pidfile.read_text()))


def test_a_plugin_that_answers_and_exits_cleanly_still_works(tmp_path: Path):
    auth = _plugin(
        tmp_path,
        """\
        import json
        print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1",
                          "kind": "ExecCredential", "status": {"token": "tok-123456789"}}))
        """,
    )
    assert auth.credential().token == "tok-123456789"
