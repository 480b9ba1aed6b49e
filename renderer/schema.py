"""One typed model, two uses: decoding marked YAML into it, and the JSON Schema editors use.

Model classes are frozen dataclasses whose fields carry `spec(...)` metadata. Supported field
types: str, bool, int, Literal[...], list[T], dict[str, T], T | None, nested model classes, and a
union of scalars and one model class (`bool | Alerts`: `true`, or a mapping of settings). YAML
keys are the camelCase form of the field name unless `key=` says otherwise. A string field (or the
strings of a list or mapping field) may follow a `Syntax`: decoding runs its check, the schema
carries its pattern.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from collections.abc import Callable, Hashable
from dataclasses import MISSING, dataclass
from typing import Any, Literal, TypeVar, get_args, get_origin, get_type_hints

from kubedata.text import shorten
from kubedata.yaml_io import Marks, Path, nearest_line

from renderer.errors import Problem, ProfileError

__all__ = ["Syntax", "decode", "field_path", "json_schema", "spec", "yaml_key"]

T = TypeVar("T")


@dataclass(frozen=True)
class Syntax:
    """A grammar a string follows: the regular expression the JSON Schema carries (Python and
    ECMA-262 alike) and the check decoding runs: what is wrong and how to fix it, or None."""

    pattern: str
    check: Callable[[str], str | None]
    max_length: int | None = None

    @classmethod
    def regex(cls, pattern: str, hint: str) -> Syntax:
        """A grammar whose check is the pattern itself; `hint` follows the quoted value."""

        def check(value: str) -> str | None:
            return None if re.fullmatch(pattern, value) else f'"{shorten(value)}" {hint}'

        return cls(pattern, check)


@dataclass(frozen=True)
class _Meta:
    doc: str
    key: str | None
    syntax: Syntax | None


def spec(
    doc: str,
    *,
    default: Any = MISSING,
    factory: Any = MISSING,
    key: str | None = None,
    pattern: str | None = None,
    hint: str | None = None,
    syntax: Syntax | None = None,
) -> Any:
    """A model field: its documentation, default, YAML key and the grammar its strings follow
    (`syntax`, or a regex `pattern` with a fix `hint`)."""
    if pattern is not None:
        syntax = Syntax.regex(pattern, hint or f"does not match {pattern}")
    meta = {"gpu": _Meta(doc, key, syntax)}
    if factory is not MISSING:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def yaml_key(f: dataclasses.Field[Any]) -> str:
    meta: _Meta = f.metadata["gpu"]
    if meta.key:
        return meta.key
    head, *rest = f.name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def field_path(path: Path) -> str:
    """("spec", "devices", 1, "class") -> spec.devices[1].class"""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


_TYPE_NAMES = {str: "a string", bool: "true or false", int: "an integer"}


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        # at most the first line of the value, shortened: never a whole file read as one string
        return f'"{shorten(value)}" (a string)'
    return f"{shorten(repr(value))} ({type(value).__name__})"


def _close_matches(word: str, choices: list[str]) -> list[str]:
    """The closest of `choices` to a misspelt `word`, if any is close."""
    import difflib  # loaded only for a mistake: `validate` of a good profile starts without it

    return difflib.get_close_matches(word, choices, n=1, cutoff=0.6)


def _hints(cls: Any) -> dict[str, Any]:
    # Resolving string annotations is the slowest part of decoding; the model never changes.
    return _cached_hints(cls)


@functools.cache
def _cached_hints(cls: Hashable) -> dict[str, Any]:
    return get_type_hints(cls)


def _optional_inner(tp: Any) -> Any | None:
    if get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(get_args(tp)) == 2:
            return args[0]
    return None


def _union_members(tp: Any) -> tuple[Any, ...]:
    """The members of a union other than `T | None` (decoded by the type of the data)."""
    if get_origin(tp) in (typing.Union, types.UnionType) and _optional_inner(tp) is None:
        return get_args(tp)
    return ()


def _fits(member: Any, data: Any) -> bool:
    if dataclasses.is_dataclass(member):
        return isinstance(data, dict)
    return type(data) is member


def _member_name(member: Any) -> str:
    return "a mapping" if dataclasses.is_dataclass(member) else _TYPE_NAMES[member]


class _Decoder:
    def __init__(self, file: str, marks: Marks):
        self.file = file
        self.marks = marks
        self.problems: list[Problem] = []

    def line(self, path: Path) -> int:
        return nearest_line(self.marks, path, missing=0)

    def error(self, path: Path, message: str) -> None:
        self.problems.append(Problem(self.file, self.line(path), field_path(path), message))

    def value(self, tp: Any, data: Any, path: Path, meta: _Meta | None) -> Any:
        inner = _optional_inner(tp)
        if inner is not None:
            return None if data is None else self.value(inner, data, path, meta)
        members = _union_members(tp)
        if members:
            fitting = [m for m in members if _fits(m, data)]
            if fitting:
                return self.value(fitting[0], data, path, meta)
            names = " or ".join(map(_member_name, members))
            self.error(path, f"expected {names}, got {_describe(data)}")
            return None
        origin = get_origin(tp)
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return self.model(tp, data, path)
        if origin is Literal:
            choices = [str(c) for c in get_args(tp)]
            if data in get_args(tp):
                return data
            # suggest only for a misspelt scalar, not from the text of a list or mapping
            scalar = not isinstance(data, (list, dict))
            close = _close_matches(str(data), choices) if scalar else []
            tip = f'; did you mean "{close[0]}"?' if close else ""
            self.error(path, f"{_describe(data)} is not one of {', '.join(choices)}{tip}")
            return None
        if origin is list:
            if not isinstance(data, list):
                self.error(path, f"expected a list, got {_describe(data)}")
                return None
            (item,) = get_args(tp)
            return [self.value(item, v, (*path, i), meta) for i, v in enumerate(data)]
        if origin is dict:
            if not isinstance(data, dict):
                self.error(path, f"expected a mapping, got {_describe(data)}")
                return None
            _, item = get_args(tp)
            return {k: self.value(item, v, (*path, k), meta) for k, v in data.items()}
        if tp is Any:
            return data
        # bool is an int in Python: check exact scalar types.
        if type(data) is not tp:
            # YAML reads 1.6, 10, yes and 2024-01-01 as numbers, booleans and dates, not text.
            scalar = data is not None and not isinstance(data, (dict, list))
            quote = "; put it in quotes" if tp is str and scalar else ""
            self.error(
                path, f"expected {_TYPE_NAMES.get(tp, tp.__name__)}, got {_describe(data)}{quote}"
            )
            return None
        problem = meta.syntax.check(data) if meta and meta.syntax and tp is str else None
        if problem:
            self.error(path, problem)
        return data

    def model(self, cls: type[T], data: Any, path: Path) -> T | None:
        if not isinstance(data, dict):
            self.error(path, f"expected a mapping, got {_describe(data)}")
            return None
        fields = {yaml_key(f): f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        hints = _hints(cls)
        for key in data:
            if key not in fields:
                close = _close_matches(key, list(fields))
                tip = f'did you mean "{close[0]}"?' if close else f"known: {', '.join(fields)}"
                self.error((*path, key), f"unknown field; {tip}")
        kwargs: dict[str, Any] = {}
        for key, f in fields.items():
            if key in data:
                kwargs[f.name] = self.value(
                    hints[f.name], data[key], (*path, key), f.metadata["gpu"]
                )
            elif f.default is MISSING and f.default_factory is MISSING:
                self.error((*path, key), "required field is missing")
                kwargs[f.name] = None
        return cls(**kwargs)


def decode(cls: type[T], data: Any, file: str, marks: Marks) -> T:
    """Decode plain YAML data into `cls`; raise ProfileError listing every problem found."""
    decoder = _Decoder(file, marks)
    result = decoder.model(cls, data, ())
    if decoder.problems or result is None:
        raise ProfileError(sorted(decoder.problems, key=lambda p: p.line))
    return result


def _schema(tp: Any, defs: dict[str, Any], syntax: Syntax | None = None) -> dict[str, Any]:
    inner = _optional_inner(tp)
    if inner is not None:
        return {"anyOf": [_schema(inner, defs, syntax), {"type": "null"}]}
    members = _union_members(tp)
    if members:
        return {"anyOf": [_schema(m, defs, syntax) for m in members]}
    origin = get_origin(tp)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        name = tp.__name__
        if name not in defs:
            defs[name] = {}  # placeholder first: guards against recursion
            defs[name] = _model_schema(tp, defs)
        return {"$ref": f"#/$defs/{name}"}
    if origin is Literal:
        return {"enum": list(get_args(tp))}
    if origin is list:
        return {"type": "array", "items": _schema(get_args(tp)[0], defs, syntax)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _schema(get_args(tp)[1], defs, syntax)}
    if tp is Any:
        return {}
    out: dict[str, Any] = {"type": {str: "string", bool: "boolean", int: "integer"}[tp]}
    if syntax is not None and tp is str:
        out["pattern"] = f"^(?:{syntax.pattern})$"
        if syntax.max_length is not None:
            out["maxLength"] = syntax.max_length
    return out


def _model_schema(cls: Any, defs: dict[str, Any]) -> dict[str, Any]:
    hints = _hints(cls)
    props: dict[str, Any] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):
        meta: _Meta = f.metadata["gpu"]
        prop = _schema(hints[f.name], defs, meta.syntax)
        prop["description"] = meta.doc
        if f.default is not MISSING and not dataclasses.is_dataclass(f.default):
            prop["default"] = f.default
        if f.default is MISSING and f.default_factory is MISSING:
            required.append(yaml_key(f))
        props[yaml_key(f)] = prop
    out: dict[str, Any] = {"type": "object", "description": (cls.__doc__ or "").strip()}
    out["properties"] = props
    out["additionalProperties"] = False
    if required:
        out["required"] = required
    return out


def json_schema(cls: type[Any], schema_id: str) -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of a model class."""
    defs: dict[str, Any] = {}
    root = _model_schema(cls, defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": schema_id,
        **root,
        "$defs": dict(sorted(defs.items())),
    }
