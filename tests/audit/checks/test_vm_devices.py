"""The check of VirtualMachines' GPUs streams the VMs (a cluster may run tens of thousands): it
keeps none of them, and a list that restarts (the API hands its objects again after a 410) is
read as its latest handing of each VM, as if it had been read once."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from audit.report import render_report
from audit.run import audit
from audit.sources.desired import desired_from_repo
from audit.sources.live import Each, Live, SnapshotReader
from kubedata.objects import KubeObject
from tests.audit.audit_helpers import demo_empty, demo_objects, demo_repo

STALE = "nvidia.com/GA100_A100_STALE"


class RestartingReader(SnapshotReader):
    """A streamed VM list first hands every VM with a GPU nobody permits, then restarts and
    hands the VMs as they are; it counts what it was asked for."""

    def __init__(self, objects: list[KubeObject], empty: frozenset[str]) -> None:
        super().__init__(objects, empty)
        self.lists: list[tuple[str, bool]] = []

    def list(
        self,
        group: str,
        kind: str,
        namespace: str | None = None,
        labels: str | None = None,
        each: Each | None = None,
    ) -> list[KubeObject] | None:
        self.lists.append((kind, each is not None))
        if kind == "VirtualMachine" and each is not None:
            for vm in super().list(group, kind, namespace, labels) or ():
                stale = copy.deepcopy(vm)
                for gpu in stale["spec"]["template"]["spec"]["domain"]["devices"]["gpus"]:
                    gpu["deviceName"] = STALE
                each(stale)
        return super().list(group, kind, namespace, labels, each)


def _report(tmp_path: Path, reader: SnapshotReader) -> str:
    repo, _ = demo_repo(tmp_path / "repo")
    desired = desired_from_repo(repo, "ams1")
    return render_report(audit(desired, Live(reader), now=0), "json")


def test_a_restarted_vm_list_counts_each_vm_as_last_handed_and_none_is_kept(
    tmp_path: Path,
) -> None:
    objects: list[dict[str, Any]] = demo_objects("ams1", None)
    empty = demo_empty("ams1")
    once = _report(tmp_path / "once", SnapshotReader(objects, empty))
    restarting = RestartingReader(objects, empty)
    twice = _report(tmp_path / "twice", restarting)
    assert twice == once
    assert STALE not in twice
    assert '"kind": "VirtualMachine"' in once  # the planted VM finding (train02)...
    assert '"tenant-root/render01"' in once  # ...and a VM depending on a hand-added device
    assert ("VirtualMachine", True) in restarting.lists
    assert ("VirtualMachine", False) not in restarting.lists  # streamed: never listed whole
