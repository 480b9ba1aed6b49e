"""The audit's second process: it parses part of the desired state and compares pairs, while
this one reads and compares too.

Why this exists: the audit of a large cluster is bound by one core. The desired state is parsed
before anything can be compared, and every pair whose raw values differ (most Deployments and
Services: the server's defaults) is normalized on both sides and diffed, which is most of the
work and needs nothing but the pair. So a worker (`python -m audit.compare.worker`, started as
soon as the size of the desired state is known) takes chunks of the desired files, then batches
of pairs, whenever it is free, while this process does the rest. One request is in flight at a time:
a new one is sent only once the last one's answer is read, so neither side can block the other
on a full pipe. Answers are those of the same calls made here (packed.pack_files,
pairs.normalized_changes); only the time differs.

Frames on the pipes are a 4-byte big-endian length, then a pickle: the worker is this program,
started by this process, and reads nothing else.
"""

from __future__ import annotations

import contextlib
import pickle
import select
import struct
import subprocess
import sys
from collections.abc import Mapping
from typing import IO, Any

from kubedata.diff import Change
from kubedata.objects import KubeObject

from audit.compare.crd import Schema
from audit.compare.known_types import SERVER_METADATA
from audit.compare.pairs import normalized_changes
from audit.errors import AuditError
from audit.sources.packed import PackedObjects, pack_files

__all__ = ["Worker"]

Result = tuple[int, list[Change]]

_LENGTH = struct.Struct(">I")
_SERVER_METADATA = frozenset(SERVER_METADATA)


def _stripped(live: KubeObject) -> KubeObject:
    """What normalize reads of a live object: without status and server-set metadata, which
    it drops anyway (managedFields alone are often most of an object's bytes)."""
    out = {k: v for k, v in live.items() if k != "status"}
    meta = out.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = {k: v for k, v in meta.items() if k not in _SERVER_METADATA}
    return out


def _write(stream: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)))
    stream.write(data)
    stream.flush()


def _read(stream: IO[bytes]) -> Any:
    """The next message; EOFError when the other side has gone."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        raise EOFError
    size = _LENGTH.unpack(head)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class Worker:
    """The worker process, started at its first request; a context manager that ends it."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._sent: set[int] = set()
        """Ids of the schemas the worker holds (each is sent once)."""
        self._in_flight = ""
        """What the request in flight asked ("pack", "compare"), or ""."""

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the desired state ------------------------------------------------------------------------

    def pack(self, files: Mapping[str, bytes], where: str) -> None:
        """Start parsing `files` (packed.pack_files); `packed` gives the objects."""
        self._request("pack", (dict(files), where))

    def packed(self) -> PackedObjects:
        """The objects of the files `pack` was given (AuditError as pack_files raises it)."""
        objects: PackedObjects = self._answer("pack")
        return objects

    # -- pairs ------------------------------------------------------------------------------------

    def send(self, pairs: list[tuple[int, bytes, KubeObject, Schema | None]]) -> list[Result]:
        """Hand `pairs` (number, desired pickled, live, schema) over to be compared; the results
        of the batch sent before, if any, in its order."""
        done = self.collect()
        schemas = {id(s): s for _, _, _, s in pairs if s is not None and id(s) not in self._sent}
        self._sent.update(schemas)
        batch = [
            (n, blob, _stripped(live), None if s is None else id(s)) for n, blob, live, s in pairs
        ]
        self._request("compare", (schemas, batch))
        return done

    def collect(self) -> list[Result]:
        """The results of the batch in flight (none when there is none)."""
        if self._in_flight != "compare":
            return []
        results: list[Result] = self._answer("compare")
        return results

    @property
    def busy(self) -> bool:
        """Whether the request in flight is still being worked on."""
        if not self._in_flight or self._proc is None or self._proc.stdout is None:
            return False
        return not select.select([self._proc.stdout], [], [], 0)[0]

    # -- the process ------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the process now (else at the first request), so its start-up overlaps work."""
        if self._proc is None:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "audit.compare.worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )

    def close(self) -> None:
        """End the worker: it exits when its input ends (killed if it is still working)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if self._in_flight:
            proc.kill()  # an answer nobody will read
        if proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    def _request(self, what: str, message: Any) -> None:
        assert not self._in_flight, f"a {self._in_flight} answer is unread"
        self.start()
        assert self._proc is not None and self._proc.stdin is not None
        try:
            _write(self._proc.stdin, (what, message))
        except BrokenPipeError:
            raise self._gone() from None
        self._in_flight = what

    def _answer(self, what: str) -> Any:
        assert self._in_flight == what and self._proc is not None
        assert self._proc.stdout is not None
        self._in_flight = ""
        try:
            status, payload = _read(self._proc.stdout)
        except EOFError:
            raise self._gone() from None
        if status == "error":
            raise payload  # the exception the same call raises here
        return payload

    def _gone(self) -> AuditError:
        assert self._proc is not None
        code = self._proc.wait()
        return AuditError(
            f"the audit's worker process stopped (exit code {code}): out of memory? Give the "
            "audit more memory, or rerun"
        )


def _serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    schemas: dict[int, Schema] = {}
    while True:
        try:
            what, message = _read(stdin)
        except EOFError:
            return
        try:
            if what == "pack":
                reply: tuple[str, Any] = ("ok", pack_files(*message))
            else:
                new, batch = message
                schemas.update(new)
                results = [
                    (n, normalized_changes(pickle.loads(blob), live, None, schemas.get(sid)))
                    for n, blob, live, sid in batch
                ]
                reply = ("ok", results)
        except Exception as exc:  # handed back, raised there as it would be here
            reply = ("error", exc)
        try:
            _write(stdout, reply)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            _write(stdout, ("error", RuntimeError(f"{reply[1]!r} ({exc})")))


if __name__ == "__main__":
    protocol = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing printed can break the frames
    _serve(sys.stdin.buffer, protocol)
