"""PyYAML as kubedata.yaml_lib imports it: its Reader's pattern compiled at its first use."""

from __future__ import annotations

import subprocess
import sys

from kubedata import yaml_lib
from tests.conftest import REPO_ROOT


def test_the_reader_s_pattern_is_the_deferred_one():
    """A PyYAML whose pattern changed would compile it at import again: this says so (in a fresh
    interpreter: here PyYAML may have been imported before kubedata.yaml_lib)."""
    probe = (
        "from kubedata import yaml_lib; from kubedata.yaml_lib import yaml; "
        "pattern = yaml.reader.Reader.NON_PRINTABLE; "
        "print(type(pattern).__name__, pattern.pattern == yaml_lib._NON_PRINTABLE)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == [yaml_lib._CompiledAtFirstSearch.__name__, "True"]


def test_the_pure_python_reader_still_refuses_what_is_not_printable():
    """The deferred pattern, in a fresh interpreter too, searches as the compiled one."""
    probe = (
        "from kubedata.yaml_lib import yaml\n"
        "print(yaml.load('a: \\u00e9', Loader=yaml.SafeLoader) == {'a': '\\u00e9'})\n"
        "yaml.load('a: \\x01', Loader=yaml.SafeLoader)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert done.stdout == "True\n"
    assert "unacceptable character #x0001" in done.stderr
