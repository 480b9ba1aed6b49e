"""Profile edits keep comments, key order, quoting, blank lines and anchors: only changed lines
differ (checked as whole diffs against a profile full of comments)."""

from __future__ import annotations

import difflib
import random

import pytest
import yaml

from adopt.errors import AdoptError
from adopt.yamledit import Edit, apply_edits
from kubedata.yaml_scalars import same_data
from tests.kubedata.test_yaml_scalars import _random_string, _random_value, read_back

COMMENTED = """\
# Lab: plain Flux + KubeVirt 1.8.
# Second line of the header.
apiVersion: gpu-gitops/v1alpha1
kind: GPUProfile
metadata:
  name: lab1   # must equal the folder name

spec:
  platform:
    type: flux
  variant: passthrough   # one per cluster
  # The GPU classes, rack by rack.
  devices: &gpus
    - class: RTX PRO 6000 Blackwell Server Edition
      pciVendorSelector: "10DE:2BB5"   # server edition
      resourceName: 'nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_SERVER_EDITION'
      architecture: blackwell
    # L40S cards on the second rack
    - class: L40S
      pciVendorSelector: "10DE:26B9"
      resourceName: nvidia.com/AD102GL_L40S

  nodes:
    lab-gpu-1: vm-passthrough   # rack 1
    lab-gpu-2: vm-passthrough
  # Flux settings follow.
  flux:
    interval: 5m
    url: ssh://git@git.example.com/platform/gitops.git
  kubevirt:
    version: "1.8"
    featureGates: [LiveMigration, CPUManager]
# end of profile
"""

NEW_DEVICE = {
    "class": "RTX PRO 6000 Workstation",
    "pciVendorSelector": "10DE:2BB1",
    "resourceName": "nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_WORKSTATION_EDITION",
    "externalResourceProvider": True,
}


def diff(before: str, after: str) -> list[str]:
    """Changed lines only, as +/- lines (no context, no headers)."""
    return [
        line.rstrip("\n")
        for line in difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_appended_device_lands_after_the_last_item_and_before_its_blank_line():
    after = apply_edits(
        COMMENTED, [Edit("append", ("spec", "devices"), NEW_DEVICE, "pciVendorSelector")], "f"
    )
    assert diff(COMMENTED, after) == [
        "+    - class: RTX PRO 6000 Workstation",
        '+      pciVendorSelector: "10DE:2BB1"',  # quoted like its siblings
        "+      resourceName: nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_WORKSTATION_EDITION",
        "+      externalResourceProvider: true",
    ]
    lines = after.splitlines()
    at = lines.index("      externalResourceProvider: true")
    assert lines[at + 1 : at + 3] == ["", "  nodes:"]  # the blank line stays below the list
    assert "  devices: &gpus" in lines  # an anchor nothing refers to is kept


def test_set_replaces_one_value_and_keeps_its_comment_and_the_next_comment_line():
    edits = [
        Edit("set", ("spec", "nodes", "lab-gpu-1"), "container"),
        Edit("set", ("spec", "nodes", "lab-gpu-3"), "vm-vgpu"),
    ]
    after = apply_edits(COMMENTED, edits, "f")
    assert diff(COMMENTED, after) == [
        "-    lab-gpu-1: vm-passthrough   # rack 1",
        "+    lab-gpu-1: container        # rack 1",  # the comment keeps its column
        "+    lab-gpu-3: vm-vgpu",
    ]
    lines = after.splitlines()
    assert lines[lines.index("    lab-gpu-3: vm-vgpu") + 1] == "  # Flux settings follow."


def test_flow_list_append_new_mapping_and_quoting_of_a_version():
    edits = [
        Edit("append", ("spec", "kubevirt", "featureGates"), "Snapshot"),
        Edit("set", ("spec", "kubevirt", "version"), "1.9"),
        Edit("set", ("spec", "vgpu", "manager", "version"), "550.144.02"),
        Edit("set", ("spec", "hami"), True),
    ]
    after = apply_edits(COMMENTED, edits, "f")
    assert diff(COMMENTED, after) == [
        '-    version: "1.8"',
        "-    featureGates: [LiveMigration, CPUManager]",
        '+    version: "1.9"',
        "+    featureGates: [LiveMigration, CPUManager, Snapshot]",
        "+  vgpu:",
        "+    manager:",
        "+      version: 550.144.02",
        "+  hami: true",
    ]
    assert after.endswith("  hami: true\n# end of profile\n")
    assert yaml.safe_load(after)["spec"]["vgpu"]["manager"]["version"] == "550.144.02"


def test_remove_and_delete_take_only_their_lines():
    edits = [
        Edit(
            "remove", ("spec", "devices"), {"pciVendorSelector": "10DE:26B9"}, "pciVendorSelector"
        ),
        Edit("delete", ("spec", "nodes", "lab-gpu-2")),
    ]
    after = apply_edits(COMMENTED, edits, "f")
    assert diff(COMMENTED, after) == [
        "-    - class: L40S",
        '-      pciVendorSelector: "10DE:26B9"',
        "-      resourceName: nvidia.com/AD102GL_L40S",
        "-    lab-gpu-2: vm-passthrough",
    ]
    assert "  # Flux settings follow." in after.splitlines()


def test_edits_that_change_nothing_return_the_text_unchanged():
    same = [
        Edit("append", ("spec", "kubevirt", "featureGates"), "CPUManager"),
        Edit("set", ("spec", "nodes", "lab-gpu-2"), "vm-passthrough"),
        Edit("delete", ("spec", "hami")),
        Edit(
            "append",
            ("spec", "devices"),
            {"class": "other name", "pciVendorSelector": "10DE:26B9"},
            "pciVendorSelector",
        ),
    ]
    assert apply_edits(COMMENTED, same, "f") is COMMENTED


def test_an_empty_flow_mapping_becomes_a_block_when_it_gets_entries():
    text = "spec:\n  nodes: {}\n  hami: false\n"
    after = apply_edits(text, [Edit("set", ("spec", "nodes", "gpu-1"), "container")], "f")
    assert after == "spec:\n  nodes:\n    gpu-1: container\n  hami: false\n"


def test_bad_documents_and_paths_are_one_line_errors():
    with pytest.raises(
        AdoptError, match=r"^f: not YAML that can be edited \(.*\); edit it by hand$"
    ):
        apply_edits("spec: [unclosed\n", [Edit("set", ("spec",), 1)], "f")
    with pytest.raises(AdoptError, match=r"^f: spec.variant.x is not where"):
        apply_edits(COMMENTED, [Edit("set", ("spec", "variant", "x", "y"), 1)], "f")


def test_every_value_set_reads_back_as_the_live_value_type_included() -> None:
    """Random keys and values (the strings YAML 1.1 or 1.2 would read as something else among
    them), set, appended and nested, read back equal by PyYAML and by a YAML 1.2 reader."""
    rng = random.Random(2)
    for i in range(150):
        value = _random_value(rng)
        key = _random_string(rng) or "k"
        edits = [
            Edit("set", ("spec", "values", f"v{i}"), value),
            Edit("set", ("spec", "nodes", key), _random_string(rng)),
            Edit("append", ("spec", "list"), {"name": f"n{i}", "value": value}, "name"),
        ]
        text = apply_edits(COMMENTED, edits, "p.yaml")
        for doc in read_back(text):
            assert same_data(doc["spec"]["values"][f"v{i}"], value), text
            assert same_data(doc["spec"]["nodes"][key], edits[1].value)
            assert same_data(doc["spec"]["list"][-1], edits[2].value)


@pytest.mark.parametrize("live", ["on", "1:20", "NO", "Off", "0x1F", "1e3", "~", "", "null", "y"])
def test_a_live_string_is_quoted_where_it_would_change_meaning(live: str) -> None:
    out = apply_edits(COMMENTED, [Edit("set", ("spec", "nodes", "lab-gpu-2"), live)], "p.yaml")
    assert f'    lab-gpu-2: "{live}"\n' in out
    assert yaml.safe_load(out)["spec"]["nodes"]["lab-gpu-2"] == live
