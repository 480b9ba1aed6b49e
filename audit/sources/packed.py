"""The desired objects, held pickled until the comparison asks for one.

Why: parsed, a desired object costs about 6.5 KB of Python objects (bench_audit's cluster), and
the audit holds every one of them while it lists the live ones kind by kind: at 200,000 objects
that alone was 1.2 GB of the nightly job's peak. Pickled, the same object is 0.56 KB, and each one
is unpickled when its kind is compared (once, in about the time PyYAML's C loader takes for a
tenth of it). The keys are kept beside them, so grouping by kind and the inventory read no object.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import overload

from kubedata.objects import KubeObject, ObjectKey

from audit.kinds import live_key
from audit.sources.rendered_yaml import load_files

__all__ = ["PackedObjects", "pack_files"]


class PackedObjects(Sequence[KubeObject]):
    """Objects in order, each given back as a new copy (a caller's edit never reaches another)."""

    __slots__ = ("_blobs", "keys")

    def __init__(self, objects: Iterable[KubeObject] = ()) -> None:
        self._blobs: list[bytes] = []
        self.keys: list[ObjectKey] = []
        """The key the live object has (audit.kinds.live_key) of each object, in order."""
        for obj in objects:
            self.append(obj)

    def append(self, obj: KubeObject) -> None:
        self._blobs.append(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))
        self.keys.append(live_key(obj))

    def __len__(self) -> int:
        return len(self._blobs)

    @overload
    def __getitem__(self, index: int) -> KubeObject: ...

    @overload
    def __getitem__(self, index: slice) -> list[KubeObject]: ...

    def __getitem__(self, index: int | slice) -> KubeObject | list[KubeObject]:
        if isinstance(index, slice):
            return [pickle.loads(blob) for blob in self._blobs[index]]
        obj: KubeObject = pickle.loads(self._blobs[index])
        return obj

    def __iter__(self) -> Iterator[KubeObject]:
        return (pickle.loads(blob) for blob in self._blobs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedObjects):
            return self.keys == other.keys and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def __repr__(self) -> str:
        return f"PackedObjects({len(self)} objects)"

    def extend(self, other: PackedObjects) -> None:
        """Append another's objects, still packed."""
        self._blobs += other._blobs
        self.keys += other.keys

    def blob(self, index: int) -> bytes:
        """The object at `index`, pickled (for another process to unpickle)."""
        return self._blobs[index]

    def of_kind(self, kind: str) -> Iterator[KubeObject]:
        """The objects whose kind is `kind`, in order; the others stay packed."""
        blobs = zip(self._blobs, self.keys, strict=True)
        return (pickle.loads(blob) for blob, key in blobs if key.kind == kind)


def pack_files(files: Mapping[str, bytes], where: str) -> PackedObjects:
    """The objects of these YAML files, in order (AuditError names a file that is not YAML;
    `where` names the commit or artifact)."""
    objects = PackedObjects()
    for _, docs in load_files(files, where):
        for doc in docs:
            if isinstance(doc, dict) and doc.get("apiVersion") and doc.get("kind"):
                objects.append(doc)
    return objects
