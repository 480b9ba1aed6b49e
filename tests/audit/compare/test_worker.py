"""The compare worker: a real second process gives the changes this one gives, raises what the
same call raises here, and a worker that died is an AuditError that says so."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
import yaml

from audit.compare.crd import schema_of
from audit.compare.pairs import normalized_changes
from audit.compare.worker import PairWorker
from audit.errors import AuditError
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
    worker = PairWorker()
    got: dict[int, Any] = {}
    try:
        for start in range(0, len(pairs), 50):
            batch = [
                (i, pickle.dumps(pairs[i][0]), pairs[i][1], schemas[i])
                for i in range(start, min(start + 50, len(pairs)))
            ]
            got.update(worker.send(batch))
        got.update(worker.collect())
    finally:
        worker.close()
    assert [got[i] for i in range(len(pairs))] == want
    assert sum(1 for changes in want if changes) > 20  # drift, in several kinds
    assert {lv["kind"] for (_, lv), c in zip(pairs, want, strict=True) if c} >= {
        "Deployment",
        "VirtualMachine",
    }


def test_an_error_in_the_worker_is_raised_here() -> None:
    (desired, live), *_ = _pairs()
    worker = PairWorker()
    try:
        worker.send([(0, b"not a pickle", live, None)])
        with pytest.raises(pickle.UnpicklingError):
            worker.collect()
        # and the worker goes on with the next batch
        worker.send([(1, pickle.dumps(desired), live, None)])
        assert worker.collect() == [(1, normalized_changes(desired, live))]
    finally:
        worker.close()


def test_a_worker_that_died_is_an_audit_error_that_says_so() -> None:
    (desired, live), *_ = _pairs()
    worker = PairWorker()
    worker._proc.kill()
    worker._proc.wait()
    try:
        with pytest.raises(AuditError, match=r"compare worker stopped \(exit code -9\)"):
            worker.send([(0, pickle.dumps(desired), live, None)] * 2000)
            worker.collect()
    finally:
        worker.close()
