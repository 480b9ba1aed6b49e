"""No function in the packages is longer than 80 lines: a longer one holds several steps, and
each step wants a name of its own."""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterable
from pathlib import Path

from tests.conftest import REPO_ROOT

_PROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
PACKAGES: list[str] = _PROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
"""Every package the project ships, as pyproject.toml lists them."""
MAX_LINES = 80


def long_functions(files: Iterable[Path]) -> list[str]:
    """`path:line name (N lines)` of every function or method over MAX_LINES, decorators and
    docstring included."""
    out = []
    for path in files:
        functions = [
            node
            for node in ast.walk(ast.parse(path.read_text(), str(path)))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        for node in sorted(functions, key=lambda n: n.lineno):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - first + 1
            if length > MAX_LINES:
                out.append(f"{path.name}:{node.lineno} {node.name} ({length} lines)")
    return out


def test_no_function_is_over_80_lines() -> None:
    files = [f for p in PACKAGES for f in sorted((REPO_ROOT / p).rglob("*.py"))]
    assert {"kubedata", "renderer", "prbot", "audit", "gpu_gitops"} <= set(PACKAGES)
    assert len({f.parts[len(REPO_ROOT.parts)] for f in files}) == len(PACKAGES)
    assert long_functions(files) == []


def test_the_check_counts_every_line_of_nested_and_decorated_functions(tmp_path: Path) -> None:
    body, deeper = ("".join(f"{pad}x{i} = {i}\n" for i in range(78)) for pad in ("    ", " " * 8))
    doc = '    """doc"""\n'
    source = (
        f"def fits():\n{doc}{body}"  # 80 lines
        f"@staticmethod\ndef decorated():\n{doc}{body}"  # 81 with its decorator
        f"class C:\n    def method(self):\n{deeper}{deeper}"  # 157
        f"async def outer():\n    def inner():\n{deeper}{deeper}"
    )
    (tmp_path / "m.py").write_text(source)
    assert long_functions([tmp_path / "m.py"]) == [
        "m.py:82 decorated (81 lines)",
        "m.py:163 method (157 lines)",
        "m.py:320 outer (158 lines)",
        "m.py:321 inner (157 lines)",
    ]
