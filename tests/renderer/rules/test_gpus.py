"""Architecture inference: the PCI-id lookup agrees with the pattern the JSON Schema carries."""

from __future__ import annotations

import re

import pytest

from renderer.model import Device
from renderer.rules.gpus import ARCHITECTURES, PCI_DEVICES, architecture_patterns
from renderer.rules.gpus import inferred_architecture as inferred

_UNKNOWN = ["10DE:0000", "10DE:FFFF", "8086:15F0", "1002:26B1"]


def _device(pci: str, resource: str = "example.com/gpu") -> Device:
    return Device(class_="gpu", resource_name=resource, pci_vendor_selector=pci)


def _by_pattern(pci: str) -> str | None:
    """What the schema's patterns say, architecture by architecture (as validate once did)."""
    hits = [a for a in ARCHITECTURES if re.search(architecture_patterns({a})[0], pci)]
    assert len(hits) <= 1, (pci, hits)
    return hits[0] if hits else None


@pytest.mark.parametrize("case", [str.upper, str.lower, lambda s: s[:5] + s[5:].lower()])
def test_every_pci_id_gets_the_architecture_its_pattern_gives(case):
    ids = [case(key) for key in PCI_DEVICES] + _UNKNOWN
    for pci in ids:
        found = inferred(_device(pci))
        assert (found.architecture if found else None) == _by_pattern(pci), pci
    assert sum(_by_pattern(pci) is not None for pci in ids) >= 135  # the whole table is known


def test_a_known_id_says_which_board_and_chip_it_is():
    found = inferred(_device("10de:26b9"))
    assert found is not None
    chip, board = PCI_DEVICES["10DE:26B9"]
    assert (found.architecture, found.source) == ("ada", f"10de:26b9 is the {board}, chip {chip}")


def test_an_unknown_id_falls_through_to_the_resource_name():
    found = inferred(_device("10DE:0000", "nvidia.com/GA102GL"))
    assert found is not None
    assert found.architecture == "ampere"
    assert found.source.startswith("resource nvidia.com/GA102GL")
