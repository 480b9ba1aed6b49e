"""The rendered branch's object files, parsed fast and as Kubernetes reads them.

The audit reads every object of a cluster from git (18,620 files in the benchmark), and PyYAML's
C loader spends most of its time there in its Python constructor. yaml-rs (a Rust parser) builds
the same objects several times faster, but it reads YAML 1.2, while Kubernetes and Flux read YAML
1.1 (go-yaml): a plain `on`, `0755`, `1e3`, `12:30`, a `<<` merge key, a tag, an anchor or a date
means something else there. So a file goes to yaml-rs only when it holds none of those words and
one document; anything else, and anything yaml-rs refuses, is parsed by PyYAML as before. A word
is looked at once for all the files (they repeat the same keys and values), not once per file, and
the files are split into words again only when some word differs (no per-file sets held: on 18,620
files they cost 70 MB of peak memory).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import yaml_rs
from kubedata.errors import YamlError
from kubedata.gc_pause import paused_gc
from kubedata.yaml_io import documents

from audit.errors import AuditError

__all__ = ["load_files", "read_alike"]

# a word (whitespace and flow punctuation removed, a key's trailing colon too) that YAML 1.1
# and YAML 1.2 read differently, or that this fast path does not handle
_DIFFERS = re.compile(
    rb"(?i:yes|no|on|off)"
    rb"|[-+]?0[0-9_]+(?:\.[0-9_]*)?"  # 1.1 octal: 0755
    rb"|[-+]?0o[0-7_]+"  # 1.2 octal
    rb"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?"  # 1.1 base 60: 12:30
    rb"|[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+"  # 1e3 (1.2), 1.5e3 (1.1)
    rb"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*"  # dates and timestamps
    rb"|<<|=|[!&*].*|---.*|\.\.\..*"  # merge key, value key, tags, anchors, documents
)
_FLOW = bytes.maketrans(b",[]{}", b"     ")
# a byte-order mark yaml-rs keeps in the first key; line breaks of YAML 1.1 only, or that move
# the line PyYAML names
_NOT_ALIKE = ("\ufeff", "\r", "\x85", "\u2028", "\u2029")


def _words(data: bytes) -> list[bytes]:
    return data.translate(_FLOW).split()


def _pyyaml(data: bytes, where: str, path: str) -> list[Any]:
    try:
        return [doc for _, doc in documents(data, path)]
    except YamlError as exc:
        raise AuditError(f"{where}:{exc}; republish") from None


def _yaml_rs(data: bytes) -> list[Any] | None:
    """The documents yaml-rs reads in `data`; None when it refuses it (or it is not UTF-8)."""
    try:
        # a quoted timestamp is a string to PyYAML; an unquoted one is a word of _DIFFERS
        doc = yaml_rs.loads(data.decode(), parse_datetime=False)
    except Exception:  # not UTF-8, or a text yaml-rs refuses: PyYAML decides
        return None
    return [] if doc is None else [doc]


def read_alike(text: str) -> list[Any] | None:
    """The documents of one text when yaml-rs reads it as PyYAML does (none of the words above,
    no byte-order mark, `\\n` line breaks alone); None when PyYAML must decide."""
    if any(mark in text for mark in _NOT_ALIKE):
        return None
    data = text.encode()
    if any(_DIFFERS.fullmatch(w.rstrip(b":")) for w in set(_words(data))):
        return None
    return _yaml_rs(data)


def load_files(files: Mapping[str, bytes], where: str) -> Iterator[tuple[str, list[Any]]]:
    """(path, the YAML documents of that file) in `files`' order, as PyYAML's safe loader gives
    them; the same, faster, for files yaml-rs reads alike. One file at a time, so a caller that
    keeps less than the parsed documents (audit.sources.packed) never holds them all. AuditError
    names a file that is not YAML (`where` names the commit or artifact)."""
    every: set[bytes] = set()
    for data in files.values():
        every.update(_words(data))
    differs = {w for w in every if _DIFFERS.fullmatch(w.rstrip(b":"))}
    del every
    # the parsed documents are let go file by file: they are refcounted, never cyclic garbage,
    # and the cyclic GC would only scan them again and again while they are being made
    with paused_gc():
        for path, data in files.items():
            if not differs or differs.isdisjoint(_words(data)):
                docs = _yaml_rs(data)
                if docs is not None:
                    yield path, docs
                    continue
            yield path, _pyyaml(data, where, path)
