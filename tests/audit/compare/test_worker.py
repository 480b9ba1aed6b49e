"""The audit's worker: a real second process parses and compares as this one does, raises what
the same call raises here, and a worker that died is an AuditError that says so."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
import yaml

from audit.compare.crd import schema_of
from audit.compare.pairs import normalized_changes
from audit.compare.worker import Worker
from audit.errors import AuditError
from audit.sources import desired as desired_module
from audit.sources.desired import rendered_objects
from benchmarks.bench_audit import world
from kubedata.objects import key_of
from tests.audit.conftest import LIVE


def _pairs() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(desired, live) of every object both sides of a small drifted cluster have."""
    live, desired = world(400, 0.3)
    by_key = {key_of(o): o for o in live}
    return [(d, by_key[key_of(d)]) for d in desired if key_of(d) in by_key]


def test_the_worker_gives_the_changes_this_process_gives() -> None:
    pairs = _pairs()
    vm_crd = yaml.safe_load((LIVE / "crd-virtualmachines.yaml").read_text())
    vm_schema = schema_of(vm_crd, "kubevirt.io/v1")
    assert vm_schema is not None
    schemas = [vm_schema if live["kind"] == "VirtualMachine" else None for _, live in pairs]
    want = [normalized_changes(d, lv, None, s) for (d, lv), s in zip(pairs, schemas, strict=True)]
    got: dict[int, Any] = {}
    with Worker() as worker:
        for start in range(0, len(pairs), 50):
            batch = [
                (i, pickle.dumps(pairs[i][0]), pairs[i][1], schemas[i])
                for i in range(start, min(start + 50, len(pairs)))
            ]
            got.update(worker.send(batch))
        got.update(worker.collect())
    assert [got[i] for i in range(len(pairs))] == want
    assert sum(1 for changes in want if changes) > 20  # drift, in several kinds
    assert {lv["kind"] for (_, lv), c in zip(pairs, want, strict=True) if c} >= {
        "Deployment",
        "VirtualMachine",
    }


def test_an_error_in_the_worker_is_raised_here() -> None:
    (desired, live), *_ = _pairs()
    with Worker() as worker:
        worker.send([(0, b"not a pickle", live, None)])
        with pytest.raises(pickle.UnpicklingError):
            worker.collect()
        # and the worker goes on with the next batch
        worker.send([(1, pickle.dumps(desired), live, None)])
        assert worker.collect() == [(1, normalized_changes(desired, live))]


def test_a_worker_that_died_is_an_audit_error_that_says_so() -> None:
    (desired, live), *_ = _pairs()
    with Worker() as worker:
        worker.pack({}, "test")
        assert len(worker.packed()) == 0  # started
        assert worker._proc is not None
        worker._proc.kill()
        worker._proc.wait()
        with pytest.raises(AuditError, match=r"worker process stopped \(exit code -9\)"):
            worker.send([(0, pickle.dumps(desired), live, None)] * 2000)
            worker.collect()


def _files(count: int) -> dict[str, bytes]:
    files = {}
    for i in range(count):
        text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  k: '{i}'\n"
        files[f"ams1/configmap_cm-{i:04d}.yaml"] = text.encode()
    return files


def test_the_worker_packs_the_files_this_process_packs(monkeypatch: pytest.MonkeyPatch) -> None:
    files = _files(40)
    files["ams1/kustomization.yaml"] = b"resources: []\n"
    files["ams1/source/gpu-profile.yaml"] = b"apiVersion: v1\nkind: NotAnObject\n"
    want = rendered_objects(files, "ams1", "test")
    monkeypatch.setattr(desired_module, "PARSE_MIN", 10)
    monkeypatch.setattr(desired_module, "CHUNK", 3)
    packed = Worker.packed
    parsed: list[int] = []

    def counted(self: Worker) -> Any:
        parsed.append(len(objects := packed(self)))
        return objects

    monkeypatch.setattr(Worker, "packed", counted)
    with Worker() as worker:
        got = rendered_objects(files, "ams1", "test", worker)
    assert 0 < sum(parsed) < 40  # the worker parsed some of them, this process the others
    assert got == want and len(got) == 40


def test_a_file_the_worker_cannot_parse_is_the_error_this_process_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    files = _files(40)
    for bad in (10, 11, 39):  # whichever process has which, the first is the error
        files[f"ams1/configmap_cm-{bad:04d}.yaml"] = b"kind: [unclosed\n"
    with pytest.raises(AuditError) as here:
        rendered_objects(files, "ams1", "test")
    monkeypatch.setattr(desired_module, "PARSE_MIN", 10)
    for chunk in (1, 3, 7, 40):
        monkeypatch.setattr(desired_module, "CHUNK", chunk)
        with Worker() as worker, pytest.raises(AuditError) as there:
            rendered_objects(files, "ams1", "test", worker)
        assert str(there.value) == str(here.value)
    assert "configmap_cm-0010.yaml" in str(here.value)
