"""Offline live state: a folder of `kubectl get -o yaml|json` dumps, read as the API client reads.

Any `.yaml`, `.yml` or `.json` file below the folder (hidden files and folders skipped), each a
single object, a `List` (`kubectl get` of several objects) or an `XList` (a raw API list, whose
items lack apiVersion and kind), or several YAML documents. Objects come out as the API client
returns them: plain dicts with apiVersion and kind, in file order. The same object twice with
different content is an error: the snapshot would not say which one is live.

A snapshot says nothing about kinds it does not hold: the audit treats such a kind as not read
(live.py). An empty `List` (what `kubectl get KIND -A -o yaml` prints when there is none) names no
kind; a file holding one, named after the resource (`nodes.yaml`,
`virtualmachines.kubevirt.io.yaml`), says that none exist (`empty_lists`). An empty file is what
`kubectl get KIND ... > KIND.yaml` leaves when kubectl fails, for instance because the cluster does
not serve the kind: it says nothing, and only the snapshot's CRD list can tell (`blank_files`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kubedata.errors import YamlError
from kubedata.objects import KubeObject, ObjectKey, key_of
from kubedata.yaml_bombs import nested_too_deep
from kubedata.yaml_io import documents

from audit.errors import SnapshotError
from audit.sources.rendered_yaml import read_alike

__all__ = ["SUFFIXES", "blank_files", "empty_lists", "load_snapshot", "read_snapshot_file"]

SUFFIXES = (".yaml", ".yml", ".json")


def _yaml_documents(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """(first line, data) per document; parse errors name file and line. A text yaml-rs reads
    as PyYAML does, and nested no deeper than a guarded read allows, is read by yaml-rs: several
    times faster (audit.sources.rendered_yaml), and one document, on its first written line."""
    fast = read_alike(text)
    if fast is not None and not any(nested_too_deep(doc) for doc in fast):
        yield from ((_first_written_line(text), doc) for doc in fast)
        return
    try:
        yield from documents(text, str(path), guarded=True)
    except YamlError as exc:
        raise SnapshotError(f"{exc}; fix or remove the file") from None


def _first_written_line(text: str) -> int:
    """The line PyYAML gives a document: its first that holds more than blanks and a comment."""
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            return number
    return 1


def _json_documents(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    try:
        yield 1, json.loads(text)
    except json.JSONDecodeError as exc:
        raise SnapshotError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); fix or remove the file"
        ) from None


def _check(obj: Any, where: str) -> KubeObject:
    if not isinstance(obj, dict) or not obj.get("apiVersion") or not obj.get("kind"):
        raise SnapshotError(f"{where}: not a Kubernetes object (no apiVersion or kind); remove it")
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        raise SnapshotError(f"{where}: {obj['kind']} without metadata.name; remove it")
    return obj


def _expand(doc: dict[str, Any], where: str) -> list[KubeObject]:
    """A list document -> its items, filling apiVersion and kind the way the API client does."""
    kind = str(doc.get("kind", ""))
    items = doc.get("items")
    if not isinstance(items, list):
        raise SnapshotError(f"{where}: {kind} without an items list; remove it")
    out = []
    for index, item in enumerate(items):
        if isinstance(item, dict) and kind != "List":
            item.setdefault("apiVersion", doc.get("apiVersion"))
            item.setdefault("kind", kind.removesuffix("List"))
        out.append(_check(item, f"{where}: items[{index}]"))
    return out


def read_snapshot_file(path: Path) -> list[KubeObject]:
    """The objects in one dump file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"{path}: cannot be read ({exc}); check the snapshot folder") from None
    documents = (
        _json_documents(path, text) if path.suffix == ".json" else _yaml_documents(path, text)
    )
    objects: list[KubeObject] = []
    for line, doc in documents:
        if doc is None:
            continue  # an empty document (`---` at the end), as kubectl skips it
        where = f"{path}:{line}"
        if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List") and "items" in doc:
            objects.extend(_expand(doc, where))
        else:
            objects.append(_check(doc, where))
    return objects


def _files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.rglob("*")
        if p.suffix in SUFFIXES
        and p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def empty_lists(folder: Path) -> frozenset[str]:
    """Names (file name without suffix) of the files that hold nothing but empty lists."""
    out = set()
    for path in _files(folder):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "items: []" not in text and '"items": []' not in text:
            continue  # cheap filter: only such files can hold an empty list
        documents = (
            _json_documents(path, text) if path.suffix == ".json" else _yaml_documents(path, text)
        )
        docs = [doc for _, doc in documents if doc is not None]
        if docs and all(isinstance(d, dict) and d.get("items") == [] for d in docs):
            out.add(path.name.removesuffix(path.suffix))
    return frozenset(out)


def blank_files(folder: Path) -> frozenset[str]:
    """Names (file name without suffix) of the files that hold nothing at all."""
    return frozenset(
        path.name.removesuffix(path.suffix)
        for path in _files(folder)
        if path.stat().st_size < 4096 and not path.read_bytes().strip()
    )


def load_snapshot(folder: Path) -> list[KubeObject]:
    """Every object under `folder`, files in path order; SnapshotError names file and line."""
    if not folder.is_dir():
        raise SnapshotError(f"snapshot folder {folder} does not exist: check --snapshot")
    files = _files(folder)
    if not files:
        raise SnapshotError(f"snapshot folder {folder} holds no .yaml, .yml or .json file")
    objects: list[KubeObject] = []
    seen: dict[ObjectKey, tuple[Path, KubeObject]] = {}
    for path in files:
        for obj in read_snapshot_file(path):
            key = key_of(obj)
            if key in seen:
                first_path, first = seen[key]
                if first != obj:
                    raise SnapshotError(
                        f"{key} is in {first_path} and in {path} with different content: "
                        "keep one dump per object"
                    )
                continue
            seen[key] = (path, obj)
            objects.append(obj)
    return objects
