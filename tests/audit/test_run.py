"""The audit's cyclic-GC pause: off while the audit runs, left as the caller had it afterwards,
whether the audit returns or raises; and the steps it runs, in order."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from audit.errors import KubeApiError
from audit.run import STEPS, audit
from audit.sources.desired import Desired
from audit.sources.live import Each, Live, SnapshotReader
from audit.sources.packed import PackedObjects
from kubedata.objects import KubeObject

NOTHING = Desired("t1", "rendered-tip", "rendered@sha1:" + "0" * 40, PackedObjects())
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}}


class RecordingReader(SnapshotReader):
    """A snapshot that records whether the GC ran at each list, and may raise at the first."""

    def __init__(self, objects: list[KubeObject], fail: Exception | None = None) -> None:
        super().__init__(objects)
        self.fail = fail
        self.gc_enabled: list[bool] = []

    def list(
        self,
        group: str,
        kind: str,
        namespace: str | None = None,
        labels: str | None = None,
        each: Each | None = None,
    ) -> list[KubeObject] | None:
        self.gc_enabled.append(gc.isenabled())
        if self.fail is not None:
            raise self.fail
        return super().list(group, kind, namespace, labels, each)


@pytest.fixture(autouse=True)
def gc_as_found() -> Iterator[None]:
    """Whatever a test does, the next one finds the GC enabled and nothing frozen."""
    yield
    gc.enable()
    gc.unfreeze()


def test_the_gc_is_paused_while_the_audit_runs_and_enabled_after() -> None:
    reader = RecordingReader([CONFIGMAP])
    assert gc.isenabled()
    result = audit(NOTHING, Live(reader))
    assert result.complete
    assert reader.gc_enabled and not any(reader.gc_enabled)
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0  # promoted to the oldest generation, not left frozen


@pytest.mark.parametrize(
    "fail",
    [KubeApiError("refused", status=401), RuntimeError("a bug in a step")],
    ids=["401", "bug"],
)
def test_the_gc_is_enabled_after_an_audit_that_raises(fail: Exception) -> None:
    reader = RecordingReader([CONFIGMAP], fail)
    with pytest.raises(type(fail)):
        audit(NOTHING, Live(reader))
    assert reader.gc_enabled == [False]
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_callers_own_gc_settings_are_left_alone() -> None:
    gc.disable()
    audit(NOTHING, Live(RecordingReader([CONFIGMAP])))
    assert not gc.isenabled()  # the caller paused it: still paused
    gc.enable()
    kept: list[Any] = [{"frozen": "by the caller"}]
    gc.freeze()
    frozen = gc.get_freeze_count()
    audit(NOTHING, Live(RecordingReader([CONFIGMAP])))
    assert gc.get_freeze_count() == frozen  # someone else's frozen set is not thawed
    assert kept


def test_the_steps_run_in_order() -> None:
    assert [step.__name__ for step in STEPS] == [
        "read_helm_releases",
        "expect_wiring",
        "load_releases",
        "compare_releases",
        "compare_git",
        "compare_wiring",
        "check_vms",
        "check_nodes",
        "inventory",
    ]
