"""PyYAML, imported without the one thing of its import this project never uses: the pattern of
non-printable characters of its pure-Python Reader, whose compile took 8 ms of every start that
reads YAML (a twentieth of a snapshot audit). libyaml reads all YAML here (kubedata.yaml_io), so
the pattern is compiled only if that Reader ever runs. Every module imports PyYAML from here."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["yaml"]

_NON_PRINTABLE = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
"""yaml.reader.Reader.NON_PRINTABLE's pattern (PyYAML 6); another one is compiled as usual."""


class _CompiledAtFirstSearch:
    """What the Reader calls of its pattern, compiled when first called (re caches it)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def search(self, text: str) -> re.Match[str] | None:
        return re.compile(self.pattern).search(text)


@contextmanager
def _reader_pattern_deferred() -> Iterator[None]:
    compile_ = re.compile

    def deferring(pattern: Any, flags: int = 0) -> Any:
        if pattern == _NON_PRINTABLE and not flags:
            return _CompiledAtFirstSearch(pattern)
        return compile_(pattern, flags)

    re.compile = deferring
    try:
        yield
    finally:
        re.compile = compile_


with _reader_pattern_deferred():
    import yaml
