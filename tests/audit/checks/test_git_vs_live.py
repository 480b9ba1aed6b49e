"""The git comparison with its compare worker gives the report it gives without one, against the
test API server, with lists that restart midway (410) and batches compared on both sides."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import httpx
import pytest

import audit.checks.git_vs_live as git_vs_live
from audit.compare.worker import Worker
from audit.kube.api import KubeApi
from audit.kube.kubeconfig import ClusterConfig
from audit.report import render_report
from audit.run import audit
from audit.sources.desired import Desired
from audit.sources.live import ApiReader, Live
from audit.sources.packed import PackedObjects
from benchmarks.bench_audit import world
from tests.apiserver import Store
from tests.audit.kube.test_api import HookTransport


def _report(token_config: ClusterConfig, store: Store, desired: list[dict[str, Any]]) -> str:
    """The JSON report of an audit whose lists come in pages of 40, and whose first continued
    list expires once, so it restarts and hands its first pages again."""
    compacted: list[str] = []

    def compact_once(request: httpx.Request) -> None:
        if "continue" in request.url.params and not compacted:
            compacted.append(request.url.path)
            store.compact()

    transport = HookTransport(token_config, compact_once)
    with KubeApi(token_config, transport=transport) as api:
        api.list = functools.partial(api.list, limit=40)  # type: ignore[method-assign]
        state = Desired("ams1", "rendered-tip", "rendered@sha1:" + "0" * 40, PackedObjects(desired))
        result = audit(state, Live(ApiReader(api)), now=0)
        assert api.restarts == 1 and compacted
    assert result.complete
    return render_report(result, "json")


def test_the_worker_changes_nothing_but_who_compares(
    token_config: ClusterConfig, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    live, desired = world(1100, 0.2)
    store.put_all(live)
    without = _report(token_config, store, desired)

    sent: list[int] = []
    send = Worker.send

    def counted(self: Worker, pairs: list[Any]) -> Any:
        sent.append(len(pairs))
        return send(self, pairs)

    monkeypatch.setattr(Worker, "send", counted)
    # the worker seen busy every other batch: those are compared here
    flips = itertools.cycle((True, False))
    monkeypatch.setattr(Worker, "busy", property(lambda self: next(flips)))
    monkeypatch.setattr(git_vs_live, "WORKER_MIN", 1)
    monkeypatch.setattr(git_vs_live, "BATCH", 7)
    with_worker = _report(token_config, store, desired)

    assert with_worker == without
    assert len(sent) > 10 and sum(sent) > 100  # the worker compared many pairs...
    assert without.count('"type": "modified"') > 50  # ...of a drifted cluster
