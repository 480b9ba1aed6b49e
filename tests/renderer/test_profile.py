"""Loading clusters/<name>/gpu-profile.yaml (and platform.yaml): line marks and exact messages."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import jsonschema
import pytest

from kubedata.yaml_io import load_marked
from renderer.errors import Problem, ProfileError
from renderer.profile import (
    MAX_FILE_BYTES,
    check_cluster_name,
    discover_clusters,
    load_profile,
    parse_profile,
)
from renderer.repofiles import LINK_REFUSED
from renderer.rules.profile_schema import profile_schema
from tests.conftest import REPO_ROOT
from tests.renderer.profile_texts import HEAD, PLATFORM_OK
from tests.renderer.profile_texts import write_cluster as write

FILE = "clusters/c1/gpu-profile.yaml"
PLATFORM = "clusters/c1/platform.yaml"

GOOD = """\
apiVersion: gpu-gitops/v1alpha1
kind: GPUProfile
metadata:
  name: c1
spec:
  platform:
    type: flux
  variant: passthrough
  devices:
    - class: L40S
      pciVendorSelector: "10DE:26B9"
      resourceName: nvidia.com/AD102GL_L40S
      architecture: ada
  nodes:
    gpu-1: vm-passthrough
"""


def errors(root: Path, name: str = "c1") -> list[str]:
    with pytest.raises(ProfileError) as info:
        load_profile(root, name)
    return [str(p) for p in info.value.problems]


# --- loading and line marks ----------------------------------------------------------------------


def test_loads_profile_with_line_marks(tmp_path):
    lp = load_profile(write(tmp_path, GOOD), "c1")
    assert lp.name == "c1"
    assert lp.file == FILE
    assert lp.platform is None
    spec = lp.profile.spec
    assert spec.platform.type == "flux"
    assert spec.devices[0].class_ == "L40S"
    assert spec.devices[0].pci_vendor_selector == "10DE:26B9"
    assert spec.devices[0].external_resource_provider is True  # default
    assert spec.nodes == {"gpu-1": "vm-passthrough"}
    assert lp.line("metadata", "name") == 4
    assert lp.line("spec", "platform", "type") == 7
    assert lp.line("spec", "variant") == 8
    assert lp.line("spec", "devices", 0) == 10
    assert lp.line("spec", "devices", 0, "pciVendorSelector") == 11
    assert lp.line("spec", "devices", 0, "architecture") == 13
    assert lp.line("spec", "nodes", "gpu-1") == 15
    # an unwritten field takes the line of its nearest written ancestor
    assert lp.line("spec", "devices", 0, "externalResourceProvider") == 10
    assert lp.line("spec", "flux", "interval") == 5
    assert lp.written("spec", "devices", 0, "class")
    assert not lp.written("spec", "flux")


def test_defaults_of_unwritten_fields(tmp_path):
    spec = load_profile(write(tmp_path, GOOD), "c1").profile.spec
    assert spec.flux.interval == "10m"
    assert spec.flux.drift_detection == "enabled"
    assert spec.flux.branch == "rendered"
    assert spec.kubevirt.version == "1.8"
    assert spec.vgpu.manager.image == "vgpu-manager"
    assert spec.replace_defaults is False
    assert spec.hami is False
    assert spec.audit is None


def test_marks_of_flow_style_and_sequences():
    data, marks = load_marked("a:\n  b: [x,\n     y]\n  c: {d: 1,\n      e: 2}\n", "f")
    assert data == {"a": {"b": ["x", "y"], "c": {"d": 1, "e": 2}}}
    assert marks[("a",)] == 1
    assert marks[("a", "b", 0)] == 2
    assert marks[("a", "b", 1)] == 3
    assert marks[("a", "c", "e")] == 5


def test_every_example_cluster_loads():
    names = discover_clusters(REPO_ROOT)
    assert len(names) >= 5
    for name in names:
        lp = load_profile(REPO_ROOT, name)
        assert lp.name == name


def test_discover_clusters_sorted_and_only_folders_with_a_profile(tmp_path):
    write(tmp_path, GOOD.replace("c1", "zz9"), name="zz9")
    write(tmp_path, GOOD)
    (tmp_path / "clusters" / "empty").mkdir()
    (tmp_path / "clusters" / "notes.yaml").write_text("x: 1\n")
    assert discover_clusters(tmp_path) == ["c1", "zz9"]
    assert discover_clusters(tmp_path / "nowhere") == []


def test_platform_file_is_loaded_with_marks(tmp_path):
    lp = load_profile(write(tmp_path, GOOD, platform=PLATFORM_OK), "c1")
    assert lp.platform is not None
    assert lp.platform.file == PLATFORM
    assert lp.platform.obj["spec"]["variant"] == "isp-full"
    bundles = ("spec", "components", "platform", "values", "bundles")
    assert lp.platform.marks[(*bundles, "enabledPackages")] == 11


# --- field errors --------------------------------------------------------------------------------


def test_unknown_field_did_you_mean(tmp_path):
    text = HEAD + "  platform: {type: flux}\n  variant: passthrough\n  replaceDefault: true\n"
    assert errors(write(tmp_path, text)) == [
        f'{FILE}:8: error: spec.replaceDefault: unknown field; did you mean "replaceDefaults"?'
    ]


def test_unknown_field_without_close_match_lists_known_fields(tmp_path):
    text = HEAD.replace("  name: c1\n", "  name: c1\n  labels: {}\n") + (
        "  platform: {type: flux}\n  variant: none\n"
    )
    assert errors(write(tmp_path, text)) == [
        f"{FILE}:5: error: metadata.labels: unknown field; known: name"
    ]


def test_unknown_nested_field_and_missing_required_are_both_reported(tmp_path):
    text = HEAD + "  platform: {type: flux}\n  varient: passthrough\n"
    assert errors(write(tmp_path, text)) == [
        f"{FILE}:5: error: spec.variant: required field is missing",
        f'{FILE}:7: error: spec.varient: unknown field; did you mean "variant"?',
    ]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            '  platform: {type: flux}\n  variant: none\n  hami: "true"\n',
            'spec.hami: expected true or false, got "true" (a string)',
            id="bool-as-string",
        ),
        pytest.param(
            "  platform: {type: cozystack, version: 1.6}\n  variant: none\n",
            "spec.platform.version: expected a string, got 1.6 (float); put it in quotes",
            id="version-as-float",
        ),
        pytest.param(
            "  platform: {type: flux}\n  variant: none\n  flux: {interval: 10}\n",
            "spec.flux.interval: expected a string, got 10 (int); put it in quotes",
            id="interval-as-int",
        ),
        pytest.param(
            "  platform: {type: flux}\n  variant: none\n  vgpu: {manager: {version: 2024-01-01}}\n",
            "spec.vgpu.manager.version: expected a string, "
            "got datetime.date(2024, 1, 1) (date); put it in quotes",
            id="date-as-string",
        ),
        pytest.param(
            "  platform: {type: flux}\n  variant: none\n  devices: {a: 1}\n",
            "spec.devices: expected a list, got a mapping",
            id="list-as-mapping",
        ),
        pytest.param(
            "  platform: {type: flux}\n  variant: none\n  nodes: [gpu-1]\n",
            "spec.nodes: expected a mapping, got a list",
            id="mapping-as-list",
        ),
        pytest.param(
            "  platform: flux\n  variant: none\n",
            'spec.platform: expected a mapping, got "flux" (a string)',
            id="model-as-string",
        ),
        pytest.param(
            "  platform: {type: flux}\n  variant: none\n"
            "  vgpu: {manager: {imagePullSecrets: [{name: x}]}}\n",
            "spec.vgpu.manager.imagePullSecrets[0]: expected a string, got a mapping",
            id="list-item-type",
        ),
        pytest.param(
            "  platform: {type: flux}\n  variant: none\n  hami: ~\n",
            "spec.hami: expected true or false, got nothing (null)",
            id="null-for-bool",
        ),
    ],
)
def test_wrong_types(tmp_path, body, expected):
    problems = errors(write(tmp_path, HEAD + body))
    assert len(problems) == 1
    assert problems[0].split(": error: ", 1)[1] == expected


def test_enum_did_you_mean(tmp_path):
    text = HEAD + "  platform: {type: flux}\n  variant: passtrough\n"
    assert errors(write(tmp_path, text)) == [
        f'{FILE}:7: error: spec.variant: "passtrough" (a string) is not one of passthrough, vgpu, '
        'container, none; did you mean "passthrough"?'
    ]


def test_enum_without_close_match(tmp_path):
    text = HEAD + "  platform: {type: kubernetes}\n  variant: none\n"
    assert errors(write(tmp_path, text)) == [
        f'{FILE}:6: error: spec.platform.type: "kubernetes" (a string) '
        "is not one of cozystack, flux"
    ]


def test_enum_in_mapping_values(tmp_path):
    text = (
        HEAD
        + "  platform: {type: flux}\n  variant: passthrough\n  nodes:\n    gpu-1: vm-passtrough\n"
    )
    assert errors(write(tmp_path, text)) == [
        f'{FILE}:9: error: spec.nodes.gpu-1: "vm-passtrough" (a string) is not one of container, '
        'vm-passthrough, vm-vgpu; did you mean "vm-passthrough"?'
    ]


def test_missing_required_fields(tmp_path):
    text = "kind: GPUProfile\nmetadata: {}\nspec:\n  devices:\n    - class: x\n"
    assert errors(write(tmp_path, text)) == [
        f"{FILE}:1: error: apiVersion: required field is missing",
        f"{FILE}:2: error: metadata.name: required field is missing",
        f"{FILE}:3: error: spec.platform: required field is missing",
        f"{FILE}:3: error: spec.variant: required field is missing",
        f"{FILE}:5: error: spec.devices[0].resourceName: required field is missing",
    ]


def test_wrong_api_version_and_kind(tmp_path):
    text = HEAD.replace("v1alpha1", "v1").replace("GPUProfile", "GpuProfile") + (
        "  platform: {type: flux}\n  variant: none\n"
    )
    assert errors(write(tmp_path, text)) == [
        f'{FILE}:1: error: apiVersion: "gpu-gitops/v1" (a string) is not one of '
        'gpu-gitops/v1alpha1; did you mean "gpu-gitops/v1alpha1"?',
        f'{FILE}:2: error: kind: "GpuProfile" (a string) is not one of GPUProfile; '
        'did you mean "GPUProfile"?',
    ]


def test_pattern_with_fix_hint(tmp_path):
    text = HEAD + "  platform: {type: flux}\n  variant: none\n  flux:\n    interval: 10 minutes\n"
    assert errors(write(tmp_path, text)) == [
        f'{FILE}:9: error: spec.flux.interval: "10 minutes" is not a Go duration, e.g. "10m"'
    ]


def test_folder_name_mismatch(tmp_path):
    text = GOOD.replace("name: c1", "name: c2")
    assert errors(write(tmp_path, text)) == [
        f'{FILE}:4: error: metadata.name: "c2" must equal the folder name "c1"; rename one of them'
    ]


def test_metadata_name_not_a_dns_label(tmp_path):
    text = GOOD.replace("name: c1", "name: C1")
    assert errors(write(tmp_path, text)) == [
        f'{FILE}:4: error: metadata.name: "C1" is not a DNS-1123 label; use lower-case '
        "letters, digits and '-', at most 63"
    ]


def test_parse_profile_without_folder_skips_the_name_check():
    profile, marks = parse_profile(GOOD.replace("name: c1", "name: other"), "x.yaml", None)
    assert profile.metadata.name == "other"
    assert marks[("metadata", "name")] == 4


# --- YAML-level errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("\n\n   \n", id="blank-lines"),
        pytest.param("# only a comment\n", id="comment-only"),
        pytest.param("---\n...\n", id="empty-document"),
        pytest.param("~\n", id="null-document"),
    ],
)
def test_empty_file(tmp_path, text):
    assert errors(write(tmp_path, text)) == [
        f"{FILE}: error: the file is empty; it must hold one document"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            HEAD + "  platform: {type: flux\n  variant: passthrough\n",
            "7: error: YAML syntax error: did not find expected ',' or '}' "
            "(while parsing a flow mapping that starts on line 6)",
            id="unclosed-flow-mapping",
        ),
        pytest.param(
            HEAD + "  platform:\n    type: flux\n   variant: passthrough\n",
            "8: error: YAML syntax error: did not find expected key "
            "(while parsing a block mapping that starts on line 6)",
            id="bad-indent",
        ),
        pytest.param(
            HEAD + "  platform:\n\ttype: flux\n",
            "7: error: YAML syntax error: found character that cannot start any token",
            id="tab-indent",
        ),
        pytest.param(
            HEAD + '  platform: {type: flux}\n  variant: "passthrough\n',
            "8: error: YAML syntax error: found unexpected end of stream "
            "(while scanning a quoted scalar that starts on line 7)",
            id="unclosed-quote",
        ),
        pytest.param(
            HEAD + "  platform: type: flux\n",
            "6: error: YAML syntax error: mapping values are not allowed in this context",
            id="colon-in-plain-scalar",
        ),
        pytest.param(
            HEAD + "  platform: {type: flux}\n  variant: @none\n",
            "7: error: YAML syntax error: found character that cannot start any token",
            id="reserved-indicator",
        ),
        pytest.param(
            HEAD + "  platform: {type: flux}\n  variant: *none\n",
            "7: error: YAML syntax error: found undefined alias",
            id="undefined-alias",
        ),
        pytest.param(
            HEAD + "  platform: {type: flux}\n  variant: none\x07\n",
            "7: error: YAML syntax error: unacceptable character #x0007: "
            "control characters are not allowed",
            id="control-character",
        ),
        pytest.param(
            "a: " + "[" * 2000 + "]" * 2000 + "\n",
            "1: error: YAML syntax error: exceeded maximum nesting depth",
            id="deep-nesting",
        ),
    ],
)
def test_yaml_syntax_errors_name_the_line(tmp_path, text, expected):
    problems = errors(write(tmp_path, text))
    assert len(problems) == 1
    assert problems[0] == f"{FILE}:{expected}"


def test_non_ascii_text_before_an_error_keeps_the_line_right(tmp_path):
    # libyaml counts bytes: the line must still be the third, not shifted by the accents
    text = HEAD + "  # Zürich, Genève, Malmö\n  platform: {type: flux}\n  variant: x\x01\n"
    assert errors(write(tmp_path, text)) == [
        f"{FILE}:8: error: YAML syntax error: unacceptable character #x0001: "
        "control characters are not allowed"
    ]


def _bomb(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_quickly(tmp_path):
    write(tmp_path, _bomb())
    start = time.perf_counter()
    problems = errors(tmp_path)
    assert time.perf_counter() - start < 1.0
    assert problems == [
        f"{FILE}:1: error: YAML anchors and aliases are not allowed; write the value out"
    ]


def test_any_alias_is_refused(tmp_path):
    text = HEAD + "  platform: &p {type: flux}\n  variant: none\n  kubevirt: *p\n"
    assert errors(write(tmp_path, text)) == [
        f"{FILE}:6: error: YAML anchors and aliases are not allowed; write the value out"
    ]


def test_merge_key_is_refused(tmp_path):
    text = HEAD + "  platform: {type: flux}\n  variant: none\n  flux:\n    <<: {interval: 5m}\n"
    assert errors(write(tmp_path, text)) == [
        f"{FILE}:9: error: YAML merge keys (<<) are not allowed"
    ]


def test_oversized_file_is_refused(tmp_path):
    text = GOOD + "#" * MAX_FILE_BYTES + "\n"
    size = len(text.encode())
    assert errors(write(tmp_path, text)) == [
        f"{FILE}: error: file is {size} bytes, over the 262144 limit"
    ]


def test_endless_file_behind_a_symlink_is_refused(tmp_path):
    folder = tmp_path / "clusters" / "c1"
    folder.mkdir(parents=True)
    (folder / "gpu-profile.yaml").symlink_to("/dev/zero")
    assert errors(tmp_path) == [f"{FILE}: error: {LINK_REFUSED}"]


def test_fifo_in_place_of_the_profile_is_refused_without_blocking(tmp_path):
    folder = tmp_path / "clusters" / "c1"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "gpu-profile.yaml")
    assert errors(tmp_path) == [f"{FILE}: error: not a regular file; it must be YAML text"]


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        pytest.param(
            HEAD + "  platform: {type: flux}\n  variant: none\n  variant: vgpu\n",
            8,
            "variant",
            id="same-level",
        ),
        pytest.param(
            HEAD + "  platform: {type: flux, type: cozystack}\n  variant: none\n",
            6,
            "type",
            id="flow-mapping",
        ),
        pytest.param(
            HEAD + '  platform: {type: flux}\n  variant: none\n  "variant": vgpu\n',
            8,
            "variant",
            id="quoted-key",
        ),
    ],
)
def test_duplicate_keys(tmp_path, text, line, key):
    assert errors(write(tmp_path, text)) == [
        f'{FILE}:{line}: error: duplicate key "{key}"; keep one of them'
    ]


def test_non_utf8_file(tmp_path):
    text = GOOD.encode().replace(b"L40S", b"L40S \xff\xfe")
    assert errors(write(tmp_path, text)) == [f"{FILE}: error: not UTF-8 text"]


def test_utf8_byte_order_mark_is_accepted(tmp_path):
    assert load_profile(write(tmp_path, "\ufeff" + GOOD), "c1").name == "c1"


def test_multiple_documents(tmp_path):
    assert errors(write(tmp_path, GOOD + "---\nfoo: bar\n")) == [
        f"{FILE}:17: error: more than one YAML document; keep one"
    ]


@pytest.mark.parametrize(
    ("value", "tag"),
    [
        pytest.param("!!python/name:os.system x", "!!python/name:os.system", id="python-tag"),
        pytest.param("!custom x", "!custom", id="local-tag"),
        pytest.param("!!int passthrough", "!!int", id="bad-int"),
    ],
)
def test_tags_are_refused(tmp_path, value, tag):
    text = HEAD + f"  platform: {{type: flux}}\n  variant: {value}\n"
    assert errors(write(tmp_path, text)) == [
        f'{FILE}:7: error: cannot read the value tagged "{tag}"; remove the tag'
    ]


@pytest.mark.parametrize(
    ("value", "tag"),
    [
        pytest.param(
            "!!python/object/apply:os.system [id]",
            "!!python/object/apply:os.system",
            id="python-sequence",
        ),
        pytest.param("!!set {a, b}", "!!set", id="set"),
        pytest.param("!!omap [a: 1]", "!!omap", id="omap"),
        pytest.param("!thing {a: 1}", "!thing", id="local-mapping"),
    ],
)
def test_tagged_collections_are_refused(tmp_path, value, tag):
    text = HEAD + f"  platform: {{type: flux}}\n  variant: none\n  kubevirt: {value}\n"
    assert errors(write(tmp_path, text)) == [
        f'{FILE}:8: error: cannot read the value tagged "{tag}"; remove the tag'
    ]


def test_complex_mapping_keys_are_refused(tmp_path):
    assert errors(write(tmp_path, "? [a, b]\n: 1\n")) == [
        f"{FILE}:1: error: mapping keys must be plain strings"
    ]


@pytest.mark.parametrize(
    ("text", "got"),
    [
        pytest.param("- a\n- b\n", "a list", id="list"),
        pytest.param("just text\n", '"just text" (a string)', id="scalar"),
    ],
)
def test_top_level_must_be_a_mapping(tmp_path, text, got):
    assert errors(write(tmp_path, text)) == [f"{FILE}:1: error: expected a mapping, got {got}"]


def test_file_not_found(tmp_path):
    (tmp_path / "clusters" / "c1").mkdir(parents=True)
    assert errors(tmp_path) == [f"{FILE}: error: file not found"]


def test_profile_that_is_a_directory(tmp_path):
    (tmp_path / "clusters" / "c1" / "gpu-profile.yaml").mkdir(parents=True)
    assert errors(tmp_path) == [f"{FILE}: error: cannot read: Is a directory"]


# --- cluster names -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../x", "..", "a/b", "Foo", "-a", "a" * 64, "", "a b"])
def test_cluster_names_that_are_not_dns_labels(name):
    with pytest.raises(ProfileError) as info:
        check_cluster_name(name)
    assert str(info.value) == (
        f'--cluster: error: "{name}" is not a cluster name: use a DNS-1123 label, e.g. "ams1"'
    )


def test_load_profile_refuses_path_like_names(tmp_path):
    write(tmp_path, GOOD)
    assert errors(tmp_path, "../c1") == [
        '--cluster: error: "../c1" is not a cluster name: use a DNS-1123 label, e.g. "ams1"'
    ]


def test_badly_named_folder_is_named_by_its_path(tmp_path):
    write(tmp_path, GOOD, name="Bad_Name")
    assert errors(tmp_path, "Bad_Name") == [
        'clusters/Bad_Name/: error: "Bad_Name" is not a cluster name: use a DNS-1123 label, '
        'e.g. "ams1"'
    ]


# --- platform.yaml -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        pytest.param(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: platform}\n",
            [
                f'{PLATFORM}:1: error: apiVersion: must be "cozystack.io/v1alpha1"',
                f'{PLATFORM}:2: error: kind: must be "Package"',
                f'{PLATFORM}:3: error: metadata.name: must be "cozystack.cozystack-platform"',
            ],
            id="not-a-package",
        ),
        pytest.param(
            "- a\n",
            [
                f"{PLATFORM}:1: error: must be the platform Package (kubectl get "
                "packages.cozystack.io cozystack.cozystack-platform -o yaml), a mapping"
            ],
            id="list",
        ),
        pytest.param(
            PLATFORM_OK.replace("  variant: isp-full\n  components:", "  components: []\n  x:"),
            [f"{PLATFORM}:6: error: spec.components: must be a mapping"],
            id="components-list",
        ),
        pytest.param(
            PLATFORM_OK.replace("      values:\n", "      values: null\n").replace(
                "        bundles:\n          enabledPackages: [cozystack.external-dns]\n", ""
            ),
            [f"{PLATFORM}:9: error: spec.components.platform.values: must be a mapping"],
            id="values-null",
        ),
        pytest.param(
            PLATFORM_OK.replace("[cozystack.external-dns]", "cozystack.external-dns"),
            [
                f"{PLATFORM}:11: error: spec.components.platform.values.bundles."
                "enabledPackages: must be a list of package names"
            ],
            id="enabled-packages-string",
        ),
        pytest.param(
            PLATFORM_OK.replace("enabledPackages: [cozystack.external-dns]", "iaas: true"),
            [
                f"{PLATFORM}:11: error: spec.components.platform.values.bundles.iaas: "
                "must be a mapping"
            ],
            id="iaas-bool",
        ),
        pytest.param(
            PLATFORM_OK.replace("variant: isp-full", "variant: [isp-full]"),
            [f"{PLATFORM}:6: error: spec.variant: must be a string, e.g. isp-full"],
            id="variant-list",
        ),
        pytest.param(
            PLATFORM_OK.replace(PLATFORM_OK.splitlines()[3], "  []"),
            [f"{PLATFORM}:3: error: metadata: must be a mapping"],
            id="metadata-list",
        ),
        pytest.param(
            PLATFORM_OK.replace("kind: Package", "kind: Package\nkind: Package"),
            [f'{PLATFORM}:3: error: duplicate key "kind"; keep one of them'],
            id="duplicate-key",
        ),
    ],
)
def test_platform_file_errors(tmp_path, platform, expected):
    text = GOOD.replace("type: flux", "type: cozystack\n    version: '1.6'")
    assert errors(write(tmp_path, text, platform=platform)) == expected


def test_platform_file_without_spec_is_accepted(tmp_path):
    minimal = "apiVersion: cozystack.io/v1alpha1\nkind: Package\n"
    minimal += "metadata:\n  name: cozystack.cozystack-platform\n"
    lp = load_profile(write(tmp_path, GOOD, platform=minimal), "c1")
    assert lp.platform is not None
    assert "spec" not in lp.platform.obj


# --- JSON Schema: generated from the same model ---------------------------------------------------


def test_schema_accepts_every_example_and_rejects_what_decoding_rejects(tmp_path):
    schema = profile_schema("https://example.test/schema.json")
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for name in discover_clusters(REPO_ROOT):
        data, _ = load_marked(
            (REPO_ROOT / "clusters" / name / "gpu-profile.yaml").read_text(), name
        )
        assert list(validator.iter_errors(data)) == []
    data, _ = load_marked(GOOD, "x")
    bad = json.loads(json.dumps(data))
    bad["spec"]["variant"] = "passtrough"
    bad["spec"]["devices"][0]["pciVendorSelector"] = "10DE2BB5"
    bad["spec"]["replaceDefault"] = True
    messages = sorted(e.message for e in validator.iter_errors(bad))
    assert len(messages) == 3


def test_examples_folder_is_untouched_by_loading(tmp_path):
    # loading reads only: copy an example, load it, and compare bytes
    shutil.copytree(REPO_ROOT / "clusters" / "ams1", tmp_path / "clusters" / "ams1")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    load_profile(tmp_path, "ams1")
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_problem_text_format():
    assert str(Problem("f.yaml", 3, "spec.x", "bad", "warning")) == "f.yaml:3: warning: spec.x: bad"
    assert str(Problem("f.yaml", 0, "", "bad")) == "f.yaml: error: bad"
