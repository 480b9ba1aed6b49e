"""Run every benchmark: `python -m benchmarks [--small]`.

Each prints its figure next to a baseline measured in the same run. --small is the smoke size CI
uses so the commands cannot rot; the README's table comes from a full-size run.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# (module, full-size args, smoke args)
BENCHMARKS: list[tuple[str, list[str], list[str]]] = [
    ("benchmarks.bench_startup", [], ["--runs", "1"]),
    ("benchmarks.bench_render", [], ["--clusters", "10", "--baseline-sample", "2"]),
    ("benchmarks.bench_diff", [], ["--clusters", "10", "--changed", "2"]),
    ("benchmarks.bench_publish", [], ["--clusters", "5"]),
    ("benchmarks.bench_check", [], ["--clusters", "5", "--rounds", "1"]),
    ("benchmarks.bench_audit_compare", [], ["--pairs", "30"]),
    (
        "benchmarks.bench_audit",
        [],
        ["--objects", "200", "--baseline-sample", "40", "--repeat", "1"],
    ),
    ("benchmarks.bench_audit_job", [], ["--objects", "200,400", "--clusters", "ams1"]),
    (
        "benchmarks.bench_fleet",
        [],
        ["--clusters", "20", "--findings", "10", "--changed", "2", "--rounds", "1"],
    ),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--small", action="store_true", help="tiny inputs (smoke run)")
    args = parser.parse_args(argv)
    for module, full, small in BENCHMARKS:
        print(f"== {module}", flush=True)
        status: int = importlib.import_module(module).main(small if args.small else full)
        if status:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
