"""The JSON Schema editors use: the model's shape, plus every rule of DESIGN §4 that JSON Schema
can say (if/then on the platform and variant, the device tables, the inferred architecture).

A rule the schema cannot say is listed in NOT_EXPRESSIBLE with the reason; the test that runs a
corpus of profiles through `validate` and through this schema holds the two to the same verdict.
Warnings are not in the schema: editors flag what `validate` refuses, nothing else.
"""

from __future__ import annotations

from typing import Any

from renderer.model import GPUProfile
from renderer.rules.gpus import ARCHITECTURES, architecture_patterns
from renderer.rules.syntax import DNS_SUBDOMAIN, LABEL_KEY, LABEL_VALUE, either_case
from renderer.schema import json_schema
from renderer.values.cozystack import SUPPORTED_VERSIONS
from renderer.values.defaults import PASSTHROUGH_DEFAULTS, VGPU_MDEV_DEFAULTS

__all__ = ["NOT_EXPRESSIBLE", "SCHEMA_ID", "profile_schema"]

NOT_EXPRESSIBLE = {
    "duplicate": "a field repeated across list items (pciVendorSelector case-insensitively, "
    "mdevNameSelector): uniqueItems compares whole items only",
    "folder": "metadata.name must equal the folder name: the schema sees the document, not "
    "its path",
    "platform.yaml": "the platform Package in platform.yaml (its presence and its values) is "
    "another file",
    "file": "the file itself (size, encoding, YAML syntax, anchors, duplicate keys, documents) "
    "comes before there is a JSON document to validate",
    "cron-range": "a cron range whose start is after its end: not a regular language in practice",
    "image-name-length": "the 255-character limit on an image's repository name alone",
}
"""Why a rule `validate` enforces is not in the schema, by kind."""

SCHEMA_ID = "https://gpu-gitops.dev/schemas/gpu-profile-v1alpha1.json"
_STRING = {"type": "string"}
_BEFORE_1_9 = r"^(?:0+\.[0-9]+|0*1\.0*[0-8])$"
"""A KubeVirt minor version below 1.9 (versions are compared as integers)."""


def _is(**props: Any) -> dict[str, Any]:
    """An object with these properties present, each matching its schema."""
    return {"type": "object", "required": sorted(props), "properties": props}


def _written(field: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """`field` is written as a string (null counts as unwritten, as in decoding)."""
    return _is(**{field: {**_STRING, **(schema or {})}})


def _not(schema: dict[str, Any]) -> dict[str, Any]:
    return {"not": schema}


def _architecture_in(archs: set[str]) -> dict[str, Any]:
    """A device whose architecture, written or inferred (renderer/rules/gpus.py), is in `archs`."""
    pci, resource, mdev = architecture_patterns(archs)
    any_pci, any_resource, _ = architecture_patterns(set(ARCHITECTURES))
    no_pci = _not(_written("pciVendorSelector", {"pattern": any_pci}))
    no_resource = _not(_written("resourceName", {"pattern": any_resource}))
    return {
        "anyOf": [
            _written("architecture", {"enum": sorted(archs)}),
            {
                "allOf": [_not(_written("architecture"))],
                "anyOf": [
                    _written("pciVendorSelector", {"pattern": pci}),
                    {"allOf": [no_pci, _written("resourceName", {"pattern": resource})]},
                    {
                        "allOf": [no_pci, no_resource],
                        **_written("mdevNameSelector", {"pattern": mdev}),
                    },
                ],
            },
        ]
    }


def _is_nested(path: tuple[str, ...], schema: dict[str, Any]) -> dict[str, Any]:
    """The field at `path`, where written, satisfies `schema` (absent fields pass)."""
    out: dict[str, Any] = schema
    for key in reversed(path):
        out = {"type": "object", "properties": {key: out}}
    return out


def _devices(item: dict[str, Any]) -> dict[str, Any]:
    """Every device satisfies `item`."""
    return {"type": "object", "properties": {"devices": {"type": "array", "items": item}}}


_COZYSTACK = _is(platform={"properties": {"type": {"const": "cozystack"}}})
_FLUX = _is(platform={"properties": {"type": {"const": "flux"}}})
_VARIANT = {v: _is(variant={"const": v}) for v in ("passthrough", "vgpu", "container", "none")}
_DEVICE_MANAGER = _is(vgpu=_is(deviceManager={"const": True}))


def _spec_rules() -> list[dict[str, Any]]:
    """Every rule the schema can say, in DESIGN §4 order of kind."""
    return [*_device_table_rules(), *_variant_rules(), *_vgpu_rules(), *_other_rules()]


def _device_table_rules() -> list[dict[str, Any]]:
    """One selector per device, node names, the Cozystack version and default tables."""
    cozystack, variant, device_manager = _COZYSTACK, _VARIANT, _DEVICE_MANAGER
    not_replacing = _not(_is(replaceDefaults={"const": True}))
    defaults_pci = "|".join(either_case(d["pciVendorSelector"]) for d in PASSTHROUGH_DEFAULTS)
    return [
        # rule 5: one selector per device
        _devices(
            {
                "anyOf": [_written("pciVendorSelector"), _written("mdevNameSelector")],
                "not": {"allOf": [_written("pciVendorSelector"), _written("mdevNameSelector")]},
            }
        ),
        # rule 9: node names
        {
            "type": "object",
            "properties": {
                "nodes": {
                    "type": "object",
                    "propertyNames": {**_STRING, "pattern": f"^(?:{DNS_SUBDOMAIN})$"},
                }
            },
        },
        # Cozystack: a supported version; no plain-Flux-only fields
        {
            "if": cozystack,
            "then": {
                "type": "object",
                "properties": {
                    "platform": _is(version={"enum": list(SUPPORTED_VERSIONS)}),
                    "kubevirt": False,
                    "gpuOperatorVersion": False,
                },
            },
        },
        # rule 5: Cozystack's default tables are not repeated
        {
            "if": {"allOf": [cozystack, variant["passthrough"], not_replacing]},
            "then": _devices(
                {
                    "properties": {
                        "pciVendorSelector": _not({**_STRING, "pattern": f"^(?:{defaults_pci})$"})
                    }
                }
            ),
        },
        {
            "if": {"allOf": [cozystack, variant["vgpu"], device_manager, not_replacing]},
            "then": _devices(
                {
                    "properties": {
                        "mdevNameSelector": {
                            "not": {"enum": [d["mdevNameSelector"] for d in VGPU_MDEV_DEFAULTS]}
                        }
                    }
                }
            ),
        },
    ]


def _variant_rules() -> list[dict[str, Any]]:
    """A node labelled for the other VM variant gets nothing."""
    variant = _VARIANT
    return [
        # rule 1: a node labelled for the other VM variant gets nothing
        {
            "if": variant["passthrough"],
            "then": {
                "properties": {"nodes": {"additionalProperties": {"not": {"const": "vm-vgpu"}}}}
            },
        },
        {
            "if": variant["vgpu"],
            "then": {
                "properties": {
                    "nodes": {"additionalProperties": {"not": {"const": "vm-passthrough"}}}
                }
            },
        },
    ]


def _vgpu_rules() -> list[dict[str, Any]]:
    """The vGPU Manager image, the Device Manager's architectures, SR-IOV vGPU's KubeVirt."""
    cozystack, flux, variant, device_manager = _COZYSTACK, _FLUX, _VARIANT, _DEVICE_MANAGER
    kubevirt_before_1_9 = {
        "anyOf": [
            _not(_is(kubevirt={})),
            _is(
                kubevirt={
                    "anyOf": [
                        _not(_is(version={})),
                        _is(version={"pattern": _BEFORE_1_9}),
                    ]
                }
            ),
        ]
    }
    return [
        # rule 7: the vGPU Manager image is the user's
        {
            "if": variant["vgpu"],
            "then": _is(
                vgpu=_is(
                    manager=_is(
                        repository={**_STRING, "minLength": 1}, version={**_STRING, "minLength": 1}
                    )
                )
            ),
        },
        # rule 7: the Device Manager on Pascal..Ampere only
        {
            "if": {"allOf": [variant["vgpu"], device_manager]},
            "then": _devices(_not(_architecture_in({"hopper", "ada", "blackwell"}))),
        },
        # rule 7: SR-IOV vGPU on Ada/Blackwell needs KubeVirt >= 1.9 (Cozystack ships 1.8.4)
        {
            "if": {
                "allOf": [
                    variant["vgpu"],
                    {"anyOf": [cozystack, {"allOf": [flux, kubevirt_before_1_9]}]},
                ]
            },
            "then": _devices(
                _not(
                    {
                        "allOf": [
                            _written("pciVendorSelector"),
                            _architecture_in({"ada", "blackwell"}),
                        ]
                    }
                )
            ),
        },
    ]


def _other_rules() -> list[dict[str, Any]]:
    """One creator of mdev types, HAMi's needs, the licensing ConfigMap, the audit image."""
    cozystack, flux, variant, device_manager = _COZYSTACK, _FLUX, _VARIANT, _DEVICE_MANAGER
    mdev_types = {"type": "array", "minItems": 1}
    kubevirt_creates = {
        "allOf": [_not(_is(enabled={"const": False}))],
        "anyOf": [
            _is(mediatedDeviceTypes=mdev_types),
            _is(mediatedDevicesTypes=mdev_types),
            _is(
                nodeMediatedDeviceTypes={
                    "type": "array",
                    "contains": {
                        "anyOf": [
                            _is(mediatedDeviceTypes=mdev_types),
                            _is(mediatedDevicesTypes=mdev_types),
                        ]
                    },
                }
            ),
        ],
    }
    return [
        # mdev types have one creator
        {
            "if": {"allOf": [variant["vgpu"], device_manager]},
            "then": {
                "type": "object",
                "properties": {"mediatedDevicesConfiguration": _not(kubevirt_creates)},
            },
        },
        # rule 8: HAMi needs the GPU Operator, and not next to Cozystack's container variant
        {
            "if": variant["none"],
            "then": {"type": "object", "properties": {"hami": {"const": False}}},
        },
        {
            "if": {"allOf": [cozystack, variant["container"]]},
            "then": {"type": "object", "properties": {"hami": {"const": False}}},
        },
        # the deprecated licensing ConfigMap is used only where the GPU Operator runs the driver
        {
            "if": _not({"allOf": [flux, variant["container"]]}),
            "then": _is_nested(("vgpu", "licensing", "configMapName"), {"maxLength": 0}),
        },
    ]


_TYPE_OF_KEYWORD = {
    **dict.fromkeys(("properties", "required", "propertyNames", "additionalProperties"), "object"),
    **dict.fromkeys(("items", "contains", "minItems"), "array"),
    **dict.fromkeys(("pattern", "minLength", "maxLength"), "string"),
}


def _typed(schema: Any) -> Any:
    """Each subschema names the type its keywords apply to, as ajv's strict mode asks. The model
    part of the schema checks every type already, so this changes no verdict."""
    if isinstance(schema, list):
        return [_typed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: (
            v
            if k in ("enum", "const", "required")
            else {name: _typed(sub) for name, sub in v.items()}
            if k == "properties"
            else _typed(v)
        )
        for k, v in schema.items()
    }
    if "type" not in out:
        types = {t for k, t in _TYPE_OF_KEYWORD.items() if k in out}
        if len(types) == 1:
            out = {"type": types.pop(), **out}
    return out


def profile_schema(schema_id: str = SCHEMA_ID) -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of gpu-profile.yaml: the model and the expressible rules."""
    schema = json_schema(GPUProfile, schema_id)
    schema["$defs"]["ProfileSpec"]["allOf"] = _typed(_spec_rules())
    # the PrometheusRule's labels, as the API server takes them (rules/checks.py _alert_labels)
    labels = schema["$defs"]["AuditAlerts"]["properties"]["labels"]
    labels["propertyNames"] = {"type": "string", "pattern": f"^(?:{LABEL_KEY})$"}
    labels["additionalProperties"] = {"type": "string", "pattern": f"^(?:{LABEL_VALUE})$"}
    return schema
