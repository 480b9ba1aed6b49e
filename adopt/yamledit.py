"""Edits a human would make to a YAML file: comments, key order, quoting, blank lines, anchors and
indentation kept, so only the lines that change differ.

ruamel.yaml's round-trip loader keeps comments and styles on the nodes it loads. Two things it does
not do on its own are done here: it ties the comment and blank lines that follow an entry to that
entry, so an item appended after it would land below them (they are moved to the new last entry),
and it drops anchors nothing refers to (they are kept). A new value takes the quoting of its
sibling (a new device's `pciVendorSelector` is quoted like the others), and a string that a YAML
1.1 or 1.2 reader would take for something else (`on`, `1:20`, `1e3`) is double-quoted, key or
value (kubedata.yaml_scalars). What is written is read back before it is returned: every value set
must load (with the project's YAML loader) equal to the live value, type included. Pure: text in,
text out.
"""

from __future__ import annotations

import io
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from kubedata.yaml_io import load_all
from kubedata.yaml_scalars import escaped_only, float_text, plain_is_string, same_data
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedBase, CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark, YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString
from ruamel.yaml.tokens import CommentToken

from adopt.errors import AdoptError

__all__ = ["Edit", "apply_edits"]

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Edit:
    """One change to a YAML document, addressed by mapping keys (and list indices) from its root.

    set: the value at `path` (missing mappings on the way are created); delete: the key at `path`
    (nothing if absent); append: `value` to the list at `path` (created if missing) unless an item
    with the same `match` field (the same value, without `match`) is there; remove: the items of
    the list at `path` whose `match` field equals `value[match]` (that equal `value`, without it).
    """

    op: Literal["set", "delete", "append", "remove"]
    path: Path
    value: Any = None
    match: str | None = None

    def __str__(self) -> str:
        where = ".".join(str(p) for p in self.path)
        shown = self.value.get(self.match) if self.match and isinstance(self.value, dict) else None
        what = shown if shown is not None else self.value
        return {
            "set": f"{where} = {_show(what)}",
            "delete": f"{where} removed",
            "append": f"{where} += {_show(what)}",
            "remove": f"{where} -= {_show(what)}",
        }[self.op]


def _show(value: Any) -> str:
    # a string that would read as something else is shown quoted: `= "on"`, not `= on`
    readable = isinstance(value, str) and value.isprintable() and value.strip() == value
    if readable and plain_is_string(value):
        return str(value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


_BLOCK_KEY = re.compile(r"^( *)[^ #\-][^#]*:\s*(#.*)?$")
_ITEM = re.compile(r"^( *)- +")
_KEY = re.compile(r"^( *)[^ #\-]")


def _indents(text: str) -> tuple[int, int, int]:
    """(mapping indent, sequence indent, dash offset) as the file has them (else 2, 4, 2)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    mapping = offset = seq_content = None
    for above, below in itertools.pairwise(lines):
        opener = _BLOCK_KEY.match(above)
        if opener is None:
            continue
        base = len(opener.group(1))
        item = _ITEM.match(below)
        if item is not None and offset is None:
            offset = len(item.group(1)) - base
            seq_content = len(item.group(0)) - base
        elif (
            item is None
            and mapping is None
            and (key := _KEY.match(below))
            and len(key.group(1)) > base
        ):
            mapping = len(key.group(1)) - base
    mapping = mapping or 2
    offset = offset if offset is not None else 2
    return mapping, seq_content or offset + 2, offset


def _yaml(text: str) -> YAML:
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap a long line
    mapping, sequence, offset = _indents(text)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    yaml.representer.add_representer(float, _represent_float)
    return yaml


def _represent_float(representer: Any, value: float) -> Any:
    # ruamel writes 1e+20, which YAML 1.1 reads as a string
    return representer.represent_scalar("tag:yaml.org,2002:float", float_text(value))


def _keep_anchors(node: Any) -> None:
    if isinstance(node, CommentedBase):
        anchor = node.yaml_anchor()
        if anchor is not None and anchor.value:
            anchor.always_dump = True
    if isinstance(node, CommentedMap):
        for value in node.values():
            _keep_anchors(value)
    elif isinstance(node, CommentedSeq):
        for value in node:
            _keep_anchors(value)


# -- comment lines that follow the last entry of a container -----------------------------------


def _last_slot(node: Any) -> tuple[CommentedMap | CommentedSeq, str | int] | None:
    """Where ruamel keeps the lines that follow `node`: on its deepest last entry."""
    if isinstance(node, CommentedMap) and node:
        key = list(node)[-1]
        inner = _last_slot(node[key])
        return inner or (node, key)
    if isinstance(node, CommentedSeq) and node:
        inner = _last_slot(node[-1])
        return inner or (node, len(node) - 1)
    return None


def _take_trailing(node: Any) -> str:
    """Detach the comment and blank lines after `node` (its end-of-line comment stays)."""
    slot = _last_slot(node)
    if slot is None:
        return ""
    container, key = slot
    index = 2 if isinstance(container, CommentedMap) else 0
    entry = container.ca.items.get(key)
    token = entry[index] if entry and len(entry) > index else None
    if not isinstance(token, CommentToken):
        return ""
    head, _, rest = str(token.value).partition("\n")
    if not rest:
        return ""
    if head.strip():
        token.value = head + "\n"
    else:
        entry[index] = None
    return rest


def _give_trailing(node: Any, rest: str) -> None:
    """Attach comment and blank lines after `node`'s last line."""
    slot = _last_slot(node)
    if not rest or slot is None:
        return
    container, key = slot
    index = 2 if isinstance(container, CommentedMap) else 0
    entry = container.ca.items.setdefault(key, [None, None, None, None])
    token = entry[index]
    if isinstance(token, CommentToken):
        token.value = str(token.value).rstrip("\n") + "\n" + rest
    else:
        entry[index] = CommentToken("\n" + rest, CommentMark(0), None)


# -- values ------------------------------------------------------------------------------------


def _styled(value: Any, like: Any = None) -> Any:
    """A new string quoted as the value it replaces or sits next to; double-quoted where any
    other style would change what it reads as."""
    if not isinstance(value, str):
        return value
    if escaped_only(value):
        return DoubleQuotedScalarString(value)
    if isinstance(like, DoubleQuotedScalarString | SingleQuotedScalarString):
        return type(like)(value)
    return value if plain_is_string(value) else DoubleQuotedScalarString(value)


def _new(value: Any, like: Any = None) -> Any:
    """Plain data as ruamel nodes in block style, quoted like `like` where it has the same keys."""
    if isinstance(value, dict):
        out = CommentedMap()
        for k, v in value.items():
            sibling = like.get(k) if isinstance(like, dict) else None
            out[_styled(k)] = _new(v, sibling)
        return out
    if isinstance(value, list):
        return CommentedSeq(_new(v) for v in value)
    return _styled(value, like)


def _block(node: Any) -> None:
    """An empty flow container (`nodes: {}`) that gets entries is written as a block."""
    if isinstance(node, CommentedMap | CommentedSeq) and not node:
        node.fa.set_block_style()


def _walk(doc: Any, path: Path, create: bool, file: str) -> Any:
    node = doc
    for i, key in enumerate(path):
        if isinstance(node, CommentedMap) and isinstance(key, str):
            if key not in node:
                if not create:
                    return None
                _put(node, key, CommentedMap())
            node = node[key]
        elif isinstance(node, CommentedSeq) and isinstance(key, int) and 0 <= key < len(node):
            node = node[key]
        else:
            where = ".".join(str(p) for p in path[: i + 1])
            raise AdoptError(f"{file}: {where} is not where the profile can take this value")
    return node


def _put(mapping: CommentedMap, key: str, value: Any) -> None:
    """Set a key; a new key goes last, below the entry that was last, before its trailing lines."""
    if key in mapping:
        mapping[key] = _new(value, mapping[key])
        return
    _block(mapping)
    rest = _take_trailing(mapping)
    mapping[_styled(key)] = _new(value)
    _give_trailing(mapping, rest)


def _matches(item: Any, value: Any, match: str | None) -> bool:
    if match is None:
        return bool(item == value)
    return isinstance(item, dict) and isinstance(value, dict) and item.get(match) == value[match]


def _apply(doc: Any, edit: Edit, file: str) -> None:
    parent_path, last = edit.path[:-1], edit.path[-1]
    if edit.op == "set":
        parent = _walk(doc, parent_path, True, file)
        if isinstance(parent, CommentedMap) and isinstance(last, str):
            _put(parent, last, edit.value)
        elif isinstance(parent, CommentedSeq) and isinstance(last, int) and last < len(parent):
            parent[last] = _new(edit.value, parent[last])
        else:
            raise AdoptError(f"{file}: cannot set {'.'.join(map(str, edit.path))}")
        return
    if edit.op == "delete":
        parent = _walk(doc, parent_path, False, file)
        if isinstance(parent, CommentedMap) and last in parent:
            _delete(parent, str(last))
        return
    target = _walk(doc, edit.path, edit.op == "append", file)
    if target is None:
        return
    if isinstance(target, CommentedMap) and not target and edit.op == "append":
        parent = _walk(doc, parent_path, False, file)
        parent[last] = target = CommentedSeq()
    if not isinstance(target, CommentedSeq):
        raise AdoptError(f"{file}: {'.'.join(map(str, edit.path))} is not a list")
    if edit.op == "append":
        if any(_matches(item, edit.value, edit.match) for item in target):
            return
        _block(target)
        rest = _take_trailing(target)
        target.append(_new(edit.value, target[-1] if target else None))
        _give_trailing(target, rest)
        return
    for index in reversed(range(len(target))):
        if _matches(target[index], edit.value, edit.match):
            _remove_item(target, index)


def _delete(mapping: CommentedMap, key: str) -> None:
    keys = list(mapping)
    rest = _take_trailing(mapping[key]) if mapping[key] else ""
    if not rest:
        entry = mapping.ca.items.get(key)
        token = entry[2] if entry and len(entry) > 2 else None
        if isinstance(token, CommentToken):
            rest = str(token.value).partition("\n")[2]
    del mapping[key]
    mapping.ca.items.pop(key, None)
    position = keys.index(key)
    if position > 0:
        before = keys[position - 1]
        slot_owner = mapping[before]
        if _last_slot(slot_owner) is None:
            entry = mapping.ca.items.setdefault(before, [None, None, None, None])
            token = entry[2]
            if isinstance(token, CommentToken):
                token.value = str(token.value).rstrip("\n") + "\n" + rest
            elif rest:
                entry[2] = CommentToken("\n" + rest, CommentMark(0), None)
        else:
            _give_trailing(slot_owner, rest)


def _remove_item(seq: CommentedSeq, index: int) -> None:
    rest = _take_trailing(seq[index])
    del seq[index]
    if index > 0:
        _give_trailing(seq[index - 1], rest)


def apply_edits(text: str, edits: Sequence[Edit], file: str) -> str:
    """`text` with `edits` made; the same text when they change nothing."""
    yaml = _yaml(text)
    try:
        doc = yaml.load(text)
    except YAMLError as exc:
        why = " ".join(str(exc).split())  # one line, whatever the parser said
        raise AdoptError(f"{file}: not YAML that can be edited ({why}); edit it by hand") from None
    if not isinstance(doc, CommentedMap):
        raise AdoptError(f"{file}: not a YAML mapping")
    _keep_anchors(doc)
    before = _dump(yaml, doc)
    for edit in edits:
        _apply(doc, edit, file)
    after = _dump(yaml, doc)
    # what the loader reproduces unchanged stays byte for byte as the file has it
    if after == before:
        return text
    _check_read_back(after, edits, file)
    return after


def _at(doc: Any, path: Path) -> tuple[bool, Any]:
    for key in path:
        in_list = isinstance(doc, list) and isinstance(key, int) and 0 <= key < len(doc)
        if not in_list and not (isinstance(doc, dict) and key in doc):
            return False, None
        doc = doc[key]
    return True, doc


def _check_read_back(text: str, edits: Sequence[Edit], file: str) -> None:
    """Every set or appended value reads back as it was given, type included."""
    (doc,) = load_all(text) or [None]
    for edit in edits:
        found, value = _at(doc, edit.path)
        if edit.op == "set":
            held = found and same_data(value, edit.value)
        elif edit.op == "append":
            items = value if isinstance(value, list) else []
            held = any(
                same_data(i.get(edit.match), edit.value[edit.match])
                if edit.match and isinstance(i, dict) and isinstance(edit.value, dict)
                else same_data(i, edit.value)
                for i in items
            )
        else:
            continue
        if not held:
            where = ".".join(str(p) for p in edit.path)
            raise AdoptError(
                f"{file}: {where} would not read back as the live value; edit it by hand"
            )


def _dump(yaml: YAML, doc: Any) -> str:
    out = io.StringIO()
    yaml.dump(doc, out)
    return out.getvalue()
