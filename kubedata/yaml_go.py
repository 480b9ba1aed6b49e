"""YAML as kustomize prints it, byte for byte: sigs.k8s.io/yaml's Marshal of JSON data.

kustomize writes each resource as JSON, reads that back with go-yaml v2 and prints it with go-yaml
v2's emitter (a port of libyaml): keys in go-yaml's "natural" order (digit runs compare as numbers,
other characters before letters), sequences not indented under their key, a string quoted
"..." when plain it would read as another type (YAML 1.1: yes, on, 010, 1:20, 2026-01-02...),
'...' when it cannot be plain, a literal block (|, |-) when it holds line breaks, and plain or
quoted strings folded at a space past column 80.

Only what the tests check against kustomize's own output is written (tests/kubedata/
test_yaml_go.py): mappings with ASCII keys, lists, strings of printable ASCII and newlines, ints
of up to 53 bits, booleans, null. Anything else (a float, a tab, non-ASCII text, a string that
would be folded in quotes...) raises NotGoYaml; the caller then asks kustomize itself.
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Mapping
from typing import Any

from kubedata.errors import NotGoYaml
from kubedata.yaml_scalars import plain_is_string

__all__ = ["dump_go", "go_key_less"]

_WIDTH = 80
"""go-yaml v2's best_width: a plain or quoted scalar breaks at a space past this column."""
_MAX_INT = 1 << 53
"""JSON numbers may pass through float64 inside kustomize: larger ints are left to it."""
_MAX_KEY = 100
"""libyaml writes a key over 128 characters as a complex key (`? key`); not done here."""
_PRINTABLE = re.compile(r"[\x20-\x7e\n]*")
# go-yaml v2's resolve(): strings that read as null, bool, int, float, timestamp or merge when
# plain (its table of words, then ParseInt/ParseFloat after removing "_"), and base-60 floats.
_WORDS = frozenset(
    " ".join(
        [
            "y Y yes Yes YES true True TRUE on On ON n N no No NO false False FALSE off Off OFF",
            "~ null Null NULL .nan .NaN .NAN .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF",
        ]
    ).split(" ")
)
_INT = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_DOT_FLOAT = re.compile(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?")
_DATE = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}")
_BASE60 = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")
_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")


def _not_a_string(s: str) -> bool:
    """Whether go-yaml v2 reads plain `s` as something other than a string."""
    if s == "" or s in _WORDS or _BASE60.fullmatch(s):
        return True
    first = s[0]
    if first == ".":
        return _DOT_FLOAT.fullmatch(s) is not None
    if not (first.isdigit() or first in "+-"):
        return False
    if s[:4].isdigit() and s[4:5] == "-":  # its timestamp formats all start YYYY-
        if _DATE.fullmatch(s):
            try:  # Go's time.Parse checks the month and the day too
                datetime.date(*map(int, s.split("-")))
            except ValueError:
                return False
            return True
        raise NotGoYaml(f"a string that may read as a timestamp: {s!r}")
    plain = s.replace("_", "")
    if _INT.fullmatch(plain):
        value = int(plain, 8) if _octal(plain) else int(plain, 0)
        if abs(value) >= 1 << 63:  # out of ParseInt's range: its later fallbacks are not copied
            raise NotGoYaml(f"an int-like string out of range: {s!r}")
        return True
    if _FLOAT.fullmatch(plain):
        if abs(float(plain)) == float("inf") or "e" in plain.lower():
            raise NotGoYaml(f"a float-like string with an exponent: {s!r}")
        return True
    return False


def _octal(plain: str) -> bool:
    """Go's "0755" (base 0, a leading zero): octal, which Python's int(x, 0) refuses."""
    digits = plain.lstrip("+-")
    return len(digits) > 1 and digits[0] == "0" and digits[1].isdigit()


def _plain_allowed(s: str) -> bool:
    """libyaml's analysis, for one-line printable ASCII: may `s` be written plain in block
    context (no leading or trailing space, no indicator where it would start a token)."""
    if s[0] == " " or s[-1] == " " or s[:3] in ("---", "..."):
        return False
    first, second = s[0], s[1:2]
    if first in _FIRST_INDICATORS or (first in "?:-" and second in ("", " ")):
        return False
    return ": " not in s and not s.endswith(":") and " #" not in s


@functools.lru_cache(maxsize=1 << 16)
def _string(s: str) -> tuple[str, bool]:
    """A one-line string's token, and whether it was written plain (else quoted)."""
    if not _PRINTABLE.fullmatch(s) or "\n" in s:
        raise NotGoYaml(f"a string yaml_go does not write: {s[:40]!r}")
    if _not_a_string(s):
        if plain_is_string(s):
            # The data reaches kustomize as dump_yaml's text, which writes this string plain:
            # go-yaml reads it as another type (0B1, 2026-1-2) and kustomize prints that.
            raise NotGoYaml(f"a string kustomize reads as another type: {s!r}")
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"', False
    if _plain_allowed(s):
        return s, True
    return "'" + s.replace("'", "''") + "'", False


@functools.lru_cache(maxsize=1 << 12)
def _key(k: str) -> str:
    if not isinstance(k, str) or len(k) > _MAX_KEY:
        raise NotGoYaml(f"a key yaml_go does not write: {str(k)[:40]!r}")
    return _string(k)[0]


def go_key_less(a: str, b: str) -> bool:
    """go-yaml v2's order of two string keys (its sorter.go keyList.Less), for ASCII keys."""
    for i in range(min(len(a), len(b))):
        ca, cb = a[i], b[i]
        if ca == cb:
            continue
        la, lb = ca.isalpha(), cb.isalpha()
        if la and lb:
            return ca < cb
        if la or lb:
            return lb
        an = bn = 0
        if ca == "0" or cb == "0":
            j = i - 1
            while j >= 0 and a[j].isdigit():
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai, bi = i, i
        while ai < len(a) and a[ai].isdigit():
            an = an * 10 + ord(a[ai]) - 48
            ai += 1
        while bi < len(b) and b[bi].isdigit():
            bn = bn * 10 + ord(b[bi]) - 48
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return ca < cb
    return len(a) < len(b)


def _cmp(a: str, b: str) -> int:
    return -1 if go_key_less(a, b) else 1 if go_key_less(b, a) else 0


_LETTERS = re.compile(r"[A-Za-z]*")
_DIGIT_RUN = re.compile(r"[0-9]{19,}")


@functools.lru_cache(maxsize=1 << 12)
def _sorted_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    for k in keys:
        if not isinstance(k, str) or not k.isascii() or _DIGIT_RUN.search(k):
            # go-yaml's digit runs overflow int64 past 18 digits
            raise NotGoYaml(f"a key yaml_go does not write: {str(k)[:40]!r}")
    if all(_LETTERS.fullmatch(k) for k in keys):  # letters only: code point order
        return tuple(sorted(keys))
    out = sorted(keys, key=functools.cmp_to_key(_cmp))
    # The order is not transitive over some keys (10 < 1x < 3_a < 10): then Go's sort.Sort gives
    # what its algorithm gives. Only a set the order ranks consistently is sorted here.
    for i, a in enumerate(out):
        for b in out[i + 1 :]:
            if not go_key_less(a, b) or go_key_less(b, a):
                raise NotGoYaml(f"keys go-yaml does not order consistently: {a!r}, {b!r}")
    return tuple(out)


def _fold(token: str, column: int, indent: int, plain: bool) -> str:
    """libyaml's line breaking: a space past column 80, not after a space nor before one (nor,
    quoted, first or last), becomes a line break and the indentation."""
    if column + len(token) <= _WIDTH or " " not in token:
        return token
    if not plain and (token[0] == '"' or "''" in token):
        raise NotGoYaml(f"a double-quoted string that would be folded: {token[:40]!r}")
    out: list[str] = []
    spaces = False
    last = len(token) - 1
    for i, c in enumerate(token):
        if c == " ":
            breakable = plain or 1 < i < last - 1  # quoted: not the first or last character
            if breakable and not spaces and column > _WIDTH and token[i + 1 : i + 2] != " ":
                out.append("\n" + " " * indent)
                column = indent
            else:
                out.append(c)
                column += 1
            spaces = True
        else:
            out.append(c)
            column += 1
            spaces = False
    return "".join(out)


def _literal(s: str, indent: int) -> str:
    """A string with line breaks as a literal block: `|` with its hints, then the lines."""
    if not _PRINTABLE.fullmatch(s) or " \n" in s or s.endswith(" "):
        raise NotGoYaml(f"a multi-line string yaml_go does not write: {s[:40]!r}")
    if s == "\n" or s.endswith("\n\n"):  # keep chomping (|+) ends the document with "..."
        raise NotGoYaml(f"a multi-line string with trailing blank lines: {s[:40]!r}")
    hints = "|" + ("2" if s[0] in " \n" else "") + ("" if s.endswith("\n") else "-")
    pad = " " * indent
    lines = s[:-1].split("\n") if s.endswith("\n") else s.split("\n")
    return hints + "\n" + "".join(pad + line + "\n" if line else "\n" for line in lines)


def _scalar(value: Any, column: int, indent: int) -> str:
    """The text after `key: ` or `- ` (starting at `column`), with its line break."""
    if isinstance(value, str):
        if "\n" in value:
            return _literal(value, indent)
        token, plain = _string(value)
        return _fold(token, column, indent, plain) + "\n"
    if value is None:
        return "null\n"
    if value is True:
        return "true\n"
    if value is False:
        return "false\n"
    if type(value) is int and -_MAX_INT < value < _MAX_INT:
        return f"{value}\n"
    raise NotGoYaml(f"a value yaml_go does not write: {type(value).__name__}")


def _mapping(obj: Mapping[str, Any], indent: int, out: list[str], inline: bool) -> None:
    pad = " " * indent
    for k in _sorted_keys(tuple(obj)):
        key = _key(k)
        out.append(key if inline else pad + key)
        inline = False
        value = obj[k]
        if isinstance(value, dict):
            if value:
                out.append(":\n")
                _mapping(value, indent + 2, out, False)
            else:
                out.append(": {}\n")
        elif isinstance(value, list):
            if value:
                out.append(":\n")
                _sequence(value, indent, out, False)  # go-yaml v2: not indented under the key
            else:
                out.append(": []\n")
        else:
            out.append(": " + _scalar(value, indent + len(key) + 2, indent + 2))


def _sequence(items: list[Any], indent: int, out: list[str], inline: bool) -> None:
    pad = " " * indent
    for item in items:
        out.append("- " if inline else pad + "- ")
        inline = False
        if isinstance(item, dict):
            if item:
                _mapping(item, indent + 2, out, True)
            else:
                out.append("{}\n")
        elif isinstance(item, list):
            if item:
                _sequence(item, indent + 2, out, True)
            else:
                out.append("[]\n")
        else:
            out.append(_scalar(item, indent + 2, indent + 2))


def dump_go(obj: Mapping[str, Any]) -> str:
    """One resource as kustomize prints it; NotGoYaml for what this module does not write."""
    out: list[str] = []
    _mapping(obj, 0, out, False)
    return "".join(out) if out else "{}\n"
