"""The audit's compare step (normalize, canonical-JSON fast path, keyed differ) next to DeepDiff.

    python -m benchmarks.bench_audit_compare [--pairs 2000] [--drift 0.1]

Pairs are live/desired objects shaped like an audit's: the demo's KubeVirt CR (against its release
manifest), its Packages, and Deployments with keyed lists; most pairs differ only by noise
(server metadata, defaults, equal quantities, reordered keyed lists), a `--drift` share by a real
change. Figures from one run, side by side:
- ours: normalize both sides, fast path, differ where needed;
- DeepDiff over the same normalized pairs (ignore_order=False, then True as some auditors use);
- differ vs DeepDiff on only the pairs that differ (what the differ replaces).
"""

from __future__ import annotations

import argparse
import copy
import random
import time
from pathlib import Path
from typing import Any

from deepdiff import DeepDiff

from audit.compare.normalize import normalize
from audit.compare.pairs import compare_normalized, compare_objects
from audit.kube.snapshot import load_snapshot
from audit.sources.helm_release import load_releases

__all__ = ["main"]

DEMO = Path(__file__).resolve().parent.parent / "audit" / "demo" / "snapshots" / "ams1"


def _deployment(i: int, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    containers = [
        {
            "name": f"c{j}",
            "image": f"registry.example.com/app{j}:1.{i % 7}",
            "env": [{"name": f"E{k}", "value": str(k)} for k in range(6)],
            "ports": [{"containerPort": 8000 + j}],
            "resources": {"limits": {"memory": "1Gi", "cpu": "0.5"}},
        }
        for j in range(3)
    ]
    desired: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"app{i}", "namespace": "bench", "labels": {"app": f"app{i}"}},
        "spec": {"replicas": 2, "template": {"spec": {"containers": containers}}},
    }
    live = copy.deepcopy(desired)
    meta = live["metadata"]
    meta.update(
        uid=f"u{i}", resourceVersion=str(i), generation=3, creationTimestamp="2026-01-01T00:00:00Z"
    )
    meta["annotations"] = {"deployment.kubernetes.io/revision": "4"}
    spec = live["spec"]
    spec.update(progressDeadlineSeconds=600, revisionHistoryLimit=10)
    pod = spec["template"]["spec"]
    pod.update(dnsPolicy="ClusterFirst", restartPolicy="Always", schedulerName="default-scheduler")
    for c in pod["containers"]:
        c["resources"]["limits"] = {"memory": "1073741824", "cpu": "500m"}
        c["ports"][0]["protocol"] = "TCP"
        c.update(terminationMessagePath="/dev/termination-log", terminationMessagePolicy="File")
    rng.shuffle(pod["containers"])
    live["status"] = {"replicas": 2, "readyReplicas": 2}
    return desired, live


def pairs(n: int, drift: float, seed: int = 7) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    rng = random.Random(seed)
    objects = load_snapshot(DEMO)
    kv_live = copy.deepcopy(next(o for o in objects if o["kind"] == "KubeVirt"))
    released = {r.name: r for r in load_releases(objects)}
    kv_desired = copy.deepcopy(released["kubevirt"].objects[0])
    # the demo's live CR minus its planted drift: what is left is noise
    config = kv_live["spec"]["configuration"]
    config["permittedHostDevices"] = copy.deepcopy(
        kv_desired["spec"]["configuration"]["permittedHostDevices"]
    )
    del config["developerConfiguration"]["logVerbosity"]
    out = []
    for i in range(n):
        if i % 3 == 0:
            desired, live = copy.deepcopy(kv_desired), copy.deepcopy(kv_live)
        else:
            desired, live = _deployment(i, rng)
        if rng.random() < drift:
            if live["kind"] == "KubeVirt":
                live["spec"]["configuration"]["permittedHostDevices"]["pciHostDevices"].append(
                    {"pciVendorSelector": "10DE:FFFF", "resourceName": "nvidia.com/X"}
                )
            else:
                live["spec"]["template"]["spec"]["containers"][0]["image"] = "evil:latest"
        out.append((desired, live))
    return out


def _time(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--drift", type=float, default=0.1)
    args = parser.parse_args(argv)
    data = pairs(args.pairs, args.drift)
    normalized = [(normalize(d), normalize(lv)) for d, lv in data]
    differing = [
        (d, lv)
        for d, lv in normalized
        if any(c.kind != "reordered" for c in compare_normalized(d, lv))
    ]

    ours = _time(lambda: [compare_objects(d, lv) for d, lv in data])
    dd = _time(lambda: [DeepDiff(d, lv) for d, lv in normalized])
    dd_unordered = _time(lambda: [DeepDiff(d, lv, ignore_order=True) for d, lv in normalized])
    differ = _time(lambda: [compare_normalized(d, lv) for d, lv in differing])
    dd_differing = _time(lambda: [DeepDiff(d, lv, ignore_order=True) for d, lv in differing])

    n = len(data)
    print(f"{n} pairs, {len(differing)} with drift after normalization (the rest: noise)")
    print(f"ours (normalize + fast path + differ): {ours:7.3f} s  {ours / n * 1e3:6.3f} ms/pair")
    print(f"DeepDiff on normalized pairs:          {dd:7.3f} s  x{dd / ours:5.1f} ours")
    print(
        f"DeepDiff ignore_order=True:            {dd_unordered:7.3f} s  x{dd_unordered / ours:5.1f}"
    )
    if differing:
        k = len(differing)
        print(
            f"differing pairs only: differ {differ / k * 1e3:.3f} ms/pair, DeepDiff(ignore_order) "
            f"{dd_differing / k * 1e3:.3f} ms/pair, ratio x{dd_differing / max(differ, 1e-9):.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
