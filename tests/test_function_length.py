"""No function in the packages is longer than 80 lines: a longer one holds several steps, and
each step wants a name of its own."""

from __future__ import annotations

import ast

from tests.conftest import REPO_ROOT

PACKAGES = ("kubedata", "renderer", "prbot", "audit", "gpu_gitops")
MAX_LINES = 80


def long_functions() -> list[str]:
    """`path:line name (N lines)` of every function or method over MAX_LINES, decorators and
    docstring included."""
    out = []
    for package in PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                    length = (node.end_lineno or node.lineno) - first + 1
                    if length > MAX_LINES:
                        where = path.relative_to(REPO_ROOT)
                        out.append(f"{where}:{node.lineno} {node.name} ({length} lines)")
    return out


def test_no_function_is_over_80_lines() -> None:
    assert long_functions() == []


def test_the_walk_sees_every_package() -> None:
    # the check above passes vacuously if it reads nothing: every package has a function
    for package in PACKAGES:
        files = list((REPO_ROOT / package).rglob("*.py"))
        assert any(
            isinstance(n, ast.FunctionDef) for f in files for n in ast.walk(ast.parse(f.read_text()))
        ), package
