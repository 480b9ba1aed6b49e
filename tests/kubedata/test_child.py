"""A child under a deadline ends with everything it started, and a leftover holding its pipes
never keeps the caller reading."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubedata.child import ChildTimeout, run_child
from tests.hanging_remote import running


def _script(tmp_path: Path, tail: str) -> list[str]:
    # a grandchild holding stdout and stderr, sleeping far past any test
    return ["sh", "-c", f"sleep 3600 & echo $! > {tmp_path}/left.pid; {tail}"]


def test_at_the_deadline_the_child_and_what_it_started_are_killed(tmp_path: Path) -> None:
    args = _script(tmp_path, f"echo $$ > {tmp_path}/child.pid; exec sleep 3600")
    with pytest.raises(ChildTimeout, match=r"^sh -c did not finish within 0\.5 s$"):
        run_child(args, timeout=0.5)
    assert not running(tmp_path / "child.pid")
    assert not running(tmp_path / "left.pid")


def test_a_leftover_holding_the_pipes_does_not_hold_the_caller(tmp_path: Path) -> None:
    done = run_child(_script(tmp_path, "echo said; echo warned >&2; exit 3"))
    assert (done.returncode, done.stdout, done.stderr) == (3, b"said\n", b"warned\n")
    assert not running(tmp_path / "left.pid")


def test_stdin_is_the_data_given(tmp_path: Path) -> None:
    data = b"x" * (1 << 20)  # more than a pipe holds: written through a file
    done = run_child(["wc", "-c"], data=data, timeout=30)
    assert done.stdout.strip() == str(len(data)).encode()
