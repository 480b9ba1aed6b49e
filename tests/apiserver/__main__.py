"""Run the test server by hand.

    python -m tests.apiserver [--objects DIR] [--bulk N]

Serves the CRDs of tests/data/crds and the objects under DIR. Prints the URL and writes a
kubeconfig (token auth) to $TMPDIR/apiserver.kubeconfig, then serves until interrupted (Ctrl-C or
SIGTERM); then prints to stderr what it served: `served N requests, B body bytes`.
`--bulk N` adds N ConfigMaps in namespace `bulk` (for list benchmarks).
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path

from tests.apiserver import ApiServer, Store
from tests.apiserver.crds import load_crds, load_objects


def bulk_configmaps(count: int) -> list[dict[str, object]]:
    objects: list[dict[str, object]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bulk"}}
    ]
    for i in range(count):
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": f"cm-{i:06d}",
                    "namespace": "bulk",
                    "labels": {"app": f"app-{i % 10}", "tier": "bench"},
                    "annotations": {"example.com/owner": "bench"},
                },
                "data": {f"key{j}": f"value-{i}-{j}" * 4 for j in range(8)},
            }
        )
    return objects


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.apiserver")
    parser.add_argument("--objects", type=Path)
    parser.add_argument("--bulk", type=int, default=0)
    parser.add_argument(
        "--kubeconfig", type=Path, default=Path(tempfile.gettempdir(), "apiserver.kubeconfig")
    )
    args = parser.parse_args(argv)
    store = Store()
    store.put_all(load_crds())
    if args.objects:
        store.put_all(load_objects(args.objects))
    if args.bulk:
        store.put_all(bulk_configmaps(args.bulk), manager="bench")
    with ApiServer(store) as server:
        server.add_token("dev-token", "developer", ("system:masters",))
        server.kubeconfig(args.kubeconfig, token="dev-token")
        print(server.url, args.kubeconfig, flush=True)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
        print(
            f"served {len(server.requests)} requests, {sum(server.sent)} body bytes",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
