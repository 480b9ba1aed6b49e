"""YAML at the edges of every product: marked loading of hand-written files (the line of every
path, for errors that name file:line), deterministic dumping of output, plain multi-document loads
(`documents`: every YAML read outside this module goes through it or `load_marked`).

Marked loading refuses what is not plain data (anchors and aliases, merge keys, tags, duplicate
keys, deep nesting, several documents) with a YamlError naming the line; each product turns it
into its own error (the renderer: a ProfileError Problem, the same one line).
libyaml (CSafeLoader/CSafeDumper) is required: the pure-Python classes are 5-7x slower and give the
same result.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from kubedata.errors import YamlError
from kubedata.yaml_bombs import bomb_problem
from kubedata.yaml_lib import yaml
from kubedata.yaml_scalars import escaped_only, plain_is_string

__all__ = [
    "Marks",
    "Path",
    "documents",
    "dump_all",
    "dump_yaml",
    "load_all",
    "load_marked",
    "nearest_line",
]

Path = tuple[str | int, ...]
Marks = dict[Path, int]
"""Line (1-based) where each path is written: the key line for mapping entries."""

if not getattr(yaml, "__with_libyaml__", False):  # pragma: no cover - depends on the wheel
    raise ImportError("PyYAML without libyaml: reinstall pyyaml from a binary wheel")

_Loader = yaml.CSafeLoader
_PLAIN_COLLECTIONS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")


_STR, _INT, _BOOL, _NULL = (f"tag:yaml.org,2002:{t}" for t in ("str", "int", "bool", "null"))
_MAP, _SEQ = _PLAIN_COLLECTIONS


@functools.lru_cache(maxsize=1 << 16)
def _str_style(text: str) -> str | None:
    """Strings a YAML 1.1 or 1.2 reader would take for something else are quoted (see
    yaml_scalars); PyYAML alone quotes only what YAML 1.1 resolves (not `1e3`, `0o12`, `y`)."""
    if escaped_only(text):  # NEL, LS, PS: line breaks to YAML 1.1, not to 1.2
        return '"'
    # the emitter picks "..." itself when '...' cannot hold the text
    return None if plain_is_string(text) else "'"


@functools.lru_cache(maxsize=1 << 16)
def _resolve_scalar(value: str, implicit: tuple[bool, bool]) -> str:
    return str(_RESOLVER.resolve(yaml.ScalarNode, value, implicit))  # type: ignore[no-untyped-call]


_RESOLVER = yaml.resolver.Resolver()


class _Dumper(yaml.CSafeDumper):
    """PyYAML's safe dumper with the string styles of _str_style, and faster: plain data (dict,
    list, str, int, bool, None) becomes nodes without PyYAML's generic per-value dispatch, and
    the tag of each scalar, which its emitter asks twice, is remembered. The nodes are the ones
    PyYAML's own representer makes (an object met twice is one node: an anchor and an alias);
    anything else goes through PyYAML's representer (tests/kubedata/test_yaml_io.py)."""

    def represent_data(self, data: Any) -> yaml.Node:
        kind = type(data)
        if kind is str:
            return yaml.ScalarNode(_STR, data, style=_str_style(data))
        if kind is dict or kind is list:
            known: yaml.Node | None = self.represented_objects.get(id(data))
            if known is not None:
                return known
            self.object_keeper.append(data)
            node: yaml.Node
            if kind is dict:
                pairs: list[tuple[yaml.Node, yaml.Node]] = []
                node = yaml.MappingNode(_MAP, pairs, flow_style=False)
                self.represented_objects[id(data)] = node
                pairs += [(self.represent_data(k), self.represent_data(v)) for k, v in data.items()]
            else:
                items: list[yaml.Node] = []
                node = yaml.SequenceNode(_SEQ, items, flow_style=False)
                self.represented_objects[id(data)] = node
                items += [self.represent_data(item) for item in data]
            return node
        if kind is int:
            return yaml.ScalarNode(_INT, str(data))
        if kind is bool:
            return yaml.ScalarNode(_BOOL, "true" if data else "false")
        if data is None:
            return yaml.ScalarNode(_NULL, "null")
        return super().represent_data(data)

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and not self.yaml_path_resolvers:
            return _resolve_scalar(value, tuple(implicit))
        return super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]


def _represent_str(dumper: _Dumper, text: str) -> yaml.ScalarNode:
    return dumper.represent_scalar(_STR, text, style=_str_style(text))


_Dumper.add_representer(str, _represent_str)
MAX_DEPTH = 64
"""Nesting deeper than this is no profile (the deepest path of a profile is six levels)."""


class _Builder:
    """Turns a composed node graph into plain values, recording lines and refusing aliases."""

    def __init__(self, file: str):
        self.file = file
        self.marks: Marks = {}
        self.seen: set[int] = set()
        self.scalars = yaml.constructor.SafeConstructor()

    def fail(self, node: yaml.Node, message: str) -> YamlError:
        return YamlError(self.file, node.start_mark.line + 1, message)

    def build(self, node: yaml.Node, path: Path) -> Any:
        # A node reached twice is an alias: refusing them makes "billion laughs" impossible.
        if id(node) in self.seen:
            raise self.fail(node, "YAML anchors and aliases are not allowed; write the value out")
        self.seen.add(id(node))
        self.marks.setdefault(path, node.start_mark.line + 1)
        if len(path) > MAX_DEPTH:
            raise self.fail(node, f"nested more than {MAX_DEPTH} levels deep; flatten the value")
        if not isinstance(node, yaml.ScalarNode) and node.tag not in _PLAIN_COLLECTIONS:
            raise self._tagged(node)
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    raise self.fail(key_node, "mapping keys must be plain strings")
                key = str(key_node.value)
                if key == "<<":
                    raise self.fail(key_node, "YAML merge keys (<<) are not allowed")
                if key in out:
                    raise self.fail(key_node, f'duplicate key "{key}"; keep one of them')
                self.marks[(*path, key)] = key_node.start_mark.line + 1
                out[key] = self.build(value_node, (*path, key))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        if node.tag == _STR:  # most scalars: what SafeConstructor would give, without its dispatch
            return node.value
        try:
            return self.scalars.construct_object(node)
        except (yaml.YAMLError, ValueError):
            # an explicit tag (!!python/..., !foo, !!int x...) that plain YAML data cannot take
            raise self._tagged(node) from None

    def _tagged(self, node: yaml.Node) -> YamlError:
        tag = node.tag.replace("tag:yaml.org,2002:", "!!")
        return self.fail(node, f'cannot read the value tagged "{tag}"; remove the tag')


def load_marked(text: str, file: str) -> tuple[Any, Marks]:
    """Load one YAML document, keeping the line of every path; YamlError names file and line."""
    try:
        docs = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        problem = exc.problem or "invalid YAML"
        context = exc.context_mark
        if exc.context and context and context.line + 1 != line:
            problem += f" ({exc.context} that starts on line {context.line + 1})"
        raise YamlError(file, line, f"YAML syntax error: {problem}") from None
    except yaml.reader.ReaderError as exc:
        # libyaml reads the text as UTF-8: its position counts bytes
        line = text.encode("utf-8", "surrogatepass")[: exc.position].count(b"\n") + 1
        char = f"#x{exc.character:04x}" if isinstance(exc.character, int) else repr(exc.character)
        message = f"YAML syntax error: unacceptable character {char}: {exc.reason}"
        raise YamlError(file, line, message) from None
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise YamlError(file, 0, f"YAML error: {first}") from None
    # A document holding nothing (or only null) is as good as no document.
    docs = [d for d in docs if d is not None and d.tag != "tag:yaml.org,2002:null"]
    if not docs:
        raise YamlError(file, 0, "the file is empty; it must hold one document")
    if len(docs) > 1:
        raise YamlError(file, docs[1].start_mark.line + 1, "more than one YAML document; keep one")
    builder = _Builder(file)
    return builder.build(docs[0], ()), builder.marks


def nearest_line(marks: Marks, path: Path, missing: int = 1) -> int:
    """Line of `path`, or of its nearest written ancestor (the document's own line included)."""
    while path and path not in marks:
        path = path[:-1]
    return marks.get(path, missing)


def dump_yaml(obj: Any) -> str:
    """One document, keys in insertion order: the same input gives the same bytes.

    (The fast path of _Dumper assumes these settings: keys unsorted, block style.)"""
    text: str = yaml.dump(
        obj,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=4096,
    )
    return text


def dump_all(objs: list[Any]) -> str:
    """Multi-document YAML, '---' between documents."""
    return "---\n".join(dump_yaml(o) for o in objs)


def documents(text: str | bytes, file: str, *, guarded: bool = False) -> Iterator[tuple[int, Any]]:
    """(first line, data) of each document of a multi-document YAML text, empty ones (None)
    included, as PyYAML's safe loader reads them (anchors allowed).

    A text that is not YAML is a YamlError naming `file`, the line and "not valid YAML (the
    parser's complaint)", never the offending line itself: it may hold a token. `guarded` also
    refuses a document nested too deep or whose aliases expand too far (kubedata.yaml_bombs),
    for text from outside.
    """
    loader = _Loader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:  # check_node said there is one
                break
            if guarded and (bomb := bomb_problem(node)):
                raise YamlError(file, bomb[0], bomb[1])
            yield node.start_mark.line + 1, loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        raise YamlError(file, line, f"not valid YAML ({exc.problem or exc.context})") from None
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise YamlError(file, 0, f"not valid YAML ({first})") from None
    finally:
        loader.dispose()


def load_all(text: str, file: str = "<yaml>") -> list[Any]:
    """Every non-empty document of a multi-document YAML text (YamlError as `documents`)."""
    return [d for _, d in documents(text, file) if d is not None]
