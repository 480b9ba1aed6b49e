"""The defaults and list types of every released version of the CRDs the auditor knows, and which
of them hold for the versions a cluster may run.

Why this exists: the API server fills in the defaults of the CRD version the cluster serves, and
those change between releases (GPU Operator v25.3.0 added `driver.kernelModuleType: auto`,
v26.3.0 dropped `migManager.config.name`'s default). crd_tables.json, generated from the upstream
CRDs by gen_crd_tables.py, says per entry which releases it holds in; this module answers "what
does version V default here" and "what do all these candidate versions agree on". Pure: the file
is package data, read once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from kubedata.diff import ListRule

from audit.compare.patterns import Pattern

__all__ = ["TABLES_FILE", "KindTable", "kind_table", "known_kinds", "normal_version"]

TABLES_FILE = Path(__file__).with_name("crd_tables.json")


@dataclass(frozen=True)
class Entry:
    path: Pattern
    value: Any
    """A default's value, or the ListRule of a list entry."""
    versions: frozenset[str]


@dataclass(frozen=True)
class KindTable:
    """One kind's table: its product, the releases that serve it, and its entries."""

    group: str
    kind: str
    product: str
    crd: str
    releases: tuple[str, ...]
    """Every release of the product in the tables, oldest first."""
    versions: frozenset[str]
    """The releases whose CRDs define this kind."""
    defaults: tuple[Entry, ...]
    lists: tuple[Entry, ...]

    def span(self, versions: Iterable[str]) -> str:
        """`v24.3.0..v26.7.0`-style names of these releases, in release order."""
        held = set(versions)
        runs: list[list[str]] = []
        for release in self.releases:
            if release in held and runs and runs[-1][-1] == self._before(release):
                runs[-1].append(release)
            elif release in held:
                runs.append([release])
        return ", ".join(r[0] if len(r) == 1 else f"{r[0]}..{r[-1]}" for r in runs)

    def _before(self, release: str) -> str:
        i = self.releases.index(release)
        return self.releases[i - 1] if i else ""

    @property
    def uniform(self) -> bool:
        """Whether every release of the kind's CRD has the same defaults and list types."""
        return all(e.versions == self.versions for e in (*self.defaults, *self.lists))

    def agreed_defaults(self, candidates: frozenset[str]) -> list[tuple[Entry, bool]]:
        """Each default of some candidate version, and whether every candidate has it."""
        return [(e, candidates <= e.versions) for e in self.defaults if e.versions & candidates]

    def agreed_lists(self, candidates: frozenset[str]) -> dict[Pattern, ListRule]:
        """List rules every candidate version marks alike."""
        return {e.path: e.value for e in self.lists if candidates <= e.versions}


def _expand(runs: Sequence[str], releases: Sequence[str]) -> frozenset[str]:
    out: set[str] = set()
    for run in runs:
        first, _, last = run.partition("..")
        i = releases.index(first)
        j = releases.index(last) if last else i
        out.update(releases[i : j + 1])
    return frozenset(out)


def _rule(entry: dict[str, Any]) -> ListRule:
    if entry["type"] == "map":
        return ListRule(keys=tuple(entry["keys"]), atomic=False, ordered=False)
    if entry["type"] == "set":
        return ListRule(keys=None, atomic=False, ordered=False)
    return ListRule(keys=None, atomic=True, ordered=True)


@cache
def _tables() -> dict[tuple[str, str], KindTable]:
    data = json.loads(TABLES_FILE.read_text(encoding="utf-8"))
    out: dict[tuple[str, str], KindTable] = {}
    for key, table in data["kinds"].items():
        group, _, kind = key.partition("/")
        releases = tuple(data["products"][table["product"]]["versions"])
        out[(group, kind)] = KindTable(
            group=group,
            kind=kind,
            product=table["product"],
            crd=table["crd"],
            releases=releases,
            versions=_expand(table["versions"], releases),
            defaults=tuple(
                Entry(tuple(e["path"]), e["value"], _expand(e["versions"], releases))
                for e in table["defaults"]
            ),
            lists=tuple(
                Entry(tuple(e["path"]), _rule(e), _expand(e["versions"], releases))
                for e in table["lists"]
            ),
        )
    return out


def kind_table(group: str, kind: str) -> KindTable | None:
    return _tables().get((group, kind))


def known_kinds() -> list[tuple[str, str]]:
    return sorted(_tables())


def normal_version(text: str) -> str:
    """`25.3.2`, `v25.3.2` -> `v25.3.2` (chart versions are spelt both ways)."""
    text = text.strip()
    return text if text.startswith("v") else f"v{text}"
